"""AgentRegistryService on every binding: one servicer object.

:class:`RegistryServicer` has the generated method names taking
``(request, context)``, so grpc.aio serves it and the gateway's JSON-RPC and
HTTP+JSON bindings (:class:`a2a_grpc.bindings._http.jsonrpc.JsonRpcBinding`,
:class:`a2a_grpc.bindings._http.rest.RestBinding`, the routes compiled from registry.proto's
``google.api.http`` rules) call the very same object. An ``A2AError`` ends
the call in the binding's own error form (rich gRPC status, JSON-RPC error
object, HTTP status with a ``google.rpc.Status`` body).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from a2a_grpc.bindings._servicer import abort
from a2a_grpc.context import RpcContext
from a2a_grpc.errors import A2AError
from a2a_grpc.registry._registry import AgentRegistry
from a2a_grpc.registry._types import rpb

__all__ = ["RegistryServicer"]

_R = TypeVar("_R")


async def _call(context: RpcContext, op: Callable[[], Awaitable[_R]]) -> _R:
    try:
        return await op()
    except A2AError as err:
        await abort(context, err)


class RegistryServicer:
    """The six RPCs of AgentRegistryService onto ``registry``."""

    def __init__(self, registry: AgentRegistry) -> None:
        self.registry = registry

    async def RegisterAgent(
        self, request: rpb.RegisterAgentRequest, context: Any
    ) -> rpb.RegisterAgentResponse:
        """RegisterAgent (see :meth:`AgentRegistry.register`)."""
        return await _call(context, lambda: self.registry.register(request))

    async def UpdateAgent(self, request: rpb.UpdateAgentRequest, context: Any) -> rpb.UpdateAgentResponse:
        """UpdateAgent (see :meth:`AgentRegistry.update`)."""
        return await _call(context, lambda: self.registry.update(request))

    async def DeregisterAgent(
        self, request: rpb.DeregisterAgentRequest, context: Any
    ) -> rpb.DeregisterAgentResponse:
        """DeregisterAgent (see :meth:`AgentRegistry.deregister`)."""
        return await _call(context, lambda: self.registry.deregister(request))

    async def GetAgent(self, request: rpb.GetAgentRequest, context: Any) -> rpb.GetAgentResponse:
        """GetAgent (see :meth:`AgentRegistry.get`)."""
        return await _call(context, lambda: self.registry.get(request))

    async def ListAgents(self, request: rpb.ListAgentsRequest, context: Any) -> rpb.ListAgentsResponse:
        """ListAgents (see :meth:`AgentRegistry.list`)."""
        return await _call(context, lambda: self.registry.list(request))

    async def WatchAgents(
        self, request: rpb.WatchAgentsRequest, context: Any
    ) -> AsyncIterator[rpb.WatchAgentsResponse]:
        """WatchAgents (see :meth:`AgentRegistry.watch`). The response
        headers go out at once, so a client knows when the watch is on."""
        changes = self.registry.watch(request)
        await context.send_initial_metadata(())
        async for change in changes:
            yield change
