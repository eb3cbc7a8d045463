"""Raw calls of every task-id operation on each of the server's surfaces, keeping the whole answer.

A :class:`Surface` is one way in: the three v1.0 bindings, the three v0.3
ones, the v0.1 JSON-RPC methods and the tutorial's ``/tasks/...`` routes. Each
lists its :attr:`~Surface.ops` — every operation naming a task id of ``get``,
``cancel``, ``subscribe``, ``send`` and ``stream`` (a message continuing the
task, or creating it under that id on the legacy routes), ``send_path``
(``/tasks/{id}/send``), ``refer`` (a new message naming it in
``referenceTaskIds``), ``push_set``, ``push_get``, ``push_list``,
``push_delete`` — and calls one with :meth:`~Surface.call`, which returns an
:class:`Answer`: the status (HTTP status or gRPC code name), the headers or
metadata, and the bytes of the body (an SSE answer: its first event; a gRPC
error: details and every trailer, ``grpc-status-details-bin`` included; a gRPC
reply: its ProtoJSON). :meth:`Answer.shape` is what two answers are compared
by once the probed id is replaced, and the values the server mints per call
(uuids, timestamps) are.

:meth:`Surface.follow` opens a stream and keeps reading it (:class:`Follower`):
what the owner holds open while a stranger probes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import aiohttp
import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03
from a2a_grpc.types import pb
from tests.auth.wire import _rest_path

HOOK = "http://127.0.0.1:9/hook"
CONFIG_ID = "cfg-1"
TIMEOUT = 10.0
#: Headers whose value differs from one call to the next whatever the call.
_VOLATILE = frozenset({"date", "content-length"})
_TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_UUID = re.compile(rb"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")


def clean(data: bytes, task_id: str) -> bytes:
    """``data`` with ``task_id`` as ``ID``, then every other uuid as ``UUID``
    and every timestamp as ``TS`` (values the server mints per call)."""
    data = data.replace(task_id.encode(), b"ID")
    return _TIMESTAMP.sub(b"TS", _UUID.sub(b"UUID", data))


@dataclass
class Answer:
    """What came back: ``status`` is the HTTP status or the gRPC code name;
    ``body`` the bytes (see the module doc); ``message`` a gRPC reply's proto."""

    ok: bool
    status: int | str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    message: Any = None

    def shape(self, task_id: str) -> tuple[int | str, dict[str, str], bytes]:
        """(status, headers, body), each :func:`clean` of ``task_id``."""
        headers = {
            k: clean(v.encode(), task_id).decode() for k, v in self.headers.items() if k not in _VOLATILE
        }
        return self.status, headers, clean(self.body, task_id)

    def json(self) -> Any:
        return json.loads(self.body)


class Follower:
    """A stream being read in the background: ``events`` (the raw bytes of each
    event, as they came), ``ended`` once the stream is over, ``error`` if it
    ended with one."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[bytes] = []
        self.ended = False
        self.error: str | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._cleanup: Any = None

    def start(self, reader: Any, cleanup: Any) -> None:
        self._cleanup = cleanup
        self._task = asyncio.get_running_loop().create_task(self._run(reader))

    async def _run(self, reader: Any) -> None:
        try:
            async for event in reader:
                self.events.append(event)
                self._changed.set()
        except Exception as exc:  # the stream broke: kept for the assertion that reads it
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ended = True
            self._changed.set()

    def saw(self, marker: str) -> bool:
        return any(marker.encode() in event for event in self.events)

    async def until(self, marker: str, timeout: float = TIMEOUT) -> bool:
        """Waits until an event holding ``marker`` came (True) or the stream
        ended without one (False); fails after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                if self.saw(marker):
                    return True
                if self.ended:
                    return False
                self._changed.clear()
                await self._changed.wait()

    async def end(self, timeout: float = TIMEOUT) -> None:
        """Waits for the stream's end."""
        assert self._task is not None
        await asyncio.wait_for(asyncio.shield(self._task), timeout)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self._cleanup is not None:
            await self._cleanup()

    def __repr__(self) -> str:
        state = f"ended ({self.error})" if self.ended else "open"
        return f"<{self.name}: {state}, {len(self.events)} events>"


