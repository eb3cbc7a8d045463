"""Request ids and the access log on every binding (issue 15 §3)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import InMemoryTaskStore
from a2a_grpc.telemetry._logs import ACCESS_LOGGER, ContextFilter, JsonFormatter, TextFormatter
from tests.core.agents import ScriptedAgent
from tests.telemetry.test_metrics import BINDINGS


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.addFilter(ContextFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    root = logging.getLogger()
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old)


def _url(server: A2AServer, binding: str) -> str:
    return f"127.0.0.1:{server.grpc_port}" if binding == "grpc" else f"http://127.0.0.1:{server.http_port}/"


async def test_access_line_per_call_with_the_callers_request_id(records: Records) -> None:
    srv = A2AServer(
        ScriptedAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0, access_log=True)
    )
    await srv.start()
    try:
        for binding in BINDINGS:
            headers = {"X-Request-Id": f"req-{binding}"}
            async with A2AClient.for_interface(_url(srv, binding), binding, headers=headers) as c:
                with pytest.raises(A2AError):
                    await c.get_task("missing")
        async with A2AClient.for_interface(
            _url(srv, "rest"), "rest", headers={"X-Request-Id": "bad id!"}
        ) as c:
            await c.send_message("echo secret-content")
    finally:
        await srv.stop()
    access = [r for r in records.records if r.name == ACCESS_LOGGER]
    assert [(r.binding, r.request_id, r.code) for r in access[:3]] == [  # type: ignore[attr-defined]
        (b, f"req-{b}", "NOT_FOUND") for b in BINDINGS
    ]
    for r in access[:3]:
        assert r.method == "/lf.a2a.v1.A2AService/GetTask"  # type: ignore[attr-defined]
        assert r.reason == "TASK_NOT_FOUND" and r.peer.startswith("ipv4:127.0.0.1:")  # type: ignore[attr-defined]
        assert r.duration_ms >= 0  # type: ignore[attr-defined]
    last = access[3]
    assert last.code == "OK" and len(last.request_id) == 32  # an unusable id is replaced  # type: ignore[attr-defined]
    assert len(access) == 4
    assert not any("secret-content" in r.getMessage() or "secret-content" in str(vars(r)) for r in access)


async def test_request_id_reaches_the_agents_log_lines_without_access_log(records: Records) -> None:
    config = ServerConfig(grpc_port=0, http_port=0, request_ids=True)
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), config)
    await srv.start()
    try:
        async with A2AClient.for_interface(
            _url(srv, "jsonrpc"), "jsonrpc", headers={"X-Request-Id": "r-42"}
        ) as c:
            await c.send_message("boom")
    finally:
        await srv.stop()
    assert not [r for r in records.records if r.name == ACCESS_LOGGER]
    failed = [r for r in records.records if r.getMessage().startswith("agent failed on task")]
    assert failed and failed[0].request_id == "r-42"  # type: ignore[attr-defined]


def test_json_and_text_formats() -> None:
    record = logging.LogRecord("a2a_grpc.access", logging.INFO, __file__, 1, "grpc %s OK", ("GetTask",), None)
    record.request_id, record.trace_id, record.code = "r1", "", "OK"
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "grpc GetTask OK" and line["level"] == "INFO"
    assert line["request_id"] == "r1" and line["code"] == "OK" and "trace_id" not in line
    assert line["time"].endswith("Z") and len(line["time"]) == len("2026-01-01T00:00:00.000Z")
    text = TextFormatter().format(record)
    assert text.endswith("a2a_grpc.access: grpc GetTask OK request_id=r1 code=OK")
