"""Clean logs (issue 10, item 10): a server fault's traceback is not chained
to the uvloop import, and malformed HTTP requests are one rate-limited
WARNING line each, without a traceback."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path

import pytest

from a2a_grpc.bindings._http.connections import CLIENT_ERRORS_PER_MINUTE
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.core.agents import ScriptedAgent
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


async def _send_raw(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    out = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return out


async def test_malformed_http_requests_are_one_warning_line_each_rate_limited(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    assert srv.http_port
    try:
        bad = [
            b"GET / HTTP/1.1\r\nHost: t\r\nno colon here\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: t\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"GET /\x00 HTTP/1.1\r\nHost: t\r\n\r\n",
        ]
        for i in range(3 * CLIENT_ERRORS_PER_MINUTE):
            out = await _send_raw(srv.http_port, bad[i % len(bad)])
            assert out.split()[1].startswith(b"4"), out[:100]
    finally:
        await srv.stop()
    server_logs = [r for r in caplog.records if r.name == "aiohttp.server"]
    warnings = [r for r in server_logs if r.levelno == logging.WARNING]
    assert len(warnings) == CLIENT_ERRORS_PER_MINUTE
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in warnings)
    assert all("malformed HTTP request (400" in r.getMessage() for r in warnings)
    assert not [r for r in server_logs if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("uvloop", ["installed", "missing"])
async def test_server_fault_traceback_is_not_chained_to_the_uvloop_import(uvloop, tmp_path) -> None:
    env = dict(os.environ)
    if uvloop == "missing":  # a uvloop package that cannot be imported shadows the real one
        (tmp_path / "uvloop").mkdir()
        (tmp_path / "uvloop" / "__init__.py").write_text(
            "raise ModuleNotFoundError(\"No module named 'uvloop'\")\n"
        )
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    grpc_port, http_port = free_port(), free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc.cli", "serve", "--agent", "tests.conn.agents:BoomAgent",
        "--store", "memory", "--grpc-port", str(grpc_port), "--http-port", str(http_port),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
        }
        data = json.dumps(body).encode()
        request = (
            b"POST / HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
            + f"Connection: close\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        async with asyncio.timeout(30):
            while True:
                try:
                    out = await _send_raw(http_port, request)
                    break
                except OSError:
                    await asyncio.sleep(0.2)
        assert b"TASK_STATE_FAILED" in out
    finally:
        proc.terminate()
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    text = err.decode()
    assert "agent failed on task" in text and "RuntimeError: boom" in text  # the real fault, with traceback
    assert "uvloop" not in text
    assert "During handling of the above exception" not in text


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX sockets")