class Transport:
    """Raw HTTP and gRPC calls to one server: ``http`` base URL, ``grpc`` target."""

    def __init__(self, http: str, grpc_target: str, hook: str = HOOK) -> None:
        self.http = http
        self.hook = hook  # the webhook URL push configs name
        self.channel = grpc.aio.insecure_channel(grpc_target)
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_read=TIMEOUT))

    async def close(self) -> None:
        await self.session.close()
        await self.channel.close()

    # ------------------------------------------------------------------ HTTP
    async def http_call(
        self, verb: str, path: str, body: Any, headers: Mapping[str, str], *, stream: bool
    ) -> Answer:
        """One HTTP call; an SSE answer is read up to its first event."""
        hdrs = {**headers, "Accept": "text/event-stream"} if stream else dict(headers)
        async with asyncio.timeout(TIMEOUT):
            async with self.session.request(verb, self.http + path, json=body, headers=hdrs) as resp:
                out = {k.lower(): v for k, v in resp.headers.items()}
                if resp.content_type == "text/event-stream":
                    data = b""
                    async for line in resp.content:
                        if line.startswith(b"data:"):
                            data = line[5:].strip()
                            break
                else:
                    data = await resp.read()
        ok = resp.status == 200 and not _is_error(data)
        return Answer(ok, resp.status, out, data)

    async def http_follow(
        self, name: str, verb: str, path: str, body: Any, headers: Mapping[str, str]
    ) -> Follower:
        """An SSE stream read in the background, one event per ``data:`` line."""
        hdrs = {**headers, "Accept": "text/event-stream"}
        resp = await self.session.request(verb, self.http + path, json=body, headers=hdrs)
        if resp.content_type != "text/event-stream":
            text = await resp.text()
            resp.release()
            raise AssertionError(f"{name}: not a stream: {resp.status} {text}")

        async def events() -> Any:
            async for line in resp.content:
                if line.startswith(b"data:"):
                    data = line[5:].strip()
                    if _is_error(data):
                        raise RuntimeError(data.decode())
                    yield data

        async def cleanup() -> None:
            resp.close()

        follower = Follower(name)
        follower.start(events(), cleanup)
        return follower

    # ------------------------------------------------------------------ gRPC
    def _method(self, service: Any, rpc: str) -> tuple[str, Any, bool]:
        method = service.methods_by_name[rpc]
        out = message_factory.GetMessageClass(method.output_type)
        return f"/{service.full_name}/{rpc}", out, method.server_streaming

    async def grpc_call(self, service: Any, rpc: str, request: Message, headers: Mapping[str, str]) -> Answer:
        """One gRPC call (a stream: up to its first message) with every trailer kept."""
        path, out, streams = self._method(service, rpc)
        md = tuple((k.lower(), v) for k, v in headers.items())
        ser = _serialize
        call: Any
        if streams:
            call = self.channel.unary_stream(path, ser, out.FromString)(request, metadata=md, timeout=TIMEOUT)
        else:
            call = self.channel.unary_unary(path, ser, out.FromString)(request, metadata=md, timeout=TIMEOUT)
        try:
            if streams:
                first = None
                async for event in call:
                    first = event
                    break
                call.cancel()
            else:
                first = await call
        except grpc.aio.AioRpcError as err:
            lines = [(err.details() or "").encode()]
            for key, value in sorted(err.trailing_metadata() or ()):
                lines.append(key.encode() + b"=" + (value if isinstance(value, bytes) else value.encode()))
            initial = {k: v for k, v in (err.initial_metadata() or ()) if isinstance(v, str)}
            return Answer(False, err.code().name, initial, b"\n".join(lines))
        initial = {k: v for k, v in (await call.initial_metadata() or ()) if isinstance(v, str)}
        # ProtoJSON, not the wire bytes: timestamps then read as text, like HTTP's.
        body = json_format.MessageToJson(first, indent=None).encode() if first is not None else b""
        return Answer(True, "OK", initial, body, first)

    async def grpc_follow(
        self, name: str, service: Any, rpc: str, request: Message, headers: Mapping[str, str]
    ) -> Follower:
        path, out, streams = self._method(service, rpc)
        assert streams, rpc
        md = tuple((k.lower(), v) for k, v in headers.items())
        call = self.channel.unary_stream(path, _serialize, out.FromString)(request, metadata=md)

        async def events() -> Any:
            async for event in call:
                yield event.SerializeToString()

        async def cleanup() -> None:
            call.cancel()

        follower = Follower(name)
        follower.start(events(), cleanup)
        return follower


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _is_error(data: bytes) -> bool:
    """Whether a JSON body is an error: JSON-RPC ``error``, the REST error
    object or the tutorial's ``detail``."""
    try:
        value = json.loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and ("error" in value or "detail" in value)


