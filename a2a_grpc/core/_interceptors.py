"""The call interceptor chain: what runs around every A2A operation.

Every RPC, on every binding, passes through one :class:`InterceptorChain`
(the servicer holds it; the HTTP gateway drives the same servicer). A
:class:`CallInterceptor` sees the call twice: ``before`` with the request,
ahead of the operation, and ``after`` with the outcome. Either may end the
call by raising an :class:`~a2a_grpc.errors.A2AError`.

The order is fixed, the same for every RPC (streaming ones included), so the
same bad request gets the same error whatever the RPC::

    [telemetry]              spans, request log, metrics       a2a_grpc.telemetry
    [audit]                  what was done                     a2a_grpc.auth._audit (ahead of authentication,
                                                               to see the calls it refuses)
    [authentication]         who is calling                    a2a_grpc.auth (with an auth policy)
    [limits]                 rate and concurrency              a2a_grpc.auth._limits (with [limits])
    1 VersionNegotiation     A2A-Version               spec §3.6
    2 ExtensionNegotiation   A2A-Extensions            spec §4.6, §7.3
    3 RequestValidation      size limit, the proto's rules      spec §5.7
    4 CapabilityGate         what the Agent Card declares       spec §3.3.4
    [authorization]          tenant binding, extended card     a2a_grpc.auth (with an auth policy)
    5 the server's own interceptors (``ServerConfig.interceptors``), in list order
      the operation (RequestHandler)

The bracketed steps are slots the server's features fill
(:data:`a2a_grpc.core.features.SLOTS`; the composition root assembles the chain).

``before`` runs top to bottom; ``after`` runs bottom to top, once per call,
for each interceptor whose ``before`` returned. For a server-streaming RPC
``before`` runs before the first event and ``after`` once when the stream
ends. The outcome ``after`` receives is the response message (unary), None
(a stream that ended normally, or a caller that went away) or the A2AError
that ends the call; any other exception has already become INTERNAL. An
``after`` that raises an A2AError replaces the outcome for the interceptors
above it and for the caller (a stream then ends with that error after the
events already sent).

Example — refuse calls without the right ``x-api-key`` header, and count
the outcomes of every RPC (the complete, tested program is in
docs/interceptors.md)::

    from a2a_grpc import A2AError, CallContext, CallInterceptor, ErrorCode

    class RequireKey(CallInterceptor):
        def __init__(self, key: str) -> None:
            self.key = key

        async def before(self, call: CallContext, request: object) -> None:
            if call.header("x-api-key") != self.key:
                raise A2AError(ErrorCode.UNAUTHENTICATED, "x-api-key is missing or wrong")

    class CountCalls(CallInterceptor):
        def __init__(self) -> None:
            self.counts: dict[tuple[str, str], int] = {}

        async def after(self, call: CallContext, outcome: object) -> None:
            key = (call.rpc_name, outcome.code.reason if isinstance(outcome, A2AError) else "ok")
            self.counts[key] = self.counts.get(key, 0) + 1

    config = ServerConfig(interceptors=[CountCalls(), RequireKey("s3cret")])
    A2AServer(agent, store, config)

See docs/interceptors.md.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.context import CallContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol._validation import validate_request
from a2a_grpc.types import pb

__all__ = [
    "REQUIRED_CAPABILITY",
    "CallInterceptor",
    "Capability",
    "CapabilityGate",
    "ExtensionNegotiation",
    "InterceptorChain",
    "Outcome",
    "RequestValidation",
    "VersionNegotiation",
    "require_capability",
    "require_push",
]

log = logging.getLogger("a2a_grpc.interceptors")

#: What ``after`` sees: the response (unary), None (a stream's end) or the error.
Outcome = ProtoMessage | A2AError | None
Req = TypeVar("Req", bound=ProtoMessage)
Resp = TypeVar("Resp", bound=ProtoMessage)
CardSource = Callable[[], pb.AgentCard]


class CallInterceptor(Protocol):
    """One step of the chain. Both methods default to doing nothing, so a
    subclass implements only the one it needs; any object with these two
    coroutines is an interceptor."""

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        """Runs ahead of the operation; raise an A2AError to refuse the call.
        May record what it learns on ``call`` (e.g. activated extensions)."""
        return None

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        """Runs once the call has its outcome (see the module docstring);
        raise an A2AError to replace it."""
        return None


def _internal(call: CallContext) -> A2AError:
    log.exception("unhandled error in %s", call.method)
    return A2AError(ErrorCode.INTERNAL, "internal error")


_Before = Callable[[CallContext, ProtoMessage], Awaitable[None]]
_After = Callable[[CallContext, Outcome], Awaitable[None]]


def _own(interceptor: CallInterceptor, name: str) -> Any:
    """``interceptor``'s bound ``before``/``after``, or None where it keeps
    the protocol's default (which does nothing)."""
    if getattr(type(interceptor), name, None) is getattr(CallInterceptor, name):
        return None
    return getattr(interceptor, name)


