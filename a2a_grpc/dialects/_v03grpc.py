"""A2A v0.3 over gRPC: ``a2a.v1.A2AService`` in front of the one v1.0 servicer.

:class:`V03Servicer` implements the ten RPCs of the v0.3 proto (legacy digest
§4.2) as an adapter, never a second handler: each converts the v0.3 request
up through the table of :mod:`a2a_grpc.dialects._v03proto` (v0.3 proto →
ProtoJSON → v1.0 message; v0.3 bytes are only ever decoded with v0.3
descriptors, §4.5), calls the SAME :class:`~a2a_grpc.bindings._servicer.A2AServicer`
method with the caller's context wrapped in :class:`V1View` (so the whole
interceptor chain — authentication, limits, version, extensions, validation,
capability gate, telemetry — runs as for a v1.0 call: the request is
presented as ``a2a-version: 1.0``, with ``x-a2a-extensions`` read as
``a2a-extensions``), and converts the answer down.

The same object serves v0.3 HTTP+JSON (:mod:`a2a_grpc.dialects._v03rest`
drives it through the gateway's one call path with a gateway context).

* Streams: each v1.0 event becomes a v0.3 ``StreamResponse``; ``final`` on
  status updates is computed (C2: terminal, or interrupted on
  SendStreamingMessage, whose v1.0 stream ends there); a stream that ended on
  another event gets a closing ``final`` status update with the task's last
  status. TaskSubscription on a finished task sends the Task and closes (C8,
  S19; over HTTP+JSON a ``final`` status update follows it).
* GetAgentCard is the v1.0 GetExtendedAgentCard; when the agent has no
  extended card, the public card (what the v0.3 proto's GetAgentCard
  returns), both with the v0.3 endpoint fields (C10).
* Errors (C14): plain gRPC status codes of the one error table with the
  message prefixed by the v0.3 error type name (``"TaskNotFoundError: …"``),
  no ErrorInfo (:func:`a2a_grpc.dialects._v03proto.error_message`); other
  trailing metadata (``www-authenticate``, ``retry-after``) is kept. A request
  the table cannot convert (a malformed resource name, a Part without
  content) is INVALID_ARGUMENT (InvalidParamsError) naming the field.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, NoReturn

from google.protobuf import empty_pb2
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.bindings._http.context import split_details
from a2a_grpc.context import EXTENSIONS_KEY, VERSION_KEY
from a2a_grpc.dialects._v03proto import RPCS, Rpc, down, error_message, up
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03pb
from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03pb_grpc
from a2a_grpc.types import is_interrupted, is_terminal, pb

__all__ = ["LEGACY_EXTENSIONS_KEY", "SERVICE", "V03Servicer", "V1View", "abort_v03"]

#: The v0.3 service (package ``a2a.v1``).
SERVICE = v03pb.DESCRIPTOR.services_by_name["A2AService"]
#: The v0.3 extensions header (legacy digest §6.1), read as ``a2a-extensions`` and echoed beside it.
LEGACY_EXTENSIONS_KEY = "x-a2a-extensions"
_NO_EXTENDED_CARD = (ErrorCode.UNSUPPORTED_OPERATION, ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED)


class _Refused(Exception):
    """The v1.0 servicer ended the call: its A2AError and other trailing metadata."""

    def __init__(self, error: A2AError, trailing: Sequence[tuple[str, Any]]) -> None:
        super().__init__(error.message)
        self.error = error
        self.trailing = tuple(trailing)


def _error_of(code: Any, details: str, trailing: Any) -> tuple[A2AError, list[tuple[str, Any]]]:
    """The A2AError of a v1.0 abort (its ``grpc-status-details-bin`` status,
    else the row of ``code``) and the rest of the trailing metadata."""
    status, rest = split_details(trailing)
    if status is not None:
        return A2AError.from_status(status), rest
    return A2AError(ErrorCode.from_grpc_code(code), details or None), rest


class V1View:
    """The caller's context (``grpc.aio.ServicerContext`` or a gateway
    context) as the v1.0 servicer sees a v0.3 call: metadata with
    ``a2a-version: 1.0`` and the legacy extensions header as
    ``a2a-extensions``; activated extensions echoed under both names; an
    abort raises :class:`_Refused` to the adapter instead of ending the call.
    Everything else (peer, deadline, TLS, ``binding``) is the caller's;
    ``dialect`` is ``0.3``, so push configs set this way get v0.3 bodies (C21)."""

    dialect = "0.3"

    def __init__(self, context: Any) -> None:
        self._context = context
        md = [(k, v) for k, v in context.invocation_metadata() or () if k != VERSION_KEY]
        md.append((VERSION_KEY, "1.0"))
        if EXTENSIONS_KEY not in {k for k, _ in md}:
            md.extend((EXTENSIONS_KEY, v) for k, v in list(md) if k == LEGACY_EXTENSIONS_KEY)
        self._metadata = tuple(md)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]]:
        return self._metadata

    async def send_initial_metadata(self, initial_metadata: Sequence[tuple[str, str | bytes]]) -> None:
        md = list(initial_metadata)
        md += [(LEGACY_EXTENSIONS_KEY, v) for k, v in initial_metadata if k == EXTENSIONS_KEY]
        await self._context.send_initial_metadata(tuple(md))

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> NoReturn:
        raise _Refused(*_error_of(code, details, trailing_metadata))


async def abort_v03(context: Any, err: A2AError, trailing: Sequence[tuple[str, Any]] = ()) -> NoReturn:
    """Ends the call with ``err`` in the v0.3 form (C14): the table's gRPC
    code, the message prefixed by the v0.3 error type name, no ErrorInfo."""
    code, details = error_message(err)
    extra = tuple(getattr(err, "trailing_metadata", ()))
    await context.abort(code, details, trailing_metadata=(*trailing, *extra))
    raise AssertionError("abort returned")  # pragma: no cover - abort always raises


def _final(event: pb.StreamResponse, *, closes_on_interrupt: bool) -> bool:
    state = event.status_update.status.state
    return is_terminal(state) or (closes_on_interrupt and is_interrupted(state))


def _closing(event: pb.StreamResponse, last: pb.StreamResponse | None) -> pb.StreamResponse:
    """The state a v0.3 stream ended in, from its events: the latest status."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        out = pb.StreamResponse()
        out.status_update.task_id, out.status_update.context_id = event.task.id, event.task.context_id
        out.status_update.status.CopyFrom(event.task.status)
        return out
    if kind == "status_update":
        return event
    return last if last is not None else pb.StreamResponse()


