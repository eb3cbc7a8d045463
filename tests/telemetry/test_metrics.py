"""Prometheus metrics of a real A2AServer (issue 15 §2): ``GET /metrics``
scraped over HTTP and read with prometheus_client's own parser; every
binding is called with the project's A2AClient over real sockets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.push.conftest import Receiver

#: A task of the bus tests: (tenant, user, task id).
KEY = ("", "", "t")


SERVICE = "lf.a2a.v1.A2AService"
BINDINGS = ("grpc", "jsonrpc", "rest")


class Scrape:
    """One scrape: the samples by (name, labels)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.samples: list[tuple[str, dict[str, str], float]] = [
            (s.name, s.labels, s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels``."""
        return sum(v for n, lab, v in self.samples if n == name and labels.items() <= lab.items())


async def scrape(url: str) -> Scrape:
    async with aiohttp.ClientSession() as s, s.get(url) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain; version=")
        return Scrape(await resp.text())


def client(server: A2AServer, binding: str) -> A2AClient:
    url = f"127.0.0.1:{server.grpc_port}" if binding == "grpc" else f"http://127.0.0.1:{server.http_port}"
    if binding == "jsonrpc":
        url += "/"
    return A2AClient.for_interface(url, binding, timeout=10)


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    config = ServerConfig(grpc_port=0, http_port=0, metrics=True, grace_seconds=0.5)
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), config)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def test_rpc_counters_move_by_exactly_the_calls_made(server: A2AServer) -> None:
    url = f"http://127.0.0.1:{server.http_port}/metrics"
    before = await scrape(url)
    assert before.value("grpc_server_handled_total") == 0
    for binding in BINDINGS:
        async with client(server, binding) as c:
            sent = await c.send_message("echo hi")
            await c.get_task(sent.task.id)
            await c.get_task(sent.task.id)
            with pytest.raises(A2AError) as err:
                await c.get_task("no-such-task")
            assert err.value.code is ErrorCode.TASK_NOT_FOUND
            events = [e async for e in c.send_streaming_message("echo streamed")]
            assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    after = await scrape(url)
    for binding in BINDINGS:
        common = {"binding": binding, "grpc_service": SERVICE}
        handled: dict[tuple[str, str], float] = {
            (lab["grpc_method"], lab["grpc_code"]): v
            for n, lab, v in after.samples
            if n == "grpc_server_handled_total" and lab["binding"] == binding
        }
        assert handled == {
            ("SendMessage", "OK"): 1,
            ("GetTask", "OK"): 2,
            ("GetTask", "NOT_FOUND"): 1,
            ("SendStreamingMessage", "OK"): 1,
        }, binding
        assert after.value("grpc_server_started_total", grpc_method="GetTask", **common) == 3
        stream = {"grpc_method": "SendStreamingMessage", "grpc_type": "server_stream", **common}
        assert after.value("grpc_server_started_total", **stream) == 1
        assert after.value("grpc_server_handling_seconds_count", grpc_method="GetTask", **common) == 3
        assert after.value("grpc_server_handling_seconds_count", grpc_code="NOT_FOUND", **common) == 1
        assert after.value("a2a_streams_open", binding=binding) == 0
    # two tasks per binding, each WORKING? no: echo stores the task, then COMPLETED
    created = after.value("a2a_tasks_created_total")
    assert created == 6
    assert after.value("a2a_task_transitions_total", state="completed") == 6
    assert after.value("a2a_executions_active") == 0
    assert after.value("a2a_stream_subscribers") == 0
    assert after.value("a2a_store_operation_seconds_count", operation="create", outcome="ok") == 6
    assert after.value("a2a_store_operation_seconds_count", operation="get", outcome="ok") >= 6
    (build,) = [lab for n, lab, _ in after.samples if n == "a2a_build_info"]
    assert build["version"] == "0.1.0" and build["grpcio"].startswith("1.")


async def test_open_streams_and_active_executions_while_a_task_runs(server: A2AServer) -> None:
    url = f"http://127.0.0.1:{server.http_port}/metrics"
    agent = server.executor
    assert isinstance(agent, ScriptedAgent)
    async with client(server, "rest") as c, client(server, "grpc") as g:
        stream = c.send_streaming_message("gate g1")
        first = await anext(stream)
        task_id = first.task.id
        await asyncio.wait_for(agent.started("g1").wait(), 5)
        sub = g.subscribe_to_task(task_id)
        await anext(sub)  # the snapshot: the subscriber is registered
        during = await scrape(url)
        assert during.value("a2a_streams_open", binding="rest", grpc_method="SendStreamingMessage") == 1
        assert during.value("a2a_streams_open", binding="grpc", grpc_method="SubscribeToTask") == 1
        assert during.value("a2a_executions_active") == 1
        assert during.value("a2a_stream_subscribers") == 2
        assert during.value("grpc_server_handled_total") == 0  # nothing has ended yet
        agent.gate("g1").set()
        _ = [e async for e in stream]
        _ = [e async for e in sub]
    after = await scrape(url)
    assert after.value("a2a_streams_open") == 0
    assert after.value("a2a_executions_active") == 0
    assert after.value("grpc_server_handled_total", grpc_code="OK") == 2
    assert after.value("a2a_task_transitions_total", state="completed") == 1


async def test_separate_metrics_port() -> None:
    config = ServerConfig(grpc_port=0, http_port=0, metrics=True, metrics_port=0, grace_seconds=0.5)
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), config)
    await srv.start()
    try:
        assert srv.metrics_port not in (None, 0, srv.http_port)
        async with client(srv, "jsonrpc") as c:
            await c.send_message("echo x")
        got = await scrape(f"http://127.0.0.1:{srv.metrics_port}/metrics")
        assert got.value("grpc_server_handled_total", binding="jsonrpc", grpc_code="OK") == 1
        async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{srv.http_port}/metrics") as resp:
            assert resp.status == 404  # only on the metrics port
    finally:
        await srv.stop()


async def test_no_metrics_route_when_off() -> None:
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        assert srv.metrics is None
        async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{srv.http_port}/metrics") as resp:
            assert resp.status == 404
    finally:
        await srv.stop()


FAST: dict[str, Any] = {"allow": ["127.0.0.1"], "poll_interval_seconds": 0.05}


async def _push_server(store: InMemoryTaskStore, **dispatch: Any) -> A2AServer:
    dispatcher = PushDispatcher(store, **{**FAST, **dispatch})
    config = ServerConfig(grpc_port=0, http_port=0, metrics=True, grace_seconds=0.5)
    srv = A2AServer(ScriptedAgent(), store, config, push=dispatcher)
    await srv.start()
    return srv


def _with_webhook(url: str) -> pb.SendMessageConfiguration:
    return pb.SendMessageConfiguration(task_push_notification_config=pb.TaskPushNotificationConfig(url=url))


async def _until(pred: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await pred():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_dead_letters_and_outbox_depth_after_a_failing_webhook(receiver: Receiver) -> None:
    receiver.always["/fail"] = 500
    store = InMemoryTaskStore()
    srv = await _push_server(store, max_attempts=2, base_backoff_seconds=0.01, max_backoff_seconds=0.02)
    try:
        async with client(srv, "grpc") as c:
            await c.send_message("echo hook", configuration=_with_webhook(receiver.url("/fail")))

        async def all_dead() -> bool:
            return await store.outbox_count("pending") == 0 and await store.outbox_count("dead") > 0

        await _until(all_dead)
        events = {h.headers["A2A-Notification-Id"] for h in receiver.on("/fail")}
        dead = await store.outbox_count("dead")
        assert len(events) == dead and len(receiver.on("/fail")) == 2 * dead
        got = await scrape(f"http://127.0.0.1:{srv.http_port}/metrics")
        assert got.value("a2a_push_attempts_total") == 2 * dead
        assert got.value("a2a_push_retries_total") == dead
        assert got.value("a2a_push_dead_letters_total") == dead
        assert got.value("a2a_push_delivered_total") == 0
        assert got.value("a2a_push_outbox_rows", state="dead") == dead
        assert got.value("a2a_push_outbox_rows", state="pending") == 0
        assert got.value("a2a_push_outbox_oldest_due_seconds") == 0
        assert got.value("a2a_push_attempt_seconds_count") == 2 * dead
    finally:
        await srv.stop()


async def test_outbox_depth_while_deliveries_wait_for_a_retry(receiver: Receiver) -> None:
    receiver.always["/down"] = 503
    store = InMemoryTaskStore()
    srv = await _push_server(store, max_attempts=5, base_backoff_seconds=60, max_backoff_seconds=60)
    try:
        async with client(srv, "rest") as c:
            await c.send_message("echo hook", configuration=_with_webhook(receiver.url("/down")))
        await receiver.wait_for(lambda: len(receiver.on("/down")) >= 1)
        url = f"http://127.0.0.1:{srv.http_port}/metrics"

        async def head_retried() -> bool:
            return (await scrape(url)).value("a2a_push_retries_total") == 1

        await _until(head_retried)
        pending = await store.outbox_count("pending")
        assert pending >= 2  # the head waits a minute; the later events wait behind it
        got = await scrape(url)
        assert got.value("a2a_push_outbox_rows", state="pending") == pending
        assert got.value("a2a_push_attempts_total") == 1
        assert got.value("a2a_push_dead_letters_total") == 0
        assert 0 <= got.value("a2a_push_outbox_oldest_due_seconds") < 60
    finally:
        await srv.stop()


async def test_subscriber_closed_for_lagging_is_counted() -> None:
    from a2a_grpc.core._events import EventBus
    from a2a_grpc.telemetry._metrics import Metrics

    metrics = Metrics()
    bus = EventBus(buffer=2, observer=metrics)
    metrics.count_subscribers(bus.total_subscribers)
    slow, fast = bus.subscribe(KEY), bus.subscribe(KEY)
    assert Scrape((await metrics.exposition()).decode()).value("a2a_stream_subscribers") == 2
    for version in (1, 2):
        bus.publish(KEY, version, pb.StreamResponse())
    reader = aiter(fast)  # held: the fast subscriber stays open
    for _ in range(2):
        await anext(reader)
    bus.publish(KEY, 3, pb.StreamResponse())  # the slow one holds 2 already: it is closed
    got = Scrape((await metrics.exposition()).decode())
    assert got.value("a2a_stream_subscribers_lagged_total") == 1
    assert got.value("a2a_stream_subscribers") == 1
    with pytest.raises(A2AError) as err:
        _ = [e async for e in slow]
    assert err.value.code is ErrorCode.RESOURCE_EXHAUSTED
    fast.close()
