"""The request path's fast paths give the same answers as the plain ones they replaced."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.protobuf import message_factory

from a2a_grpc.context import CallContext
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import _validation as validation
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import new_id, new_task_id, now_timestamp, pb
from tests.randmsg import fill


def test_now_timestamp_is_the_current_whole_millisecond() -> None:
    for _ in range(200):
        before = time.time_ns() // 1_000_000
        ts = now_timestamp()
        after = time.time_ns() // 1_000_000
        millis = ts.seconds * 1000 + ts.nanos // 1_000_000
        assert ts.nanos % 1_000_000 == 0
        assert before <= millis <= after
        assert ts.ToJsonString().endswith("Z")


def test_new_id_is_a_random_version_4_uuid_in_its_canonical_form() -> None:
    ids = {new_id() for _ in range(2000)}
    assert len(ids) == 2000
    for value in ids:
        parsed = uuid.UUID(value)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == value


def test_new_task_id_is_a_time_ordered_version_7_uuid_of_the_current_millisecond() -> None:
    before = time.time_ns() // 1_000_000
    ids = [new_task_id() for _ in range(2000)]
    after = time.time_ns() // 1_000_000
    assert len(set(ids)) == 2000
    for value in ids:
        parsed = uuid.UUID(value)
        assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
        assert str(parsed) == value
        assert before <= parsed.int >> 80 <= after
    # Ids of later milliseconds sort after earlier ones (the SQL store's B-trees append).
    stamps = [uuid.UUID(v).int >> 80 for v in sorted(ids)]
    assert stamps == sorted(stamps)
    time.sleep(0.002)
    assert new_task_id() > max(ids)


# ---------------------------------------------------------------- validation plans


def _a2a_types() -> list[Any]:
    out: list[Any] = []

    def walk(desc: Any) -> None:
        if not desc.GetOptions().map_entry:
            out.append(desc)
            for nested in desc.nested_types:
                walk(nested)

    for desc in pb.DESCRIPTOR.message_types_by_name.values():
        walk(desc)
    return out


A2A_TYPES = _a2a_types()


def _violations(walk: Any, msg: Any) -> list[tuple[str, str]]:
    out: list[validation.FieldViolation] = []
    walk(msg, "", out)
    return [(v.field, v.description) for v in out]


@pytest.mark.parametrize("desc", A2A_TYPES, ids=[d.name for d in A2A_TYPES])
def test_validation_plans_find_the_same_violations_in_the_same_order(desc: Any) -> None:
    cls = message_factory.GetMessageClass(desc)
    rng = random.Random(desc.full_name)
    assert _violations(validation._walk, cls()) == _violations(validation._walk_reference, cls())
    for i in range(80):
        msg = fill(cls(), rng, depth=1 + i % 5)
        assert _violations(validation._walk, msg) == _violations(validation._walk_reference, msg), msg


@pytest.mark.parametrize("desc", A2A_TYPES, ids=[d.name for d in A2A_TYPES])
def test_the_generated_check_passes_exactly_the_messages_without_violations(desc: Any) -> None:
    cls = message_factory.GetMessageClass(desc)
    passes = validation._passes(desc)
    rng = random.Random("passes " + desc.full_name)
    assert passes(cls()) == (not _violations(validation._walk, cls()))
    for i in range(120):
        msg = fill(cls(), rng, depth=1 + i % 5)
        assert passes(msg) == (not _violations(validation._walk, msg)), msg


def test_check_id_refuses_what_it_refused_before() -> None:
    bad = ["a/b", "a:b", "a\nb", "\x7f", "x" * 257, "\x00"]
    assert all(validation.check_id(v) for v in bad)
    assert validation.check_id("x" * 256) is None
    assert validation.check_id("8af23c6a-527f-4d17-b1fd-a92a9586da3e") is None
    assert validation.check_id("ünïcode ok") is None


def test_validation_plans_stop_at_the_violation_cap_like_the_walk() -> None:
    # Many empty parts and bad roles: the cap (20) is reached in the middle of a field.
    for n in (5, 9, 10, 11, 19, 20, 21, 30):
        msg = pb.Message(role=77, task_id="a/b", parts=[pb.Part() for _ in range(n)])
        req = pb.SendMessageRequest(message=msg, tenant="t:1")
        req.configuration.history_length = -1
        got = _violations(validation._walk, req)
        assert got == _violations(validation._walk_reference, req)
        assert not validation._passes(req.DESCRIPTOR)(req)
        assert len(got) >= min(n, 20)
    task = pb.Task(history=[pb.Message(parts=[pb.Part()] * 3) for _ in range(8)])
    assert _violations(validation._walk, task) == _violations(validation._walk_reference, task)


def test_validate_request_still_raises_invalid_params() -> None:
    with pytest.raises(A2AError) as err:
        validation.validate_request(pb.SendMessageRequest(message=pb.Message(parts=[pb.Part()])))
    assert err.value.code == ErrorCode.INVALID_PARAMS
    assert [v.field for v in err.value.field_violations] == [
        "message.message_id",
        "message.role",
        "message.parts[0]",
    ]


# ---------------------------------------------------------------- uncancellable _apply


class _GatedStore(InMemoryTaskStore):
    """An in-memory store whose updates of a WORKING task with a status
    message wait for ``gate`` (a slow write in progress)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def update(self, write: TaskWrite) -> int:
        status = write.task.status
        if write.expected_version and status.state == pb.TASK_STATE_WORKING and status.HasField("message"):
            self.waiting.set()
            await self.gate.wait()
        return await super().update(write)


