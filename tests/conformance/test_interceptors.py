"""The server's own interceptors (``ServerConfig(interceptors=[...])``) run on
every binding: one that records calls and one that rejects them, in the place
a2a_grpc.core._interceptors documents (after the built-in steps, before the
operation; ``after`` in reverse order, once per call, streams included)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.conformance.clients import Binding, collect, collect_with_error
from tests.conformance.conftest import _binding
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")


class Record(CallInterceptor):
    """Records every call: (rpc, "before") and (rpc, "after", outcome)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, ...]] = []

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        self.log.append((call.rpc_name, "before"))

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        kind = outcome.code.reason if isinstance(outcome, A2AError) else type(outcome).__name__
        self.log.append((call.rpc_name, "after", kind))


class Reject(CallInterceptor):
    """Refuses calls that carry ``x-reject``; its ``after`` must never see them."""

    def __init__(self) -> None:
        self.afters = 0

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        if call.header("x-reject") is not None:
            raise A2AError(ErrorCode.PERMISSION_DENIED, "rejected by the test interceptor")

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        self.afters += 1


class Served:
    def __init__(self) -> None:
        self.record = Record()
        self.reject = Reject()
        self.server = A2AServer(
            EchoAgent(),
            InMemoryTaskStore(),
            ServerConfig(grpc_port=0, http_port=0, grace_seconds=1, interceptors=[self.record, self.reject]),
        )


@pytest_asyncio.fixture(scope="module", loop_scope="package")
async def served() -> AsyncIterator[Served]:
    s = Served()
    await s.server.start()
    try:
        yield s
    finally:
        await s.server.stop(1)


@pytest_asyncio.fixture(params=("grpc", "jsonrpc", "rest"), loop_scope="package")
async def client(request: pytest.FixtureRequest, served: Served) -> AsyncIterator[Binding]:
    async for b in _binding(request.param, served.server):
        yield b


async def test_a_recording_interceptor_sees_every_call_once(client: Binding, served: Served) -> None:
    log = served.record.log
    log.clear()
    await client.call("SendMessage", send("hello"))
    with pytest.raises(A2AError):
        await client.call("GetTask", pb.GetTaskRequest(id="nope"))
    events = await collect(client, "SendStreamingMessage", send("hello"))
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    _events, err = await collect_with_error(client, "SubscribeToTask", pb.SubscribeToTaskRequest(id="nope"))
    assert err is not None and err.code is ErrorCode.TASK_NOT_FOUND
    assert log == [
        ("SendMessage", "before"),
        ("SendMessage", "after", "SendMessageResponse"),
        ("GetTask", "before"),
        ("GetTask", "after", "TASK_NOT_FOUND"),
        ("SendStreamingMessage", "before"),
        ("SendStreamingMessage", "after", "NoneType"),
        ("SubscribeToTask", "before"),
        ("SubscribeToTask", "after", "TASK_NOT_FOUND"),
    ]
    log.clear()  # a call the built-in steps refuse never reaches the server's own
    with pytest.raises(A2AError) as exc:
        await client.call("ListTasks", pb.ListTasksRequest(), headers={"A2A-Version": "9.9"})
    assert exc.value.code is ErrorCode.VERSION_NOT_SUPPORTED
    assert log == []


async def test_a_rejecting_interceptor_ends_the_call_before_the_operation(
    client: Binding, served: Served
) -> None:
    before = (await client.call("ListTasks", pb.ListTasksRequest())).total_size
    served.record.log.clear()
    afters = served.reject.afters
    reject = {"x-reject": "1"}
    for rpc in ("SendMessage", "SendStreamingMessage"):
        if rpc == "SendMessage":
            with pytest.raises(A2AError) as exc:
                await client.call(rpc, send("hello"), headers=reject)
            err: A2AError | None = exc.value
        else:
            events, err = await collect_with_error(client, rpc, send("hello"), headers=reject)
            assert events == []
        assert err is not None and err.code is ErrorCode.PERMISSION_DENIED
        assert err.message == "rejected by the test interceptor"
    assert (await client.call("ListTasks", pb.ListTasksRequest())).total_size == before  # the agent never ran
    assert served.record.log[:4] == [
        ("SendMessage", "before"),
        ("SendMessage", "after", "PERMISSION_DENIED"),
        ("SendStreamingMessage", "before"),
        ("SendStreamingMessage", "after", "PERMISSION_DENIED"),
    ]
    assert served.reject.afters == afters + 1  # the ListTasks above; never a rejected call
