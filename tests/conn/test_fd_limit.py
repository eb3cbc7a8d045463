"""1,100 idle connections on each port of a server whose open-file limit is
1,024 (issue 10, item 7): without caps the accept loops hit EMFILE and both
ports become unreachable; with them the health checks keep answering."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
import sys
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.types import SERVICE_NAME
from tests.ports import free_port

FLOOD = 1_100
LIMIT = 1_024


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def _flood(port: int, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        socks.append(s)
    return socks


def _card(port: int) -> tuple[int, dict[str, object]]:
    """GET the Agent Card over a new connection: (status, body); (0, {})
    when a refused connection was reset before its 503 could be read."""
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            while chunk := s.recv(65536):
                data += chunk
    except (ConnectionResetError, BrokenPipeError):
        if not data:
            return 0, {}
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


async def _check(channel: grpc.aio.Channel) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    res = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=15)
    return int(res.status)


@pytest.mark.slow
async def test_flood_of_idle_connections_leaves_health_checks_answering() -> None:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 3 * FLOOD:
        pytest.skip(f"the test itself needs {3 * FLOOD} descriptors (limit {soft})")
    grpc_port, http_port = free_port(), free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc.cli", "serve", "--agent", "echo", "--store", "memory",
        "--grpc-port", str(grpc_port), "--http-port", str(http_port), "--header-timeout", "30",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, preexec_fn=_limit_files,
    )  # fmt: skip
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as ch:
            async with asyncio.timeout(30):
                while True:
                    try:
                        if await _check(ch) == health_pb2.HealthCheckResponse.SERVING:
                            break
                    except grpc.aio.AioRpcError:
                        await asyncio.sleep(0.2)
            start = time.monotonic()
            socks = await asyncio.to_thread(_flood, http_port, FLOOD)
            socks += await asyncio.to_thread(_flood, grpc_port, FLOOD)
            flooded = time.monotonic() - start
            await asyncio.sleep(1.5)  # the HTTP reserve frees itself (1 s)
            assert proc.returncode is None
            # gRPC: the existing connection is served; HTTP: the card over a new one.
            assert await _check(ch) == health_pb2.HealthCheckResponse.SERVING
            # The reserve frees itself within a second of the flood; allow for a loaded machine.
            async with asyncio.timeout(15):
                while (answer := await asyncio.to_thread(_card, http_port))[0] != 200:
                    assert answer[0] in (0, 503)
                    await asyncio.sleep(0.5)
            assert answer[1]["name"]
            for s in socks:
                s.close()
            await asyncio.sleep(0.5)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as fresh:
            assert await _check(fresh) == health_pb2.HealthCheckResponse.SERVING
        assert (await asyncio.to_thread(_card, http_port))[0] == 200
    finally:
        proc.terminate()
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    text = err.decode()
    assert "Too many open files" not in text and "EMFILE" not in text, text[-2000:]
    assert "Traceback" not in text, text[-2000:]
    print(f"flooded {2 * FLOOD} connections in {flooded:.2f}s")