# --------------------------------------------------------------------------- surfaces
V1_SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
V03_SERVICE = v03.DESCRIPTOR.services_by_name["A2AService"]
V1_HEADERS = {"A2A-Version": "1.0"}


class Surface:
    """One way in. ``dialect`` is the one its owner creates tasks in ("1.0",
    "0.3" or "0.1": the legacy paths answer a task in the dialect it was
    created in); ``creates`` the operations that create a task under a
    client-chosen id when it is unknown (legacy digest C3)."""

    name: ClassVar[str]
    dialect: ClassVar[str]
    ops: ClassVar[tuple[str, ...]]
    creates: ClassVar[frozenset[str]] = frozenset()
    #: Operations that answer a stream (``follow`` opens them).
    streams: ClassVar[frozenset[str]] = frozenset({"subscribe", "stream"})

    def __init__(self, transport: Transport) -> None:
        self.t = transport

    @property
    def succeeds(self) -> frozenset[str]:
        """Operations a random id succeeds on: the creates, and a new message
        naming the id in ``referenceTaskIds`` (the caller's own new task)."""
        return self.creates | {"refer"}

    def fresh_id(self) -> str:
        """A random task id of the shape this surface's tasks have."""
        return str(uuid.uuid4())

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        """``op`` on ``task_id`` as the caller of ``headers``; ``text`` is the
        message of the operations that send one."""
        raise NotImplementedError

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        """``op`` (one of :attr:`streams`) on ``task_id``, read in the background."""
        raise NotImplementedError

    def not_found(self, answer: Answer) -> bool:
        """Whether ``answer`` is this surface's "task not found"."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class V1Grpc(Surface):
    name, dialect = "v1.0 gRPC", "1.0"
    ops = (
        "get",
        "cancel",
        "subscribe",
        "send",
        "stream",
        "refer",
        "push_set",
        "push_get",
        "push_list",
        "push_delete",
    )
    RPCS: ClassVar[dict[str, str]] = {
        "get": "GetTask",
        "refer": "SendMessage",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "push_set": "CreateTaskPushNotificationConfig",
        "push_get": "GetTaskPushNotificationConfig",
        "push_list": "ListTaskPushNotificationConfigs",
        "push_delete": "DeleteTaskPushNotificationConfig",
    }

    def request(self, op: str, task_id: str, text: str) -> Message:
        if op in ("send", "stream"):
            msg = pb.Message(
                role=pb.ROLE_USER, message_id=str(uuid.uuid4()), task_id=task_id, parts=[pb.Part(text=text)]
            )
            return pb.SendMessageRequest(message=msg)
        if op == "refer":
            msg = pb.Message(
                role=pb.ROLE_USER,
                message_id=str(uuid.uuid4()),
                reference_task_ids=[task_id],
                parts=[pb.Part(text=text)],
            )
            return pb.SendMessageRequest(message=msg)
        return {
            "get": lambda: pb.GetTaskRequest(id=task_id),
            "cancel": lambda: pb.CancelTaskRequest(id=task_id),
            "subscribe": lambda: pb.SubscribeToTaskRequest(id=task_id),
            "push_set": lambda: pb.TaskPushNotificationConfig(task_id=task_id, id=CONFIG_ID, url=self.t.hook),
            "push_get": lambda: pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id=CONFIG_ID),
            "push_list": lambda: pb.ListTaskPushNotificationConfigsRequest(task_id=task_id),
            "push_delete": lambda: pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=CONFIG_ID),
        }[op]()

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        request = self.request(op, task_id, text)
        return await self.t.grpc_call(V1_SERVICE, self.RPCS[op], request, {**V1_HEADERS, **headers})

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        request = self.request(op, task_id, text)
        hdrs = {**V1_HEADERS, **headers}
        return await self.t.grpc_follow(f"{self.name} {op}", V1_SERVICE, self.RPCS[op], request, hdrs)

    def not_found(self, answer: Answer) -> bool:
        return answer.status == "NOT_FOUND" and b"TASK_NOT_FOUND" in answer.body


class V1JsonRpc(V1Grpc):
    name = "v1.0 JSON-RPC"

    def envelope(self, op: str, task_id: str, text: str) -> dict[str, Any]:
        params = json_format.MessageToDict(self.request(op, task_id, text))
        return {"jsonrpc": "2.0", "id": 1, "method": self.RPCS[op], "params": params}

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        body = self.envelope(op, task_id, text)
        hdrs = {**V1_HEADERS, **headers}
        return await self.t.http_call("POST", "/", body, hdrs, stream=op in self.streams)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        body = self.envelope(op, task_id, text)
        return await self.t.http_follow(f"{self.name} {op}", "POST", "/", body, {**V1_HEADERS, **headers})

    def not_found(self, answer: Answer) -> bool:
        error = _json(answer).get("error") or {}
        return answer.status == 200 and error.get("code") == -32001


class V1Rest(V1Grpc):
    name = "v1.0 HTTP+JSON"

    def route(self, op: str, task_id: str, text: str) -> tuple[str, str, Any]:
        request = self.request(op, task_id, text)
        verb, path, with_body = _rest_path(self.RPCS[op], request)
        return verb, path, json_format.MessageToDict(request) if with_body else None

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        verb, path, body = self.route(op, task_id, text)
        hdrs = {**V1_HEADERS, **headers}
        return await self.t.http_call(verb, path, body, hdrs, stream=op in self.streams)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        verb, path, body = self.route(op, task_id, text)
        return await self.t.http_follow(f"{self.name} {op}", verb, path, body, {**V1_HEADERS, **headers})

    def not_found(self, answer: Answer) -> bool:
        return answer.status == 404 and b"TASK_NOT_FOUND" in answer.body


def v03_message(task_id: str, text: str) -> dict[str, Any]:
    """A v0.3 JSON-RPC user message (``taskId`` when ``task_id``)."""
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    return message


class V03JsonRpc(Surface):
    """v0.3 JSON-RPC at the JSON-RPC URL (no ``A2A-Version``: 0.3)."""

    name, dialect = "v0.3 JSON-RPC", "0.3"
    ops = V1Grpc.ops
    METHODS: ClassVar[dict[str, str]] = {
        "get": "tasks/get",
        "refer": "message/send",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
        "send": "message/send",
        "stream": "message/stream",
        "push_set": "tasks/pushNotificationConfig/set",
        "push_get": "tasks/pushNotificationConfig/get",
        "push_list": "tasks/pushNotificationConfig/list",
        "push_delete": "tasks/pushNotificationConfig/delete",
    }

    def params(self, op: str, task_id: str, text: str) -> dict[str, Any]:
        if op in ("send", "stream"):
            return {"message": v03_message(task_id, text), "configuration": {"blocking": True}}
        if op == "refer":
            message = {**v03_message("", text), "referenceTaskIds": [task_id]}
            return {"message": message, "configuration": {"blocking": True}}
        if op == "push_set":
            return {"taskId": task_id, "pushNotificationConfig": {"id": CONFIG_ID, "url": self.t.hook}}
        if op in ("push_get", "push_delete"):
            return {"id": task_id, "pushNotificationConfigId": CONFIG_ID}
        return {"id": task_id}

    def envelope(self, op: str, task_id: str, text: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": 1,
            "method": self.METHODS[op],
            "params": self.params(op, task_id, text),
        }

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        body = self.envelope(op, task_id, text)
        return await self.t.http_call("POST", "/", body, headers, stream=op in self.streams)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        body = self.envelope(op, task_id, text)
        return await self.t.http_follow(f"{self.name} {op}", "POST", "/", body, headers)

    def not_found(self, answer: Answer) -> bool:
        error = _json(answer).get("error") or {}
        return answer.status == 200 and error.get("code") == -32001


def proto03_message(task_id: str, text: str) -> dict[str, Any]:
    """The v0.3 proto's SendMessageRequest (ProtoJSON)."""
    message: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "content": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    return {"message": message, "configuration": {"blocking": True}}