class V03Servicer(v03pb_grpc.A2AServiceServicer):
    """The ten RPCs of ``a2a.v1.A2AService`` on ``servicer`` (the v1.0
    :class:`~a2a_grpc.bindings._servicer.A2AServicer`); see the module
    docstring. ``card`` is the public card as served (GetAgentCard's)."""

    def __init__(self, servicer: Any, card: Callable[[], pb.AgentCard]) -> None:
        self.servicer = servicer
        self.card = card

    async def _unary(self, rpc: Rpc, request: ProtoMessage, context: Any) -> Any:
        try:
            v1 = up(rpc.request, request)
            response = await self._call(rpc, v1, V1View(context))
        except A2AError as err:
            await abort_v03(context, err)
        except _Refused as refused:
            await abort_v03(context, refused.error, refused.trailing)
        return down(rpc.response, response) if rpc.response else response

    async def _call(self, rpc: Rpc, request: Any, view: V1View) -> Any:
        handler: Callable[..., Any] = getattr(self.servicer, rpc.v1)
        if rpc.name != "GetAgentCard":
            return await handler(request, view)
        try:
            card: pb.AgentCard = await handler(request, view)
        except _Refused as refused:
            if refused.error.code not in _NO_EXTENDED_CARD:
                raise
            card = pb.AgentCard()
            card.CopyFrom(self.card())
        if not card.supported_interfaces:  # the extended card: the public card's endpoints
            card.supported_interfaces.extend(self.card().supported_interfaces)
        return card

    async def _stream(self, rpc: Rpc, request: ProtoMessage, context: Any) -> AsyncIterator[Any]:
        try:
            v1 = up(rpc.request, request)
            async for event in self._events(rpc, v1, context):
                yield event
        except A2AError as err:
            await abort_v03(context, err)
        except _Refused as refused:
            await abort_v03(context, refused.error, refused.trailing)

    async def _events(self, rpc: Rpc, request: Any, context: Any) -> AsyncIterator[Any]:
        """The v0.3 events of the v1.0 stream, ``final`` computed (C2, C8)."""
        closes_on_interrupt = rpc.v1 == "SendStreamingMessage"
        last: pb.StreamResponse | None = None  # the latest status seen
        ended_final = sent = False
        try:
            async for event in getattr(self.servicer, rpc.v1)(request, V1View(context)):
                out = down("StreamResponse", event)
                ended_final = event.WhichOneof("payload") == "status_update" and _final(
                    event, closes_on_interrupt=closes_on_interrupt
                )
                if out.HasField("status_update"):  # (touching status_update would select it)
                    out.status_update.final = ended_final
                last, sent = _closing(event, last), True
                ended_final = ended_final or event.HasField("message")
                yield out
        except _Refused as refused:
            task = await self._finished(rpc, request, context, refused, sent)
            yield down("StreamResponse", pb.StreamResponse(task=task))
            if getattr(context, "binding", "grpc") == "grpc":
                return
            last, ended_final = _closing(pb.StreamResponse(task=task), None), False
        if last is not None and not ended_final and last.HasField("status_update"):
            closing = down("StreamResponse", last)
            closing.status_update.final = True
            yield closing

    async def _finished(self, rpc: Rpc, request: Any, context: Any, refused: _Refused, sent: bool) -> pb.Task:
        """C8: the task of a refused TaskSubscription when it is finished;
        otherwise the refusal goes on."""
        if (
            sent
            or rpc.name != "TaskSubscription"
            or refused.error.code is not ErrorCode.UNSUPPORTED_OPERATION
        ):
            raise refused
        try:
            task: pb.Task = await self.servicer.GetTask(
                pb.GetTaskRequest(id=request.id, tenant=request.tenant), V1View(context)
            )
        except _Refused:
            raise refused from None
        if not is_terminal(task.status.state):
            raise refused
        return task

    # One method per RPC of a2a.v1.A2AService, in the proto's order.

    async def SendMessage(self, request: v03pb.SendMessageRequest, context: Any) -> v03pb.SendMessageResponse:
        """SendMessage → v1.0 SendMessage."""
        return await self._unary(RPCS["SendMessage"], request, context)

    async def SendStreamingMessage(
        self, request: v03pb.SendMessageRequest, context: Any
    ) -> AsyncIterator[v03pb.StreamResponse]:
        """SendStreamingMessage → v1.0 SendStreamingMessage."""
        async for event in self._stream(RPCS["SendStreamingMessage"], request, context):
            yield event

    async def GetTask(self, request: v03pb.GetTaskRequest, context: Any) -> v03pb.Task:
        """GetTask → v1.0 GetTask."""
        return await self._unary(RPCS["GetTask"], request, context)

    async def CancelTask(self, request: v03pb.CancelTaskRequest, context: Any) -> v03pb.Task:
        """CancelTask → v1.0 CancelTask."""
        return await self._unary(RPCS["CancelTask"], request, context)

    async def TaskSubscription(
        self, request: v03pb.TaskSubscriptionRequest, context: Any
    ) -> AsyncIterator[v03pb.StreamResponse]:
        """TaskSubscription → v1.0 SubscribeToTask (C8 on a finished task)."""
        async for event in self._stream(RPCS["TaskSubscription"], request, context):
            yield event

    async def CreateTaskPushNotificationConfig(
        self, request: v03pb.CreateTaskPushNotificationConfigRequest, context: Any
    ) -> v03pb.TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig → v1.0 (flat config; C11 ids)."""
        return await self._unary(RPCS["CreateTaskPushNotificationConfig"], request, context)

    async def GetTaskPushNotificationConfig(
        self, request: v03pb.GetTaskPushNotificationConfigRequest, context: Any
    ) -> v03pb.TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig → v1.0 GetTaskPushNotificationConfig."""
        return await self._unary(RPCS["GetTaskPushNotificationConfig"], request, context)

    async def ListTaskPushNotificationConfig(
        self, request: v03pb.ListTaskPushNotificationConfigRequest, context: Any
    ) -> v03pb.ListTaskPushNotificationConfigResponse:
        """ListTaskPushNotificationConfig → v1.0 ListTaskPushNotificationConfigs."""
        return await self._unary(RPCS["ListTaskPushNotificationConfig"], request, context)

    async def GetAgentCard(self, request: v03pb.GetAgentCardRequest, context: Any) -> v03pb.AgentCard:
        """GetAgentCard → v1.0 GetExtendedAgentCard, else the public card."""
        return await self._unary(RPCS["GetAgentCard"], request, context)

    async def DeleteTaskPushNotificationConfig(
        self, request: v03pb.DeleteTaskPushNotificationConfigRequest, context: Any
    ) -> empty_pb2.Empty:
        """DeleteTaskPushNotificationConfig → v1.0 DeleteTaskPushNotificationConfig."""
        return await self._unary(RPCS["DeleteTaskPushNotificationConfig"], request, context)
