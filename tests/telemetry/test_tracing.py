"""OpenTelemetry traces of real A2AServers (issue 15 §1), collected with the
SDK's in-memory exporter: the same server span on every binding, the parent
read from gRPC metadata and HTTP headers alike, the agent's span under it,
push deliveries continuing the trace (``traceparent`` at the webhook, the
context stored with the outbox row on memory and SQLite), and a client →
server A → server B chain that is one trace."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from a2a_grpc.client import A2AClient
from a2a_grpc.context import Owner
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core.ports import OutboxEntry, TaskWrite
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import InMemoryTaskStore, SqlTaskStore
from a2a_grpc.types import Event, pb
from tests.core.agents import ScriptedAgent
from tests.push.conftest import Receiver
from tests.telemetry.test_metrics import BINDINGS, _until, _with_webhook, client

SERVICE = "lf.a2a.v1.A2AService"


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _config(provider: TracerProvider) -> ServerConfig:
    return ServerConfig(grpc_port=0, http_port=0, tracing=True, tracer_provider=provider, grace_seconds=0.5)


@pytest.fixture
async def server(spans: tuple[TracerProvider, InMemorySpanExporter]) -> AsyncIterator[A2AServer]:
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), _config(spans[0]))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_one_server_span_per_call_with_the_same_attributes_on_every_binding(
    server: A2AServer, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    tracer = provider.get_tracer("test")
    async with client(server, "grpc") as c:
        task = (await c.send_message("echo hi")).task
    exporter.clear()
    roots = {}
    for binding in BINDINGS:
        async with client(server, binding) as c:
            with tracer.start_as_current_span(f"caller-{binding}") as root:
                roots[binding] = root.get_span_context()
                await c.get_task(task.id)
                with pytest.raises(A2AError) as err:
                    await c.get_task("no-such-task")
                assert err.value.code is ErrorCode.TASK_NOT_FOUND
    gets = named(exporter, f"{SERVICE}/GetTask")
    assert len(gets) == 6  # one span per call, nothing else named so
    by_binding: dict[str, list[ReadableSpan]] = {}
    for span in gets:
        assert span.kind is SpanKind.SERVER
        by_binding.setdefault(attrs(span)["a2a.binding"], []).append(span)
    assert sorted(by_binding) == sorted(BINDINGS)
    expected_ok = {
        "rpc.system": "grpc",
        "rpc.service": SERVICE,
        "rpc.method": "GetTask",
        "rpc.grpc.status_code": 0,
        "a2a.task_id": task.id,
        "a2a.context_id": task.context_id,
    }
    expected_missing = {
        "rpc.system": "grpc",
        "rpc.service": SERVICE,
        "rpc.method": "GetTask",
        "rpc.grpc.status_code": 5,
        "a2a.task_id": "no-such-task",
        "a2a.error.reason": "TASK_NOT_FOUND",
    }
    for binding, (ok, missing) in by_binding.items():
        assert {k: v for k, v in attrs(ok).items() if k != "a2a.binding"} == expected_ok, binding
        assert {k: v for k, v in attrs(missing).items() if k != "a2a.binding"} == expected_missing, binding
        for span in (ok, missing):  # the caller's traceparent, from gRPC metadata or HTTP headers
            assert span.parent is not None and span.parent.span_id == roots[binding].span_id
            assert span.context.trace_id == roots[binding].trace_id


async def test_agent_execution_is_a_child_span_of_the_call(
    server: A2AServer, spans: tuple[TracerProvider, InMemorySpanExporter], caplog: pytest.LogCaptureFixture
) -> None:
    _, exporter = spans
    for binding in BINDINGS:
        async with client(server, binding) as c:
            await c.send_message("echo hi")
            _ = [e async for e in c.send_streaming_message("echo streamed")]
    await _until(lambda: _async(len(named(exporter, "a2a.execute")) == 6))
    calls = {s.context.span_id: s for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER}
    executions = named(exporter, "a2a.execute")
    seen = set()
    for ex in executions:
        assert ex.parent is not None
        call = calls[ex.parent.span_id]
        assert call.context.trace_id == ex.context.trace_id
        assert attrs(call)["a2a.task_id"] == attrs(ex)["a2a.task_id"]
        assert attrs(ex)["a2a.agent"] == "Scripted"
        assert [e.attributes["a2a.task.state"] for e in ex.events if e.attributes] == [
            "submitted",
            "completed",
        ]
        seen.add((attrs(call)["a2a.binding"], attrs(call)["rpc.method"]))
    assert seen == {(b, m) for b in BINDINGS for m in ("SendMessage", "SendStreamingMessage")}
    # streams end cleanly on every binding (no "Failed to detach context" from OpenTelemetry)
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]


async def _async(value: bool) -> bool:
    return value


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_push_delivery_continues_the_trace_and_sends_traceparent(
    backend: str, receiver: Receiver, tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    store = InMemoryTaskStore() if backend == "memory" else SqlTaskStore(f"sqlite:///{tmp_path}/a.db")
    dispatcher = PushDispatcher(store, allow=["127.0.0.1"], poll_interval_seconds=0.05)
    srv = A2AServer(ScriptedAgent(), store, _config(provider), push=dispatcher)
    await srv.start()
    try:
        with provider.get_tracer("test").start_as_current_span("caller") as root:
            async with client(srv, "jsonrpc") as c:
                sent = await c.send_message("echo hook", configuration=_with_webhook(receiver.url("/hook")))
        await _until(
            lambda: _async(len(named(exporter, "a2a.push.deliver")) == len(receiver.on("/hook")) >= 3)
        )
    finally:
        await srv.stop()
    trace_id = root.get_span_context().trace_id
    (execution,) = named(exporter, "a2a.execute")
    pushes = {s.context.span_id: s for s in named(exporter, "a2a.push.deliver")}
    for hit in receiver.on("/hook"):
        _version, tid, span_id, _flags = hit.headers["traceparent"].split("-")
        assert int(tid, 16) == trace_id
        push = pushes[int(span_id, 16)]  # the webhook's parent is the push span
        assert push.kind is SpanKind.CLIENT
        assert push.parent is not None and push.parent.span_id == execution.context.span_id
        assert attrs(push)["a2a.task_id"] == sent.task.id
        assert attrs(push)["a2a.push.event_id"] == hit.headers["A2A-Notification-Id"]
        assert attrs(push)["http.response.status_code"] == 200


async def test_sqlite_outbox_gains_the_trace_column_on_open(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    store = SqlTaskStore(url)
    await store.open()
    await store.close()
    with sqlite3.connect(tmp_path / "old.db") as db:  # a database from before the column
        db.execute("ALTER TABLE a2a_push_outbox DROP COLUMN trace_context")
    store = SqlTaskStore(url)
    await store.open()
    try:
        with sqlite3.connect(tmp_path / "old.db") as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(a2a_push_outbox)")}
        assert "trace_context" in columns
        task = pb.Task(id="t1", context_id="c1", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
        owner = Owner()
        await store.update(TaskWrite(task, owner))
        tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        await store.update(
            TaskWrite(task, owner, 1, outbox=[OutboxEntry("t1", "cfg", "t1:2", b"\x12\x00", tp)])
        )
        await store.update(TaskWrite(task, owner, 2, outbox=[OutboxEntry("t1", "cfg", "t1:3", b"\x12\x00")]))
        rows = await store.outbox_due(1e12, 10)
        assert [r.entry.trace_context for r in rows] == [tp, ""]
    finally:
        await store.close()


class Relay(AgentExecutor):
    """Server A's agent: asks server B (over ``binding``) and completes with its answer."""

    card = pb.AgentCard(
        name="Relay",
        description="Forwards the message to another agent.",
        version="0.0.1",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="relay", name="Relay", description="Relays.", tags=["test"])],
    )

    def __init__(self) -> None:
        self.target: tuple[str, str] = ("", "")

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        url, binding = self.target
        async with A2AClient.for_interface(url, binding, timeout=10) as b:
            answer = await b.send_message("echo " + ctx.text())
        yield ctx.artifact([answer.task.artifacts[0].parts[0].text], name="relayed")
        yield ctx.status(pb.TASK_STATE_COMPLETED)


