"""Fuzzing all three bindings of a real ``a2a-grpc serve`` (issue 10).

A seeded stream of hostile inputs per binding (:mod:`tests.fuzz.inputs`),
sent over real sockets to a server in its own process with a SQLite store;
no answer may be HTTP 5xx, JSON-RPC -32603, gRPC UNKNOWN or INTERNAL, carry
traceback text, or be anything but JSON/SSE; afterwards every stored task
must be readable on every binding and the server log must hold no traceback.

By default 2,000 inputs per binding (about 15 s). The long run:
``A2A_FUZZ_INPUTS=100000 .venv/bin/pytest tests/fuzz`` (or
``.venv/bin/python -m tests.fuzz.run --inputs 100000``); ``A2A_FUZZ_SEED``
picks another stream of inputs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fuzz.run import Report, Served, check_store, fuzz

INPUTS = int(os.environ.get("A2A_FUZZ_INPUTS", "2000"))
SEED = int(os.environ.get("A2A_FUZZ_SEED", "1"))


@pytest.mark.asyncio
async def test_no_server_errors_and_every_task_readable(tmp_path: Path) -> None:
    with Served(tmp_path) as served:
        report = await fuzz(served, INPUTS, SEED)
        readable = Report()
        stored = await check_store(served, readable)
        tracebacks = served.log_tracebacks()
    assert dict(report.sent) == {"jsonrpc": INPUTS, "rest": INPUTS, "grpc": INPUTS}
    assert not report.problems, "\n".join(map(str, report.problems[:20]))
    assert not readable.problems, "\n".join(map(str, readable.problems[:20]))
    assert not tracebacks, "\n".join(tracebacks[:20])
    # The inputs reach the operations, not only the front door.
    assert stored > INPUTS // 50
    assert report.answers["grpc OK"] > 0 and report.answers["rest HTTP 200"] > 0
