"""Raw calls of every A2A RPC on each binding, keeping the bytes of the answer.

The isolation tests compare the exact error a caller gets for another
caller's task with the one for a random id, so the answer is kept as it came:
for gRPC the status code, message, ``grpc-status-details-bin`` bytes and
``www-authenticate`` trailer; for HTTP the status, headers and body bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp
import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from a2a_grpc.types import pb

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
BINDINGS = ("grpc", "jsonrpc", "rest")


@dataclass
class Reply:
    """What came back: ``status`` is the gRPC code name or the HTTP status."""

    ok: bool
    status: str | int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    message: Any = None

    @property
    def challenge(self) -> str | None:
        return self.headers.get("www-authenticate")

    def reason(self) -> str:
        """The ErrorInfo reason of an error reply."""
        from google.rpc import error_details_pb2, status_pb2

        if isinstance(self.status, str):
            status = status_pb2.Status.FromString(self.body.split(b"\n", 1)[1])
            info = error_details_pb2.ErrorInfo()
            status.details[0].Unpack(info)
            return info.reason
        import json

        data = json.loads(self.body)
        details = data["error"].get("details") or data["error"].get("data")
        return details[0]["reason"]


def _rest_path(rpc: str, req: Any) -> tuple[str, str, bool]:
    """(HTTP method, path, whether the request is the body) of spec §11.3."""
    t = f"/{quote(req.tenant)}" if getattr(req, "tenant", "") else ""
    routes = {
        "SendMessage": ("POST", "/message:send", True),
        "SendStreamingMessage": ("POST", "/message:stream", True),
        "GetTask": ("GET", f"/tasks/{getattr(req, 'id', '')}", False),
        "ListTasks": ("GET", "/tasks", False),
        "CancelTask": ("POST", f"/tasks/{getattr(req, 'id', '')}:cancel", True),
        "SubscribeToTask": ("GET", f"/tasks/{getattr(req, 'id', '')}:subscribe", False),
        "CreateTaskPushNotificationConfig": (
            "POST",
            f"/tasks/{getattr(req, 'task_id', '')}/pushNotificationConfigs",
            True,
        ),
        "GetTaskPushNotificationConfig": (
            "GET",
            f"/tasks/{getattr(req, 'task_id', '')}/pushNotificationConfigs/{getattr(req, 'id', '')}",
            False,
        ),
        "ListTaskPushNotificationConfigs": (
            "GET",
            f"/tasks/{getattr(req, 'task_id', '')}/pushNotificationConfigs",
            False,
        ),
        "DeleteTaskPushNotificationConfig": (
            "DELETE",
            f"/tasks/{getattr(req, 'task_id', '')}/pushNotificationConfigs/{getattr(req, 'id', '')}",
            False,
        ),
        "GetExtendedAgentCard": ("GET", "/extendedAgentCard", False),
    }
    verb, path, body = routes[rpc]
    return verb, t + path, body


class Wire:
    """Raw calls to one server: ``http`` base URL and ``grpc`` target."""

    def __init__(self, http: str, grpc_target: str) -> None:
        self.http = http
        self.channel = grpc.aio.insecure_channel(grpc_target)
        self.session = aiohttp.ClientSession()

    async def close(self) -> None:
        await self.session.close()
        await self.channel.close()

    async def call(
        self, binding: str, rpc: str, request: Message, headers: Mapping[str, str] | None = None
    ) -> Reply:
        hdrs = {"A2A-Version": "1.0", **(headers or {})}
        if binding == "grpc":
            return await self._grpc(rpc, request, hdrs)
        if binding == "jsonrpc":
            return await self._jsonrpc(rpc, request, hdrs)
        return await self._rest(rpc, request, hdrs)

    async def _grpc(self, rpc: str, request: Message, headers: Mapping[str, str]) -> Reply:
        method = SERVICE.methods_by_name[rpc]
        out = message_factory.GetMessageClass(method.output_type)
        path = f"/{SERVICE.full_name}/{rpc}"
        md = tuple((k.lower(), v) for k, v in headers.items())
        try:
            if method.server_streaming:
                call = self.channel.unary_stream(path, lambda m: m.SerializeToString(), out.FromString)
                stream = call(request, metadata=md, timeout=10)
                first = None
                async for event in stream:
                    first = event
                    break
                stream.cancel()
                return Reply(True, "OK", message=first)
            unary = self.channel.unary_unary(path, lambda m: m.SerializeToString(), out.FromString)
            return Reply(True, "OK", message=await unary(request, metadata=md, timeout=10))
        except grpc.aio.AioRpcError as err:
            trailers = {k: v for k, v in (err.trailing_metadata() or ())}
            details = trailers.get("grpc-status-details-bin", b"")
            body = (err.details() or "").encode() + b"\n" + (details if isinstance(details, bytes) else b"")
            headers_out = {k: v for k, v in trailers.items() if isinstance(v, str)}
            return Reply(False, err.code().name, body, headers_out)

    async def _http(self, verb: str, url: str, headers: dict[str, str], body: Any, stream: bool) -> Reply:
        if stream:
            headers = {**headers, "Accept": "text/event-stream"}
        async with self.session.request(verb, url, json=body, headers=headers) as resp:
            hdrs = {k.lower(): v for k, v in resp.headers.items()}
            if resp.content_type == "text/event-stream":
                line = await resp.content.readline()
                return Reply(True, resp.status, line, hdrs)
            data = await resp.read()
        return Reply(resp.status == 200 and b'"error"' not in data[:40], resp.status, data, hdrs)

    async def _jsonrpc(self, rpc: str, request: Message, headers: dict[str, str]) -> Reply:
        envelope = {"jsonrpc": "2.0", "id": 1, "method": rpc, "params": json_format.MessageToDict(request)}
        stream = SERVICE.methods_by_name[rpc].server_streaming
        reply = await self._http("POST", self.http + "/", headers, envelope, stream)
        if reply.ok and reply.status == 200 and b'"error"' in reply.body:
            reply.ok = False
        return reply

    async def _rest(self, rpc: str, request: Message, headers: dict[str, str]) -> Reply:
        verb, path, with_body = _rest_path(rpc, request)
        body = json_format.MessageToDict(request) if with_body else None
        stream = SERVICE.methods_by_name[rpc].server_streaming
        return await self._http(verb, self.http + path, headers, body, stream)
