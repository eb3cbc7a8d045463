"""The chaos TCP proxy against an echo server: each mode does what it says
(pass, blackhole: lost, stall: held then delivered, delay: added latency,
refuse: ECONNREFUSED and resets, then listening on the same port again)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from tests.chaos.proxy import Proxy

pytestmark = pytest.mark.chaos


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
    writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[Proxy]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    p = Proxy("127.0.0.1", server.sockets[0].getsockname()[1])
    await p.start()
    try:
        yield p
    finally:
        await p.stop()
        server.close()


async def _open(p: Proxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", p.port)


async def _ask(
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], data: bytes, wait: float = 2.0
) -> bytes:
    reader, writer = conn
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(1024), wait)
    except TimeoutError:
        return b""


async def test_pass(proxy: Proxy) -> None:
    assert await _ask(await _open(proxy), b"hello") == b"hello"


async def test_blackhole_loses_what_is_sent_and_keeps_the_connection(proxy: Proxy) -> None:
    conn = await _open(proxy)
    await proxy.switch("blackhole")
    assert await _ask(conn, b"lost", 0.3) == b""
    late = await _open(proxy)  # accepted meanwhile: its first bytes are lost too
    assert await _ask(late, b"lost too", 0.3) == b""
    await proxy.switch("pass")
    assert await _ask(conn, b"after") == b"after"
    assert await _ask(late, b"after") == b"after"


async def test_stall_holds_then_delivers(proxy: Proxy) -> None:
    conn = await _open(proxy)
    await proxy.switch("stall")
    assert await _ask(conn, b"held", 0.3) == b""
    await proxy.switch("pass")
    assert await asyncio.wait_for(conn[0].read(1024), 2) == b"held"


async def test_delay_adds_latency_both_ways(proxy: Proxy) -> None:
    conn = await _open(proxy)
    await proxy.switch("delay", 0.2)
    began = time.monotonic()
    assert await _ask(conn, b"slow") == b"slow"
    assert time.monotonic() - began >= 0.4


async def test_refuse_then_listen_again(proxy: Proxy) -> None:
    conn = await _open(proxy)
    await proxy.switch("refuse")
    with pytest.raises(ConnectionRefusedError):
        await _open(proxy)
    with contextlib.suppress(ConnectionResetError):
        assert await asyncio.wait_for(conn[0].read(1024), 2) == b""  # reset
    await proxy.switch("pass")
    assert await _ask(await _open(proxy), b"back") == b"back"
