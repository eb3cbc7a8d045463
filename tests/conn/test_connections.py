"""Connection hygiene on both ports (issue 10, item 7): caps with a reserve
on HTTP, a header/handshake timeout (slowloris), an idle timeout, gRPC
keepalive enforcement — over real sockets."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.bindings._connlimits import HTTP_RESERVE, ConnectionLimits, auto_max_connections
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.core.agents import ScriptedAgent

CARD = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: t\r\n\r\n"
Make = Callable[..., Awaitable[A2AServer]]


@pytest.fixture
async def make() -> AsyncIterator[Make]:
    servers: list[A2AServer] = []

    async def start(**limits: float) -> A2AServer:
        cfg = ServerConfig(
            grpc_port=0, http_port=0, grace_seconds=0.5, connections=ConnectionLimits(**limits)
        )
        srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), cfg)
        await srv.start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        await srv.stop()


async def _open(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def _closed_after(reader: asyncio.StreamReader, limit: float) -> float:
    """Seconds until the server closes the connection (reads and drops data)."""
    start = time.monotonic()
    async with asyncio.timeout(limit):
        while await reader.read(65536):
            pass
    return time.monotonic() - start


async def _response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
    body = await asyncio.wait_for(reader.readexactly(int(headers.get("content-length", "0"))), 5)
    return status, headers, body


def test_automatic_cap_follows_the_open_file_limit() -> None:
    assert auto_max_connections(1024) == 464
    assert auto_max_connections(1_000_000) == 10_000
    assert auto_max_connections(64) == 16


async def test_http_slowloris_is_closed_by_the_header_timeout(make: Make) -> None:
    srv = await make(header_timeout_seconds=0.5, idle_timeout_seconds=30)
    assert srv.http_port
    reader, writer = await _open(srv.http_port)
    start = time.monotonic()
    closed = False
    for byte in CARD[:-4]:  # one byte every 50 ms, never the final blank line
        try:
            writer.write(bytes([byte]))
            await writer.drain()
        except ConnectionError:
            closed = True
            break
        if reader.at_eof():
            closed = True
            break
        await asyncio.sleep(0.05)
        if time.monotonic() - start > 3:
            break
    if not closed:
        await _closed_after(reader, 3)
    assert time.monotonic() - start < 2.5
    writer.close()


async def test_http_idle_connection_closed_by_the_header_timeout(make: Make) -> None:
    srv = await make(header_timeout_seconds=0.5, idle_timeout_seconds=30)
    assert srv.http_port
    reader, writer = await _open(srv.http_port)
    assert 0.3 < await _closed_after(reader, 3) < 2.0
    writer.close()


async def test_http_keepalive_idle_timeout(make: Make) -> None:
    srv = await make(header_timeout_seconds=0.3, idle_timeout_seconds=1.0)
    assert srv.http_port
    reader, writer = await _open(srv.http_port)
    writer.write(CARD)
    status, _, _ = await _response(reader)
    assert status == 200
    await asyncio.sleep(0.6)  # past the header timeout: a served connection stays
    writer.write(CARD)
    status, _, _ = await _response(reader)
    assert status == 200
    assert 0.7 < await _closed_after(reader, 4) < 2.5  # idle for the idle timeout, then closed
    writer.close()


async def test_http_cap_keeps_a_reserve_for_the_card_and_refuses_beyond(make: Make) -> None:
    srv = await make(max_connections=8, header_timeout_seconds=30, idle_timeout_seconds=30)
    port = srv.http_port
    assert port
    idle = [await _open(port) for _ in range(8)]
    await asyncio.sleep(0.1)
    # The reserve: the card (health check) is served, an A2A call is 503.
    reader, writer = await _open(port)
    writer.write(CARD)
    status, headers, body = await _response(reader)
    assert status == 200 and json.loads(body)["name"] and headers["connection"] == "close"
    assert await _closed_after(reader, 2) < 1  # one request per reserve connection
    writer.close()
    reader, writer = await _open(port)
    rpc = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}).encode()
    writer.write(
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
        + f"Content-Length: {len(rpc)}\r\n\r\n".encode()
        + rpc
    )
    status, headers, body = await _response(reader)
    assert status == 503 and headers["connection"] == "close" and headers["retry-after"] == "1"
    assert json.loads(body)["error"]["status"] == "UNAVAILABLE"
    writer.close()
    # A reserve connection that sends nothing is closed within a second.
    reader, writer = await _open(port)
    assert await _closed_after(reader, 3) < 1.6
    writer.close()
    # Fill the reserve; the next connection is answered 503 at once and closed.
    idle += [await _open(port) for _ in range(HTTP_RESERVE)]
    await asyncio.sleep(0.1)
    reader, writer = await _open(port)
    status, headers, body = await _response(reader)
    assert status == 503 and "connection limit (8)" in json.loads(body)["error"]["message"]
    assert await _closed_after(reader, 2) < 1
    writer.close()
    for _, w in idle:
        w.close()
    await asyncio.sleep(0.2)
    # Slots are free again: a normal call works.
    reader, writer = await _open(port)
    writer.write(CARD)
    assert (await _response(reader))[0] == 200
    writer.close()


def _raw(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(5)
    return sock


def _eof_within(sock: socket.socket, limit: float) -> float:
    start = time.monotonic()
    sock.settimeout(limit)
    while True:
        try:
            if not sock.recv(65536):
                return time.monotonic() - start
        except ConnectionResetError:
            return time.monotonic() - start


async def _health(port: int, channel: grpc.aio.Channel | None = None) -> int:
    if channel is not None:
        res = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
        return int(res.status)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        return await _health(port, ch)


async def test_grpc_handshake_timeout_closes_silent_connections(make: Make) -> None:
    srv = await make(header_timeout_seconds=0.5, idle_timeout_seconds=30)
    sock = _raw(srv.grpc_port)
    took = await asyncio.to_thread(_eof_within, sock, 4)
    assert 0.3 < took < 3
    sock.close()


async def test_grpc_cap_refuses_new_connections_and_keeps_existing(make: Make) -> None:
    srv = await make(max_connections=4, header_timeout_seconds=30, idle_timeout_seconds=30)
    port = srv.grpc_port
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        assert await _health(port, ch) == health_pb2.HealthCheckResponse.SERVING
        idle = [_raw(port) for _ in range(3)]
        await asyncio.sleep(0.2)
        extra = _raw(port)
        assert await asyncio.to_thread(_eof_within, extra, 3) < 1  # closed at once
        extra.close()
        assert await _health(port, ch) == health_pb2.HealthCheckResponse.SERVING
        for s in idle:
            s.close()
        await asyncio.sleep(0.3)
        assert await _health(port) == health_pb2.HealthCheckResponse.SERVING  # a fresh connection again


async def test_grpc_idle_connection_gets_goaway(make: Make) -> None:
    srv = await make(idle_timeout_seconds=0.5)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}") as ch:
        assert await _health(srv.grpc_port, ch) == health_pb2.HealthCheckResponse.SERVING
        assert ch.get_state() == grpc.ChannelConnectivity.READY
        await asyncio.sleep(2.0)
        assert ch.get_state() == grpc.ChannelConnectivity.IDLE  # the server sent GOAWAY
        assert await _health(srv.grpc_port, ch) == health_pb2.HealthCheckResponse.SERVING


async def test_grpc_too_frequent_pings_are_refused(make: Make) -> None:
    srv = await make()
    options = [
        ("grpc.keepalive_time_ms", 100),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}", options=options) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        watch = stub.Watch(health_pb2.HealthCheckRequest())
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async with asyncio.timeout(10):
                await watch.read()
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert info.value.details() == "Too many pings"


async def test_grpc_concurrent_streams_per_connection_are_capped(make: Make) -> None:
    srv = await make(max_concurrent_streams=2)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}") as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        watches = [stub.Watch(health_pb2.HealthCheckRequest()) for _ in range(2)]
        for w in watches:
            assert (await w.read()).status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as info:  # a third call waits for a free stream
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        watches[0].cancel()
        assert (await stub.Check(health_pb2.HealthCheckRequest(), timeout=3)).status == 1
        watches[1].cancel()