class V03Rest(Surface):
    """v0.3 HTTP+JSON under ``/v1`` (no ``A2A-Version``)."""

    name, dialect = "v0.3 HTTP+JSON", "0.3"
    ops = tuple(op for op in V1Grpc.ops if op != "refer")  # the v0.3 proto's Message has no references

    def route(self, op: str, task_id: str, text: str) -> tuple[str, str, Any]:
        configs = f"/v1/tasks/{task_id}/pushNotificationConfigs"
        return {
            "get": ("GET", f"/v1/tasks/{task_id}", None),
            "cancel": ("POST", f"/v1/tasks/{task_id}:cancel", {}),
            "subscribe": ("GET", f"/v1/tasks/{task_id}:subscribe", None),
            "send": ("POST", "/v1/message:send", proto03_message(task_id, text)),
            "stream": ("POST", "/v1/message:stream", proto03_message(task_id, text)),
            "push_set": ("POST", configs, {"pushNotificationConfig": {"id": CONFIG_ID, "url": self.t.hook}}),
            "push_get": ("GET", f"{configs}/{CONFIG_ID}", None),
            "push_list": ("GET", configs, None),
            "push_delete": ("DELETE", f"{configs}/{CONFIG_ID}", None),
        }[op]

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        verb, path, body = self.route(op, task_id, text)
        return await self.t.http_call(verb, path, body, headers, stream=op in self.streams)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        verb, path, body = self.route(op, task_id, text)
        return await self.t.http_follow(f"{self.name} {op}", verb, path, body, headers)

    def not_found(self, answer: Answer) -> bool:
        return answer.status == 404 and b"TASK_NOT_FOUND" in answer.body


