"""``a2a-grpc serve`` as operators run it (issue 15): OTEL_* variables point
it at a real OTLP/gRPC receiver in the test (the trace service of
opentelemetry-proto), ``--log-format json`` with the access log, and
``/metrics`` on the HTTP port; SIGTERM flushes the spans."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.trace import TracerProvider

from a2a_grpc.client import A2AClient
from a2a_grpc.types import SERVICE_NAME
from tests.ports import free_port
from tests.telemetry.test_metrics import BINDINGS, scrape

ROOT = Path(__file__).resolve().parents[2]


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP trace receiver: keeps every exported span with its service name."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, Any]] = []

    async def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        for resource_spans in request.resource_spans:
            service = next(
                (a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"),
                "",
            )
            for scope in resource_spans.scope_spans:
                self.spans += [(service, span) for span in scope.spans]
        return trace_service_pb2.ExportTraceServiceResponse()


def _attributes(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in span.attributes:
        v = a.value
        out[a.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out


async def test_serve_exports_traces_logs_json_and_serves_metrics() -> None:
    collector = Collector()
    receiver = grpc.aio.server()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, receiver)
    otlp_port = receiver.add_insecure_port("127.0.0.1:0")
    await receiver.start()
    grpc_port, http_port = free_port(), free_port()
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
        "OTEL_EXPORTER_OTLP_INSECURE": "true",
        "OTEL_SERVICE_NAME": "ops-test",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_grpc.cli",
        "serve",
        *("--agent", "echo", "--store", "memory", "--grace", "1", "--log-format", "json"),
        *("--grpc-port", str(grpc_port), "--http-port", str(http_port)),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    tracer = TracerProvider().get_tracer("test")  # the caller's spans: only their ids matter
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            await health.Check(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME), wait_for_ready=True, timeout=20
            )
        roots = {}
        for binding in BINDINGS:
            url = f"127.0.0.1:{grpc_port}" if binding == "grpc" else f"http://127.0.0.1:{http_port}/"
            with tracer.start_as_current_span("caller") as root:
                roots[binding] = f"{root.get_span_context().trace_id:032x}"
                async with A2AClient.for_interface(url, binding, timeout=10) as c:
                    await c.send_message("hello", metadata=None)
        metrics = await scrape(f"http://127.0.0.1:{http_port}/metrics")
        for binding in BINDINGS:
            assert metrics.value("grpc_server_handled_total", binding=binding, grpc_code="OK") == 1
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 0, err.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await receiver.stop(None)
    # traces: one server span per call and one execution span under each, in the caller's trace
    calls = [s for svc, s in collector.spans if s.name == "lf.a2a.v1.A2AService/SendMessage"]
    assert {svc for svc, _ in collector.spans} == {"ops-test"}
    assert sorted(_attributes(s)["a2a.binding"] for s in calls) == sorted(BINDINGS)
    for span in calls:
        binding = _attributes(span)["a2a.binding"]
        assert span.trace_id.hex() == roots[binding]
        (execution,) = [
            s for _, s in collector.spans if s.name == "a2a.execute" and s.parent_span_id == span.span_id
        ]
        assert _attributes(execution)["a2a.agent"] == "Echo Agent"
    # logs: JSON lines; one access line per call, with its request id and trace id
    lines = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    access = [line for line in lines if line["logger"] == "a2a_grpc.access"]
    assert sorted(line["binding"] for line in access) == sorted(BINDINGS)
    for line in access:
        assert line["method"] == "/lf.a2a.v1.A2AService/SendMessage" and line["code"] == "OK"
        assert line["trace_id"] == roots[line["binding"]]
        assert len(line["request_id"]) == 32 and line["duration_ms"] >= 0
        assert line["peer"].startswith("ipv4:127.0.0.1:")
        assert "hello" not in json.dumps(line)  # no message contents
    assert len({line["request_id"] for line in access}) == 3