class _Check(CallInterceptor):
    """A built-in step whose ``before`` never waits: its :meth:`check`,
    which the chain calls directly (no coroutine per call)."""

    def check(self, call: CallContext, request: ProtoMessage) -> None:
        """What ``before`` does; raises an A2AError to refuse the call."""

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        self.check(call, request)


_CheckFn = Callable[[CallContext, ProtoMessage], None]


def _step(interceptor: CallInterceptor) -> tuple[_CheckFn | None, _Before | None, _After | None]:
    """(the sync check, or else the ``before``; the ``after``) of one step."""
    if isinstance(interceptor, _Check) and type(interceptor).before is _Check.before:
        return interceptor.check, None, _own(interceptor, "after")
    return None, _own(interceptor, "before"), _own(interceptor, "after")


class InterceptorChain:
    """Runs ``interceptors`` around operations in the order given (the
    servicer gives the built-ins first, then the server's own). A step that
    keeps :class:`CallInterceptor`'s do-nothing ``before`` or ``after`` is
    not called for it."""

    def __init__(self, interceptors: Sequence[CallInterceptor]) -> None:
        self.interceptors = tuple(interceptors)
        self._steps = tuple(_step(interceptor) for interceptor in self.interceptors)

    async def _before(self, call: CallContext, request: ProtoMessage, afters: list[_After]) -> None:
        """Runs every ``before`` in order; ``afters`` collects the ``after`` of
        each step whose ``before`` returned (for :meth:`_after`)."""
        for check, before, after in self._steps:
            if check is not None:
                check(call, request)
            elif before is not None:
                await before(call, request)
            if after is not None:
                afters.append(after)

    @staticmethod
    async def _after(call: CallContext, outcome: Outcome, afters: list[_After]) -> Outcome:
        for after in reversed(afters):
            try:
                await after(call, outcome)
            except A2AError as err:
                outcome = err
            except Exception:
                outcome = _internal(call)
        return outcome

    async def unary(
        self, call: CallContext, request: Req, operation: Callable[[Req, CallContext], Awaitable[Resp]]
    ) -> Resp:
        """``operation(request, call)`` inside the chain: its response, or
        the A2AError that ended the call (raised)."""
        afters: list[_After] = []  # of the steps whose before returned
        outcome: Outcome = None
        try:
            for check, before, after in self._steps:  # _before, inline: this runs on every unary call
                if check is not None:
                    check(call, request)
                elif before is not None:
                    await before(call, request)
                if after is not None:
                    afters.append(after)
            outcome = response = await operation(request, call)
        except A2AError as err:
            outcome = err
        except Exception:
            outcome = _internal(call)
        finally:
            if afters:  # also when the call is cancelled (the caller went away)
                outcome = await self._after(call, outcome, afters)
        if isinstance(outcome, A2AError):
            raise outcome
        return response

    async def stream(
        self, call: CallContext, request: Req, operation: Callable[[Req, CallContext], AsyncIterator[Resp]]
    ) -> AsyncGenerator[Resp, None]:
        """The events of ``operation(request, call)`` inside the chain; the
        A2AError that ended the call is raised after the events sent."""
        afters: list[_After] = []
        outcome: Outcome = None
        try:
            await self._before(call, request, afters)
            events = operation(request, call)
            try:
                async for event in events:
                    yield event
            finally:
                aclose = getattr(events, "aclose", None)  # operations are async generators
                if aclose is not None:
                    await aclose()
        except A2AError as err:
            outcome = err
        except Exception:
            outcome = _internal(call)
        finally:
            if afters:  # also when the caller went away (the generator is being closed)
                outcome = await self._after(call, outcome, afters)
        if isinstance(outcome, A2AError):
            raise outcome


# ------------------------------------------------------------------ built-ins


class VersionNegotiation(_Check):
    """``A2A-Version`` (spec §3.6): Major.Minor must be one of ``supported``
    (the patch is ignored). Absent means 0.3 (spec §3.6.2): refused when
    ``strict`` with a message telling the caller to send ``A2A-Version: 1.0``
    (the v0.3 methods are the dialect's, :mod:`a2a_grpc.dialects`, which calls
    in as 1.0), served as the current version otherwise. Raises
    VERSION_NOT_SUPPORTED with ``supportedVersions`` (and
    ``requestedVersion``) in the ErrorInfo metadata."""

    def __init__(self, supported: frozenset[str], *, strict: bool) -> None:
        self.supported = supported
        self.strict = strict

    def check(self, call: CallContext, request: ProtoMessage) -> None:
        version = call.protocol_version
        if version in self.supported:  # "1.0": the common case, nothing to parse
            return
        listed = ", ".join(sorted(self.supported))
        if not version:
            if self.strict:
                raise A2AError(
                    ErrorCode.VERSION_NOT_SUPPORTED,
                    f"no A2A-Version given, which means 0.3, and {call.rpc_name} is not an A2A 0.3 method;"
                    f" send the header A2A-Version: 1.0 (this server serves {listed} and the 0.3 methods)",
                    metadata={"supportedVersions": ",".join(sorted(self.supported))},
                )
            return
        parts = version.split(".")
        major_minor = ".".join(parts[:2]) if len(parts) >= 2 else version
        if major_minor not in self.supported:
            raise A2AError(
                ErrorCode.VERSION_NOT_SUPPORTED,
                f"A2A-Version {version!r} is not supported; supported: {listed}",
                metadata={"requestedVersion": version, "supportedVersions": ",".join(sorted(self.supported))},
            )