class _TwoStepAgent(AgentExecutor):
    card = pb.AgentCard(name="two-step", capabilities=pb.AgentCapabilities(streaming=True))

    def __init__(self) -> None:
        self.cancelled = False

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
        try:
            yield ctx.status(pb.TASK_STATE_WORKING)
            yield ctx.status(pb.TASK_STATE_WORKING, "halfway")
            await asyncio.sleep(30)
            yield ctx.status(pb.TASK_STATE_COMPLETED, "done")
        except asyncio.CancelledError:
            self.cancelled = True
            raise


@pytest.mark.parametrize("reason", ["cancel", "shutdown"])
async def test_an_interruption_during_a_store_write_waits_for_the_write(reason: str) -> None:
    store = _GatedStore()
    await store.open()
    agent = _TwoStepAgent()
    handler = RequestHandler(agent, store, agent.card)
    call = CallContext.from_metadata("/lf.a2a.v1.A2AService/SendMessage", (("a2a-version", "1.0"),))
    req = pb.SendMessageRequest(
        message=pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="go")]),
        configuration=pb.SendMessageConfiguration(return_immediately=True),
    )
    task = (await handler.send_message(req, call)).task
    await asyncio.wait_for(store.waiting.wait(), 5)  # _apply is inside store.update
    cancel_call = CallContext.from_metadata("/lf.a2a.v1.A2AService/CancelTask", (("a2a-version", "1.0"),))
    if reason == "cancel":
        stopping = asyncio.ensure_future(handler.cancel_task(pb.CancelTaskRequest(id=task.id), cancel_call))
    else:
        stopping = asyncio.ensure_future(handler.close(grace_seconds=0))
    for _ in range(20):  # the interruption is in, the write still waits
        await asyncio.sleep(0)
    store.gate.set()
    await asyncio.wait_for(stopping, 5)
    stored = await store.get(task.id, call.owner)
    assert stored is not None
    texts = [p.text for m in stored.task.history for p in m.parts]
    assert "halfway" in texts  # the interrupted write was completed, not cut short
    want = pb.TASK_STATE_CANCELED if reason == "cancel" else pb.TASK_STATE_FAILED
    assert stored.task.status.state == want
    assert not agent.cancelled  # stopped between events: the agent was never inside an await
    await handler.close()
    await store.close()


class _AskAgent(AgentExecutor):
    """Asks for input on a new task; completes on the answer."""

    card = pb.AgentCard(name="ask", capabilities=pb.AgentCapabilities())

    def __init__(self) -> None:
        self.runs = 0

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
        self.runs += 1
        if ctx.task is None:
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "which one?")
        else:
            yield ctx.status(pb.TASK_STATE_COMPLETED, "done")


class _SlowReadStore(InMemoryTaskStore):
    """``get`` waits for ``gate`` while ``slow`` is set (a read in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = False
        self.gate = asyncio.Event()
        self.reading = asyncio.Event()

    async def get(self, task_id: str, owner: Any) -> Any:
        if self.slow:
            self.slow = False
            found = await super().get(task_id, owner)
            self.reading.set()
            await self.gate.wait()
            return found
        return await super().get(task_id, owner)


async def test_a_follow_up_read_before_the_task_ended_does_not_run_the_agent() -> None:
    store = _SlowReadStore()
    await store.open()
    agent = _AskAgent()
    handler = RequestHandler(agent, store, agent.card)
    call = CallContext.from_metadata("/lf.a2a.v1.A2AService/SendMessage", (("a2a-version", "1.0"),))

    def send(text: str, task_id: str = "") -> Any:
        msg = pb.Message(message_id=text, role=pb.ROLE_USER, parts=[pb.Part(text=text)], task_id=task_id)
        return handler.send_message(pb.SendMessageRequest(message=msg), call)

    task = (await send("ask")).task
    assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    store.slow = True
    late = asyncio.ensure_future(send("late", task.id))  # reads INPUT_REQUIRED, then waits
    await asyncio.wait_for(store.reading.wait(), 5)
    done = (await send("answer", task.id)).task  # meanwhile another answer completes the task
    assert done.status.state == pb.TASK_STATE_COMPLETED
    for _ in range(100):  # let that execution end entirely (no longer busy)
        await asyncio.sleep(0)
    store.gate.set()
    with pytest.raises(A2AError) as err:
        await late
    assert err.value.code == ErrorCode.UNSUPPORTED_OPERATION
    assert agent.runs == 2  # the late message never reached the agent
    await handler.close()
    await store.close()
