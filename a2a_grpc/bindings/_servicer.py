"""A2AServicer: the gRPC face of the RequestHandler.

One method per RPC of ``lf.a2a.v1.A2AService``, written out below: each builds
the call's :class:`~a2a_grpc.context.CallContext` and runs the handler's
coroutine of that operation inside the :class:`~a2a_grpc.core._interceptors.
InterceptorChain` (the features' slots around the built-in steps — version,
extensions, validation, capability gate — then the server's own
interceptors; see :mod:`a2a_grpc.core._interceptors`). This is the one
place every binding passes through: the HTTP gateway drives this very object.

The servicer only touches the :class:`~a2a_grpc.context.RpcContext` subset of
``grpc.aio.ServicerContext``, so the gateway can call it with its own context.
Errors leave as rich gRPC status: the code from the ErrorCode table and a
``google.rpc.Status`` with ErrorInfo (and BadRequest) in the
``grpc-status-details-bin`` trailer (spec §10.6). Activated extensions are
echoed as initial metadata ``a2a-extensions`` (spec §7.3).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import NoReturn, TypeVar

from google.protobuf import descriptor, empty_pb2
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.bindings.tls import peer_identity
from a2a_grpc.context import EXTENSIONS_KEY, CallContext, RpcContext
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core._interceptors import (
    CallInterceptor,
    CapabilityGate,
    ExtensionNegotiation,
    InterceptorChain,
    RequestValidation,
    VersionNegotiation,
)
from a2a_grpc.errors import A2AError
from a2a_grpc.types import pb

__all__ = ["SERVICE", "A2AServicer", "abort", "builtin_interceptors"]

#: The service descriptor the servicer implements.
SERVICE: descriptor.ServiceDescriptor = pb.DESCRIPTOR.services_by_name["A2AService"]
STATUS_DETAILS_KEY = "grpc-status-details-bin"
Req = TypeVar("Req", bound=ProtoMessage)
Resp = TypeVar("Resp", bound=ProtoMessage)


async def abort(context: RpcContext, err: A2AError) -> NoReturn:
    """Ends the call with ``err`` as a rich status (code, message, details),
    plus the error's own ``trailing_metadata`` when it has some (the
    ``www-authenticate`` challenge of UNAUTHENTICATED)."""
    await context.abort(
        err.code.grpc_code,
        err.message,
        trailing_metadata=(
            (STATUS_DETAILS_KEY, err.to_status().SerializeToString()),
            *getattr(err, "trailing_metadata", ()),
        ),
    )
    raise AssertionError("abort returned")  # pragma: no cover - abort always raises


def builtin_interceptors(handler: RequestHandler) -> list[CallInterceptor]:
    """The built-in steps of the chain, in their fixed order (version,
    extensions, validation, capability gate; :mod:`a2a_grpc.core._interceptors`),
    reading the handler's configuration and Agent Card. The composition root
    puts the features' slots around them (:data:`a2a_grpc.core.features.SLOTS`)."""

    def card() -> pb.AgentCard:
        return handler.card

    config = handler.config
    return [
        VersionNegotiation(config.supported_versions, strict=config.strict_version),
        ExtensionNegotiation(card),
        RequestValidation(config.max_request_bytes),
        CapabilityGate(card, push=handler.push is not None),
    ]


#: The full method name of each RPC (``/lf.a2a.v1.A2AService/GetTask``).
_METHODS = {m.name: f"/{SERVICE.full_name}/{m.name}" for m in SERVICE.methods}


#: The attributes a binding's context may add to RpcContext, and their defaults.
_CONTEXT_EXTRAS = (("binding", "grpc"), ("dialect", "1.0"), ("client_task_ids", False))
#: Per context type: whether its instances cannot have any of
#: ``_CONTEXT_EXTRAS`` (no instance dict, no such class attribute: grpc.aio's
#: own context), so that reading them would only raise AttributeError inside.
_PLAIN_CONTEXTS: dict[type, bool] = {}


def _is_plain(context: RpcContext) -> bool:
    kind = type(context)
    plain = _PLAIN_CONTEXTS.get(kind)
    if plain is None:
        plain = _PLAIN_CONTEXTS[kind] = kind.__dictoffset__ == 0 and not any(
            hasattr(kind, name) for name, _ in _CONTEXT_EXTRAS
        )
    return plain


def _call_context(
    context: RpcContext, rpc: str, request: ProtoMessage, *, peer_identities: bool = False
) -> CallContext:
    plain = _is_plain(context)
    call = CallContext.from_metadata(
        _METHODS[rpc],
        context.invocation_metadata(),
        tenant=getattr(request, "tenant", ""),
        peer=context.peer(),
        deadline=context.time_remaining(),
        binding="grpc" if plain else getattr(context, "binding", "grpc"),
        dialect="1.0" if plain else getattr(context, "dialect", "1.0"),
    )
    if peer_identities:
        call.peer_identity = peer_identity(context)
    if not plain:
        call.client_task_ids = getattr(context, "client_task_ids", False) is True  # legacy adapters only
    return call


async def _echo_extensions(context: RpcContext, call: CallContext) -> None:
    await context.send_initial_metadata(((EXTENSIONS_KEY, ",".join(sorted(call.activated_extensions))),))


