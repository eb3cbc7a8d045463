"""The interceptor chain without a transport: its order, what ``after`` sees,
and the built-in steps as the servicer runs them (no server is started; the
servicer is driven with an in-test RpcContext)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, NoReturn

import pytest
from google.protobuf.message import Message as ProtoMessage
from google.rpc import status_pb2

from a2a_grpc.bindings._servicer import SERVICE, A2AServicer
from a2a_grpc.context import CallContext
from a2a_grpc.core._handler import HandlerConfig, RequestHandler
from a2a_grpc.core._interceptors import (
    REQUIRED_CAPABILITY,
    CallInterceptor,
    Capability,
    InterceptorChain,
    Outcome,
)
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent

REQUIRED = "https://example.com/ext/required/v1"
CALL = CallContext(method="/lf.a2a.v1.A2AService/GetTask")


class Step(CallInterceptor):
    """Records ``before``/``after`` in a shared log; optionally refuses."""

    def __init__(self, name: str, log: list[str], *, refuse: bool = False, replace: bool = False) -> None:
        self.name, self.log, self.refuse, self.replace = name, log, refuse, replace

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        self.log.append(f"{self.name}.before")
        if self.refuse:
            raise A2AError(ErrorCode.PERMISSION_DENIED, f"{self.name} refuses")

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        kind = type(outcome).__name__ if not isinstance(outcome, A2AError) else outcome.code.name
        self.log.append(f"{self.name}.after({kind})")
        if self.replace:
            raise A2AError(ErrorCode.RESOURCE_EXHAUSTED, f"{self.name} replaces")


async def test_before_in_order_after_in_reverse() -> None:
    log: list[str] = []

    async def op(req: pb.GetTaskRequest, call: CallContext) -> pb.Task:
        log.append("operation")
        return pb.Task(id=req.id)

    chain = InterceptorChain([Step("a", log), Step("b", log)])
    assert await chain.unary(CALL, pb.GetTaskRequest(id="t"), op) == pb.Task(id="t")
    assert log == ["a.before", "b.before", "operation", "b.after(Task)", "a.after(Task)"]


async def test_a_refusal_ends_the_call_and_only_earlier_steps_see_it() -> None:
    log: list[str] = []

    async def op(req: pb.GetTaskRequest, call: CallContext) -> pb.Task:
        log.append("operation")
        return pb.Task()

    chain = InterceptorChain([Step("a", log), Step("b", log, refuse=True), Step("c", log)])
    with pytest.raises(A2AError) as err:
        await chain.unary(CALL, pb.GetTaskRequest(id="t"), op)
    assert err.value.code is ErrorCode.PERMISSION_DENIED
    assert log == ["a.before", "b.before", "a.after(PERMISSION_DENIED)"]


async def test_operation_errors_reach_after_and_unexpected_ones_become_internal() -> None:
    log: list[str] = []

    async def missing(req: pb.GetTaskRequest, call: CallContext) -> pb.Task:
        raise A2AError(ErrorCode.TASK_NOT_FOUND)

    async def broken(req: pb.GetTaskRequest, call: CallContext) -> pb.Task:
        raise RuntimeError("bug")

    chain = InterceptorChain([Step("a", log)])
    for op, code in ((missing, ErrorCode.TASK_NOT_FOUND), (broken, ErrorCode.INTERNAL)):
        with pytest.raises(A2AError) as err:
            await chain.unary(CALL, pb.GetTaskRequest(id="t"), op)
        assert err.value.code is code
    assert log == ["a.before", "a.after(TASK_NOT_FOUND)", "a.before", "a.after(INTERNAL)"]


async def test_an_after_may_replace_the_outcome() -> None:
    log: list[str] = []

    async def op(req: pb.GetTaskRequest, call: CallContext) -> pb.Task:
        return pb.Task()

    chain = InterceptorChain([Step("outer", log), Step("inner", log, replace=True)])
    with pytest.raises(A2AError) as err:
        await chain.unary(CALL, pb.GetTaskRequest(id="t"), op)
    assert err.value.code is ErrorCode.RESOURCE_EXHAUSTED
    assert log == ["outer.before", "inner.before", "inner.after(Task)", "outer.after(RESOURCE_EXHAUSTED)"]


async def _events(n: int, log: list[str], fail: bool = False) -> AsyncIterator[pb.StreamResponse]:
    try:
        for i in range(n):
            log.append(f"event {i}")
            yield pb.StreamResponse(task=pb.Task(id=str(i)))
        if fail:
            raise A2AError(ErrorCode.UNSUPPORTED_OPERATION)
    finally:
        log.append("events closed")


async def test_a_stream_runs_before_first_and_after_once_at_its_end() -> None:
    log: list[str] = []
    chain = InterceptorChain([Step("a", log)])
    req = pb.SubscribeToTaskRequest(id="t")
    got = [e.task.id async for e in chain.stream(CALL, req, lambda r, c: _events(2, log))]
    assert got == ["0", "1"]
    assert log == ["a.before", "event 0", "event 1", "events closed", "a.after(NoneType)"]

    log.clear()
    seen = []
    with pytest.raises(A2AError) as err:
        async for e in chain.stream(CALL, req, lambda r, c: _events(1, log, fail=True)):
            seen.append(e)  # noqa: PERF401 - the events before the error
    assert err.value.code is ErrorCode.UNSUPPORTED_OPERATION and len(seen) == 1
    assert log == ["a.before", "event 0", "events closed", "a.after(UNSUPPORTED_OPERATION)"]

    log.clear()  # the caller goes away after the first event
    stream = chain.stream(CALL, req, lambda r, c: _events(5, log))
    assert (await anext(stream)).task.id == "0"
    await stream.aclose()
    assert log == ["a.before", "event 0", "events closed", "a.after(NoneType)"]

    log.clear()  # refused before the first event: the operation never starts
    refusing = InterceptorChain([Step("a", log), Step("b", log, refuse=True)])
    with pytest.raises(A2AError):
        async for _ in refusing.stream(CALL, req, lambda r, c: _events(1, log)):
            pass
    assert log == ["a.before", "b.before", "a.after(PERMISSION_DENIED)"]


# --------------------------------------------------- the servicer's built-ins


class Aborted(Exception):
    def __init__(self, status: status_pb2.Status) -> None:
        self.status = status


class FakeContext:
    """The RpcContext subset, in memory."""

    def __init__(self, metadata: Sequence[tuple[str, str]]) -> None:
        self.metadata = tuple(metadata)
        self.initial: list[tuple[str, str | bytes]] = []

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]]:
        return self.metadata

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> NoReturn:
        raise Aborted(status_pb2.Status.FromString(dict(trailing_metadata)["grpc-status-details-bin"]))

    def set_trailing_metadata(self, trailing_metadata: Sequence[tuple[str, str | bytes]]) -> None:
        pass

    async def send_initial_metadata(self, initial_metadata: Sequence[tuple[str, str | bytes]]) -> None:
        self.initial.extend(initial_metadata)

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def time_remaining(self) -> float | None:
        return None


def _card(**caps: Any) -> pb.AgentCard:
    card = pb.AgentCard()
    card.CopyFrom(ScriptedAgent.card)
    card.capabilities.Clear()
    card.capabilities.MergeFrom(pb.AgentCapabilities(**caps))
    return card


def _servicer(card: pb.AgentCard, **kw: Any) -> A2AServicer:
    handler = RequestHandler(
        ScriptedAgent(card), InMemoryTaskStore(), card, config=HandlerConfig(strict_version=True), **kw
    )
    return A2AServicer(handler)


#: One request per RPC, each valid on its own (task "t1" does not exist).
REQUESTS: dict[str, ProtoMessage] = {
    "SendMessage": pb.SendMessageRequest(
        message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="echo hi")])
    ),
    "SendStreamingMessage": pb.SendMessageRequest(
        message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="echo hi")])
    ),
    "GetTask": pb.GetTaskRequest(id="t1"),
    "ListTasks": pb.ListTasksRequest(),
    "CancelTask": pb.CancelTaskRequest(id="t1"),
    "SubscribeToTask": pb.SubscribeToTaskRequest(id="t1"),
    "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig(
        task_id="t1", url="https://example.com/h"
    ),
    "GetTaskPushNotificationConfig": pb.GetTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
    "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsRequest(task_id="t1"),
    "GetExtendedAgentCard": pb.GetExtendedAgentCardRequest(),
    "DeleteTaskPushNotificationConfig": pb.DeleteTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
}


async def _reason(
    servicer: A2AServicer, rpc: str, request: ProtoMessage, md: Sequence[tuple[str, str]]
) -> str:
    """The ErrorInfo reason the RPC ends with ("" if it succeeds)."""
    method = getattr(servicer, rpc)
    context = FakeContext(md)
    try:
        if SERVICE.methods_by_name[rpc].server_streaming:
            async for _ in method(request, context):
                pass
        else:
            await method(request, context)
    except Aborted as exc:
        return A2AError.from_status(exc.status).code.reason
    return ""


def _bad(request: ProtoMessage) -> ProtoMessage:
    """``request`` made invalid the same way for every RPC: a tenant longer than ids may be."""
    out = type(request)()
    out.CopyFrom(request)
    out.tenant = "x" * 300  # type: ignore[attr-defined]
    return out


def test_every_rpc_has_a_request() -> None:
    assert set(REQUESTS) == {m.name for m in SERVICE.methods}


@pytest.mark.parametrize(
    ("version", "extensions", "invalid", "want"),
    [
        ("9.9", "", False, "VERSION_NOT_SUPPORTED"),
        ("9.9", "", True, "VERSION_NOT_SUPPORTED"),
        ("", REQUIRED, True, "VERSION_NOT_SUPPORTED"),  # strict: no version means 0.3
        ("1.0", "", True, "EXTENSION_SUPPORT_REQUIRED"),
        ("1.0", REQUIRED, True, "INVALID_PARAMS"),
    ],
)
async def test_the_same_bad_request_gets_the_same_error_on_every_rpc(
    version: str, extensions: str, invalid: bool, want: str
) -> None:
    """A card without streaming, push or an extended card, requiring an
    extension: the earliest failing step decides, whatever the RPC."""
    card = _card(streaming=False, extensions=[pb.AgentExtension(uri=REQUIRED, required=True)])
    servicer = _servicer(card)
    md = [(k, v) for k, v in (("a2a-version", version), ("a2a-extensions", extensions)) if v]
    for rpc, request in REQUESTS.items():
        assert await _reason(servicer, rpc, _bad(request) if invalid else request, md) == want, rpc


async def test_the_capability_gate_follows_its_table() -> None:
    card = _card(streaming=False)
    servicer = _servicer(card)
    md = [("a2a-version", "1.0")]
    expected = {
        Capability.STREAMING: "UNSUPPORTED_OPERATION",
        Capability.PUSH_NOTIFICATIONS: "PUSH_NOTIFICATION_NOT_SUPPORTED",
        Capability.EXTENDED_AGENT_CARD: "UNSUPPORTED_OPERATION",
    }
    for rpc, request in REQUESTS.items():
        reason = await _reason(servicer, rpc, request, md)
        if rpc in REQUIRED_CAPABILITY:
            assert reason == expected[REQUIRED_CAPABILITY[rpc]], rpc
        else:
            assert reason in ("", "TASK_NOT_FOUND"), rpc


async def test_extended_card_claimed_but_not_configured() -> None:
    """spec §3.3.4: EXTENDED_AGENT_CARD_NOT_CONFIGURED only for a card that
    claims an extended card the server cannot produce; false or absent is
    UNSUPPORTED_OPERATION."""
    md = [("a2a-version", "1.0")]
    req = pb.GetExtendedAgentCardRequest()
    claimed = _servicer(_card(extended_agent_card=True))
    assert await _reason(claimed, "GetExtendedAgentCard", req, md) == "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    assert await _reason(_servicer(_card()), "GetExtendedAgentCard", req, md) == "UNSUPPORTED_OPERATION"
    assert await _reason(_servicer(_card(extended_agent_card=False)), "GetExtendedAgentCard", req, md) == (
        "UNSUPPORTED_OPERATION"
    )
    extended = _card(extended_agent_card=True)
    extended.name = "extended"
    served = _servicer(_card(extended_agent_card=True), extended_card=extended)
    assert await served.GetExtendedAgentCard(req, FakeContext(md)) == extended


async def test_user_interceptors_run_after_the_built_ins() -> None:
    log: list[str] = []
    card = _card(streaming=True)
    handler = RequestHandler(ScriptedAgent(card), InMemoryTaskStore(), card)
    servicer = A2AServicer(handler, [Step("mine", log)])
    assert await _reason(servicer, "GetTask", pb.GetTaskRequest(id="t1"), [("a2a-version", "9.9")]) == (
        "VERSION_NOT_SUPPORTED"
    )
    assert log == []  # refused by version negotiation: the user's step never ran
    assert await _reason(servicer, "GetTask", pb.GetTaskRequest(id="t1"), [("a2a-version", "1.0")]) == (
        "TASK_NOT_FOUND"
    )
    assert log == ["mine.before", "mine.after(TASK_NOT_FOUND)"]