class V03Grpc(Surface):
    """v0.3 gRPC: ``a2a.v1.A2AService`` on the gRPC port."""

    name, dialect = "v0.3 gRPC", "0.3"
    ops = V03Rest.ops
    RPCS: ClassVar[dict[str, str]] = {
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "TaskSubscription",
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "push_set": "CreateTaskPushNotificationConfig",
        "push_get": "GetTaskPushNotificationConfig",
        "push_list": "ListTaskPushNotificationConfig",
        "push_delete": "DeleteTaskPushNotificationConfig",
    }

    def request(self, op: str, task_id: str, text: str) -> Message:
        name = f"tasks/{task_id}"
        if op in ("send", "stream"):
            return json_format.ParseDict(proto03_message(task_id, text), v03.SendMessageRequest())
        config = v03.TaskPushNotificationConfig(name=f"{name}/pushNotificationConfigs/{CONFIG_ID}")
        config.push_notification_config.url = self.t.hook
        return {
            "get": lambda: v03.GetTaskRequest(name=name),
            "cancel": lambda: v03.CancelTaskRequest(name=name),
            "subscribe": lambda: v03.TaskSubscriptionRequest(name=name),
            "push_set": lambda: v03.CreateTaskPushNotificationConfigRequest(
                parent=name, config_id=CONFIG_ID, config=config
            ),
            "push_get": lambda: v03.GetTaskPushNotificationConfigRequest(name=config.name),
            "push_list": lambda: v03.ListTaskPushNotificationConfigRequest(parent=name),
            "push_delete": lambda: v03.DeleteTaskPushNotificationConfigRequest(name=config.name),
        }[op]()

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        return await self.t.grpc_call(V03_SERVICE, self.RPCS[op], self.request(op, task_id, text), headers)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        request = self.request(op, task_id, text)
        return await self.t.grpc_follow(f"{self.name} {op}", V03_SERVICE, self.RPCS[op], request, headers)

    def not_found(self, answer: Answer) -> bool:
        return answer.status == "NOT_FOUND"


