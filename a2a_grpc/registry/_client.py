"""A client of the agent registry, over gRPC or JSON-RPC.

``RegistryClient("grpc://127.0.0.1:50061")`` (or a bare ``host:port``) calls
AgentRegistryService over gRPC; ``RegistryClient("http://127.0.0.1:8061")``
over JSON-RPC 2.0 at that URL. Methods take and return registry.proto's
messages; a failure raises ``A2AError`` rebuilt from the server's status
(its ErrorInfo reason, e.g. AGENT_NOT_FOUND), UNAVAILABLE when the registry
cannot be reached.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import grpc
from google.protobuf import message as _message
from google.rpc import status_pb2

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.registry._types import SERVICE, rpb, rpb_grpc

__all__ = ["RegistryClient"]

_DETAILS_KEY = "grpc-status-details-bin"


def _grpc_error(exc: grpc.aio.AioRpcError) -> A2AError:
    for key, value in exc.trailing_metadata() or ():
        if key == _DETAILS_KEY and isinstance(value, bytes):
            return A2AError.from_status(status_pb2.Status.FromString(value))
    return A2AError(ErrorCode.from_grpc_code(exc.code()), exc.details() or None)


class RegistryClient:
    """Calls the registry at ``url`` (see the module docstring)."""

    def __init__(self, url: str, *, timeout: float = 30.0) -> None:
        self.url = url.strip()
        self.timeout = timeout
        self._http = self.url.lower().startswith(("http://", "https://"))
        self._channel: grpc.aio.Channel | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the channel or HTTP session."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _stub(self) -> rpb_grpc.AgentRegistryServiceStub:
        if self._channel is None:
            target = self.url.split("://", 1)[1] if "://" in self.url else self.url
            self._channel = grpc.aio.insecure_channel(target.rstrip("/"))
        return rpb_grpc.AgentRegistryServiceStub(self._channel)

    async def _unary(self, name: str, request: _message.Message) -> Any:
        if self._http:
            return await self._jsonrpc(name, request)
        try:
            return await getattr(self._stub(), name)(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise _grpc_error(exc) from None

    async def _jsonrpc(self, name: str, request: _message.Message) -> Any:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": name, "params": protojson.to_dict(request)}
        try:
            async with self._session.post(
                self.url, json=body, timeout=aiohttp.ClientTimeout(total=self.timeout)
            ) as resp:
                data = json.loads(await resp.read())
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise A2AError(
                ErrorCode.UNAVAILABLE, f"registry at {self.url}: {exc or type(exc).__name__}"
            ) from None
        if "error" in data:
            return _raise_jsonrpc(data["error"])
        out = protojson.message_class(SERVICE.methods_by_name[name].output_type)()
        return protojson.parse(data.get("result") or {}, out)

    async def register(self, base_url: str) -> rpb.RegisteredAgent:
        """RegisterAgent: the registered agent."""
        return (await self._unary("RegisterAgent", rpb.RegisterAgentRequest(base_url=base_url))).agent

    async def update(self, agent_id: str, base_url: str = "") -> rpb.RegisteredAgent:
        """UpdateAgent: the agent with its refreshed card."""
        req = rpb.UpdateAgentRequest(agent_id=agent_id, base_url=base_url)
        return (await self._unary("UpdateAgent", req)).agent

    async def deregister(self, agent_id: str) -> None:
        """DeregisterAgent."""
        await self._unary("DeregisterAgent", rpb.DeregisterAgentRequest(agent_id=agent_id))

    async def get(self, agent_id: str) -> rpb.RegisteredAgent:
        """GetAgent."""
        return (await self._unary("GetAgent", rpb.GetAgentRequest(agent_id=agent_id))).agent

    async def list_page(self, request: rpb.ListAgentsRequest) -> rpb.ListAgentsResponse:
        """One ListAgents page."""
        page: rpb.ListAgentsResponse = await self._unary("ListAgents", request)
        return page

    async def list(self, **filters: Any) -> list[rpb.RegisteredAgent]:
        """Every agent matching ``filters`` (ListAgentsRequest fields), all pages."""
        request = rpb.ListAgentsRequest(**filters)
        out: list[rpb.RegisteredAgent] = []
        while True:
            page = await self.list_page(request)
            out.extend(page.agents)
            if not page.next_page_token:
                return out
            request.page_token = page.next_page_token

    async def watch(self, include_existing: bool = False) -> AsyncIterator[rpb.WatchAgentsResponse]:
        """WatchAgents over gRPC: returns once the registry has the watch on
        (no later change is missed), an iterator of the changes. An http URL
        is refused (UNSUPPORTED_OPERATION): watch over gRPC."""
        if self._http:
            raise A2AError(ErrorCode.UNSUPPORTED_OPERATION, "watch the registry over gRPC (grpc://host:port)")
        call = self._stub().WatchAgents(rpb.WatchAgentsRequest(include_existing=include_existing))
        try:
            await call.initial_metadata()
        except grpc.aio.AioRpcError as exc:
            raise _grpc_error(exc) from None
        return _changes(call)


async def _changes(call: Any) -> AsyncIterator[rpb.WatchAgentsResponse]:
    try:
        async for change in call:
            yield change
    except grpc.aio.AioRpcError as exc:
        if exc.code() != grpc.StatusCode.CANCELLED:
            raise _grpc_error(exc) from None
    finally:
        call.cancel()


def _raise_jsonrpc(error: Any) -> Any:
    code = ErrorCode.INTERNAL
    for detail in error.get("data") or ():
        if isinstance(detail, dict) and detail.get("reason"):
            code = ErrorCode.from_reason(detail["reason"]) or code
    raise A2AError(code, str(error.get("message") or code.default_message))