@pytest.mark.parametrize("hop", BINDINGS)
async def test_client_to_server_a_to_server_b_is_one_trace(
    hop: str, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    relay = Relay()
    a = A2AServer(relay, InMemoryTaskStore(), _config(provider))
    b = A2AServer(ScriptedAgent(), InMemoryTaskStore(), _config(provider))
    await a.start()
    await b.start()
    try:
        relay.target = (
            f"127.0.0.1:{b.grpc_port}"
            if hop == "grpc"
            else f"http://127.0.0.1:{b.http_port}{'/' if hop == 'jsonrpc' else ''}",
            hop,
        )
        with provider.get_tracer("test").start_as_current_span("caller") as root:
            async with client(a, "rest") as c:
                sent = await c.send_message("ping")
        assert sent.task.artifacts[0].parts[0].text == "ping"
        await _until(lambda: _async(len(named(exporter, "a2a.execute")) == 2))
    finally:
        await a.stop()
        await b.stop()
    finished = exporter.get_finished_spans()
    assert {s.context.trace_id for s in finished} == {root.get_span_context().trace_id}
    by_id = {s.context.span_id: s for s in finished}

    def chain(span: ReadableSpan) -> list[str]:
        names = [span.name]
        while span.parent is not None:
            span = by_id[span.parent.span_id]
            names.append(span.name)
        return names

    (b_exec,) = [s for s in named(exporter, "a2a.execute") if attrs(s)["a2a.agent"] == "Scripted"]
    assert chain(b_exec) == [
        "a2a.execute",  # B's agent
        f"{SERVICE}/SendMessage",  # B's server span (binding: hop)
        "a2a.execute",  # A's agent, whose A2AClient propagated the context
        f"{SERVICE}/SendMessage",  # A's server span (rest)
        "caller",
    ]
    b_call = by_id[b_exec.parent.span_id]  # type: ignore[union-attr]
    assert attrs(b_call)["a2a.binding"] == hop
