"""A tiny OTLP/gRPC trace collector that prints each trace as a tree of spans.

    .venv/bin/python scripts/otlp_tree.py [--port 4317]

Point a server at it with ``OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317``.
A trace is printed once no span of it arrived for ``--quiet`` seconds (1.0):
each span with its service, duration and the attributes that name it (RPC
method, binding, task, outcome), children indented under their parent.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

SHOWN = (
    "a2a.binding",
    "a2a.task_id",
    "rpc.grpc.status_code",
    "a2a.error.reason",
    "a2a.agent",
    "a2a.push.event_id",
    "http.response.status_code",
)


def _value(v: Any) -> Any:
    return v.string_value if v.HasField("string_value") else v.int_value


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, quiet: float) -> None:
        self.quiet = quiet
        self.traces: dict[bytes, list[tuple[str, Any]]] = defaultdict(list)
        self.last: dict[bytes, float] = {}

    async def Export(self, request: Any, context: Any) -> Any:
        for rs in request.resource_spans:
            service = next((_value(a.value) for a in rs.resource.attributes if a.key == "service.name"), "?")
            for scope in rs.scope_spans:
                for span in scope.spans:
                    self.traces[span.trace_id].append((service, span))
                    self.last[span.trace_id] = time.monotonic()
        return trace_service_pb2.ExportTraceServiceResponse()

    async def flush_loop(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            now = time.monotonic()
            for trace_id in [t for t, at in self.last.items() if now - at > self.quiet]:
                del self.last[trace_id]
                print_tree(trace_id, self.traces.pop(trace_id))


def print_tree(trace_id: bytes, spans: list[tuple[str, Any]]) -> None:
    ids = {s.span_id for _, s in spans}
    children: dict[bytes, list[tuple[str, Any]]] = defaultdict(list)
    for item in spans:
        parent = item[1].parent_span_id
        children[parent if parent in ids else b""].append(item)
    out = [f"trace {trace_id.hex()}"]

    def walk(parent: bytes, depth: int) -> None:
        for service, span in sorted(children[parent], key=lambda i: i[1].start_time_unix_nano):
            ms = (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6
            attrs = {a.key: _value(a.value) for a in span.attributes}
            shown = " ".join(f"{k}={attrs[k]}" for k in SHOWN if k in attrs)
            out.append(f"{'  ' * depth}└─ {span.name} [{service}] {ms:.1f} ms {shown}".rstrip())
            walk(span.span_id, depth + 1)

    walk(b"", 1)
    print("\n".join(out), flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4317)
    parser.add_argument("--quiet", type=float, default=1.0)
    args = parser.parse_args()
    collector = Collector(args.quiet)
    server = grpc.aio.server()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    server.add_insecure_port(f"{args.host}:{args.port}")
    await server.start()
    print(f"OTLP/gRPC trace collector on {args.host}:{args.port}", file=sys.stderr, flush=True)
    await collector.flush_loop()


if __name__ == "__main__":
    asyncio.run(main())