class ExtensionNegotiation(_Check):
    """``A2A-Extensions`` (spec §4.6, §7.3) against the extensions the card
    declares: a required one the caller did not request raises
    EXTENSION_SUPPORT_REQUIRED (``requiredExtensions`` in the metadata); the
    declared ones it requested are added to ``call.activated_extensions``,
    which the binding echoes back."""

    def __init__(self, card: CardSource) -> None:
        self.card = card

    def check(self, call: CallContext, request: ProtoMessage) -> None:
        declared = self.card().capabilities.extensions
        if not declared:
            return
        requested = call.requested_extensions
        missing = [e.uri for e in declared if e.required and e.uri not in requested]
        if missing:
            raise A2AError(
                ErrorCode.EXTENSION_SUPPORT_REQUIRED,
                "this agent requires the extension(s) " + ", ".join(missing),
                metadata={"requiredExtensions": ",".join(missing)},
            )
        call.activated_extensions.update(e.uri for e in declared if e.uri in requested)


class RequestValidation(_Check):
    """The request is at most ``max_bytes`` (serialized; else
    PAYLOAD_TOO_LARGE, the one size error of every binding: gRPC
    RESOURCE_EXHAUSTED, HTTP 413) and follows the proto's rules
    (:func:`a2a_grpc.protocol._validation.validate_request`, spec §5.7; else
    INVALID_PARAMS with field violations)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    def check(self, call: CallContext, request: ProtoMessage) -> None:
        size = request.ByteSize()
        if size > self.max_bytes:
            raise A2AError(
                ErrorCode.PAYLOAD_TOO_LARGE,
                f"request is {size} bytes; the limit is {self.max_bytes} bytes (max_message_bytes)",
                metadata={"limitBytes": str(self.max_bytes)},
            )
        validate_request(request)


class Capability(enum.Enum):
    """An optional capability of the Agent Card (spec §4.4.3, §3.3.4)."""

    STREAMING = "streaming"
    PUSH_NOTIFICATIONS = "pushNotifications"
    EXTENDED_AGENT_CARD = "extendedAgentCard"


#: The one table: the RPCs that need a capability, by RPC name.
REQUIRED_CAPABILITY: Mapping[str, Capability] = {
    "SendStreamingMessage": Capability.STREAMING,
    "SubscribeToTask": Capability.STREAMING,
    "CreateTaskPushNotificationConfig": Capability.PUSH_NOTIFICATIONS,
    "GetTaskPushNotificationConfig": Capability.PUSH_NOTIFICATIONS,
    "ListTaskPushNotificationConfigs": Capability.PUSH_NOTIFICATIONS,
    "DeleteTaskPushNotificationConfig": Capability.PUSH_NOTIFICATIONS,
    "GetExtendedAgentCard": Capability.EXTENDED_AGENT_CARD,
}


def require_capability(capability: Capability, card: pb.AgentCard, *, push: bool) -> None:
    """Raises unless ``card`` declares ``capability`` (spec §3.3.4): streaming
    and the extended agent card → UNSUPPORTED_OPERATION; push notifications
    (declared *and* ``push``: a delivery sink exists) →
    PUSH_NOTIFICATION_NOT_SUPPORTED."""
    caps = card.capabilities
    if capability is Capability.STREAMING and not caps.streaming:
        raise A2AError(ErrorCode.UNSUPPORTED_OPERATION, "this agent does not support streaming")
    if capability is Capability.PUSH_NOTIFICATIONS and not (caps.push_notifications and push):
        raise A2AError(ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED)
    if capability is Capability.EXTENDED_AGENT_CARD and not caps.extended_agent_card:
        raise A2AError(ErrorCode.UNSUPPORTED_OPERATION, "this agent has no extended agent card")


def require_push(card: pb.AgentCard, push: object | None) -> None:
    """PUSH_NOTIFICATION_NOT_SUPPORTED unless ``card`` declares push
    notifications and ``push`` (the delivery sink) is set; for a push config
    inline in a message (spec §3.1.1)."""
    require_capability(Capability.PUSH_NOTIFICATIONS, card, push=push is not None)


class CapabilityGate(_Check):
    """Refuses an RPC of :data:`REQUIRED_CAPABILITY` when the card does not
    declare its capability (see :func:`require_capability`). ``push``: a
    push delivery sink exists."""

    def __init__(self, card: CardSource, *, push: bool) -> None:
        self.card = card
        self.push = push

    def check(self, call: CallContext, request: ProtoMessage) -> None:
        capability = REQUIRED_CAPABILITY.get(call.rpc_name)
        if capability is not None:
            require_capability(capability, self.card(), push=self.push)