class A2AServicer:
    """Implements every RPC of ``lf.a2a.v1.A2AService`` on a RequestHandler.

    Unary RPCs take ``(request, context)`` and return the response message;
    server-streaming RPCs are async generators of ``pb.StreamResponse``.
    Every call runs in ``chain``, which the composition root assembles
    (the features' slots around the built-in steps, then the server's own
    interceptors: :mod:`a2a_grpc.server`); without one, the chain is the
    built-in steps then ``interceptors``. ``peer_identities``: read the TLS
    client certificate of every call into ``CallContext.peer_identity``
    (when a client CA is configured).
    """

    def __init__(
        self,
        handler: RequestHandler,
        interceptors: Sequence[CallInterceptor] = (),
        *,
        chain: InterceptorChain | None = None,
        peer_identities: bool = False,
    ) -> None:
        self.handler = handler
        if chain is None:
            chain = InterceptorChain([*builtin_interceptors(handler), *interceptors])
        self.chain = chain
        self.peer_identities = peer_identities

    async def _unary(
        self,
        rpc: str,
        operation: Callable[[Req, CallContext], Awaitable[Resp]],
        request: Req,
        context: RpcContext,
    ) -> Resp:
        """Runs a unary ``operation`` in the chain: its response (activated
        extensions echoed), or the call aborted with the A2AError."""
        call = _call_context(context, rpc, request, peer_identities=self.peer_identities)
        try:
            response = await self.chain.unary(call, request, operation)
        except A2AError as err:
            error = err
        else:
            if call.activated_extensions:
                await _echo_extensions(context, call)
            return response
        await abort(context, error)

    async def _stream(
        self,
        rpc: str,
        operation: Callable[[Req, CallContext], AsyncIterator[Resp]],
        request: Req,
        context: RpcContext,
    ) -> AsyncIterator[Resp]:
        """Runs a streaming ``operation`` in the chain: its events (activated
        extensions echoed before the first), then the call aborted with the
        A2AError that ended it, if any."""
        call = _call_context(context, rpc, request, peer_identities=self.peer_identities)
        events = self.chain.stream(call, request, operation)
        error: A2AError | None = None
        first = True
        try:
            async for event in events:
                if first:
                    if call.activated_extensions:
                        await _echo_extensions(context, call)
                    first = False
                yield event
        except A2AError as err:
            error = err
        finally:
            await events.aclose()
        if error is not None:
            await abort(context, error)

    # One method per RPC, in the proto's order (tests/core/test_servicer.py
    # checks that none is missing).

    async def SendMessage(
        self, request: pb.SendMessageRequest, context: RpcContext
    ) -> pb.SendMessageResponse:
        """SendMessage (spec §3.1.1): RequestHandler.send_message."""
        return await self._unary("SendMessage", self.handler.send_message, request, context)

    async def SendStreamingMessage(
        self, request: pb.SendMessageRequest, context: RpcContext
    ) -> AsyncIterator[pb.StreamResponse]:
        """SendStreamingMessage (spec §3.1.2): RequestHandler.send_streaming_message."""
        async for event in self._stream(
            "SendStreamingMessage", self.handler.send_streaming_message, request, context
        ):
            yield event

    async def GetTask(self, request: pb.GetTaskRequest, context: RpcContext) -> pb.Task:
        """GetTask (spec §3.1.3): RequestHandler.get_task."""
        return await self._unary("GetTask", self.handler.get_task, request, context)

    async def ListTasks(self, request: pb.ListTasksRequest, context: RpcContext) -> pb.ListTasksResponse:
        """ListTasks (spec §3.1.4): RequestHandler.list_tasks."""
        return await self._unary("ListTasks", self.handler.list_tasks, request, context)

    async def CancelTask(self, request: pb.CancelTaskRequest, context: RpcContext) -> pb.Task:
        """CancelTask (spec §3.1.5): RequestHandler.cancel_task."""
        return await self._unary("CancelTask", self.handler.cancel_task, request, context)

    async def SubscribeToTask(
        self, request: pb.SubscribeToTaskRequest, context: RpcContext
    ) -> AsyncIterator[pb.StreamResponse]:
        """SubscribeToTask (spec §3.1.6): RequestHandler.subscribe_to_task."""
        async for event in self._stream("SubscribeToTask", self.handler.subscribe_to_task, request, context):
            yield event

    async def CreateTaskPushNotificationConfig(
        self, request: pb.TaskPushNotificationConfig, context: RpcContext
    ) -> pb.TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (spec §3.1.7)."""
        return await self._unary(
            "CreateTaskPushNotificationConfig",
            self.handler.create_task_push_notification_config,
            request,
            context,
        )

    async def GetTaskPushNotificationConfig(
        self, request: pb.GetTaskPushNotificationConfigRequest, context: RpcContext
    ) -> pb.TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig (spec §3.1.8)."""
        return await self._unary(
            "GetTaskPushNotificationConfig", self.handler.get_task_push_notification_config, request, context
        )

    async def ListTaskPushNotificationConfigs(
        self, request: pb.ListTaskPushNotificationConfigsRequest, context: RpcContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs (spec §3.1.9)."""
        return await self._unary(
            "ListTaskPushNotificationConfigs",
            self.handler.list_task_push_notification_configs,
            request,
            context,
        )

    async def GetExtendedAgentCard(
        self, request: pb.GetExtendedAgentCardRequest, context: RpcContext
    ) -> pb.AgentCard:
        """GetExtendedAgentCard (spec §3.1.11): RequestHandler.get_extended_agent_card."""
        return await self._unary(
            "GetExtendedAgentCard", self.handler.get_extended_agent_card, request, context
        )

    async def DeleteTaskPushNotificationConfig(
        self, request: pb.DeleteTaskPushNotificationConfigRequest, context: RpcContext
    ) -> empty_pb2.Empty:
        """DeleteTaskPushNotificationConfig (spec §3.1.10)."""
        return await self._unary(
            "DeleteTaskPushNotificationConfig",
            self.handler.delete_task_push_notification_config,
            request,
            context,
        )