def v01_params(task_id: str, text: str) -> dict[str, Any]:
    """v0.1 ``TaskSendParams``: the client-chosen ``id`` and a user message."""
    return {"id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


class V01JsonRpc(Surface):
    """The v0.1 JSON-RPC methods (``tasks/send`` & co.; ``tasks/get``,
    ``tasks/cancel`` and ``tasks/resubscribe`` are also v0.3 names, answered
    in v0.1 for a task created in v0.1)."""

    name, dialect = "v0.1 JSON-RPC", "0.1"
    ops = ("get", "cancel", "subscribe", "send", "stream", "push_set", "push_get")
    creates = frozenset({"send", "stream"})
    METHODS: ClassVar[dict[str, str]] = {
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
        "send": "tasks/send",
        "stream": "tasks/sendSubscribe",
        "push_set": "tasks/pushNotification/set",
        "push_get": "tasks/pushNotification/get",
    }

    def fresh_id(self) -> str:
        return uuid.uuid4().hex

    def params(self, op: str, task_id: str, text: str) -> dict[str, Any]:
        if op in ("send", "stream"):
            return v01_params(task_id, text)
        if op == "push_set":
            return {"id": task_id, "pushNotificationConfig": {"url": self.t.hook}}
        if op == "get":  # with a history: the v0.1 path (the v0.3 method answers without one)
            return {"id": task_id, "historyLength": 2}
        return {"id": task_id}

    def envelope(self, op: str, task_id: str, text: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": 1,
            "method": self.METHODS[op],
            "params": self.params(op, task_id, text),
        }

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        body = self.envelope(op, task_id, text)
        return await self.t.http_call("POST", "/", body, headers, stream=op in self.streams)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        body = self.envelope(op, task_id, text)
        return await self.t.http_follow(f"{self.name} {op}", "POST", "/", body, headers)

    def not_found(self, answer: Answer) -> bool:
        error = _json(answer).get("error") or {}
        return answer.status == 200 and error.get("code") == -32001


class Tutorial(Surface):
    """The tutorial's plain-HTTP routes: ``POST /tasks/send``, ``POST
    /tasks/{id}/send``, ``POST /tasks/sendSubscribe`` (each creates a task
    under a client-chosen id), ``GET /tasks/{id}``, ``POST /tasks/{id}/cancel``."""

    name, dialect = "tutorial /tasks", "0.1"
    ops = ("get", "cancel", "send", "send_path", "stream")
    creates = frozenset({"send", "send_path", "stream"})
    streams = frozenset({"stream"})

    def fresh_id(self) -> str:
        return uuid.uuid4().hex

    def route(self, op: str, task_id: str, text: str) -> tuple[str, str, Any]:
        return {
            "get": ("GET", f"/tasks/{task_id}", None),
            "cancel": ("POST", f"/tasks/{task_id}/cancel", None),
            "send": ("POST", "/tasks/send", v01_params(task_id, text)),
            "send_path": ("POST", f"/tasks/{task_id}/send", v01_params(task_id, text)),
            "stream": ("POST", "/tasks/sendSubscribe", v01_params(task_id, text)),
        }[op]

    async def call(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "ask") -> Answer:
        verb, path, body = self.route(op, task_id, text)
        return await self.t.http_call(verb, path, body, headers, stream=op in self.streams)

    async def follow(self, op: str, task_id: str, headers: Mapping[str, str], text: str = "") -> Follower:
        verb, path, body = self.route(op, task_id, text)
        return await self.t.http_follow(f"{self.name} {op}", verb, path, body, headers)

    def not_found(self, answer: Answer) -> bool:
        return answer.status == 404 and "detail" in _json(answer)


SURFACE_TYPES: tuple[type[Surface], ...] = (
    V1Grpc,
    V1JsonRpc,
    V1Rest,
    V03Grpc,
    V03JsonRpc,
    V03Rest,
    V01JsonRpc,
    Tutorial,
)


def _json(answer: Answer) -> dict[str, Any]:
    try:
        value = json.loads(answer.body)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
