"""A finished request leaves no reference cycles behind.

Cyclic garbage is freed only by Python's cyclic GC, whose full collections
pause the server (measured: they were the p99 of HTTP streaming at
concurrency 64). With the GC off, every per-request object must still be
freed by reference counting as soon as its request ends.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator

import aiohttp
import pytest

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.bindings._http.context import GatewayContext
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore

MESSAGE = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    srv = A2AServer(EchoAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        yield f"http://127.0.0.1:{srv.http_port}"
    finally:
        await srv.stop(0.5)


def _alive(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/message:stream", MESSAGE),
        ("/message:send", MESSAGE),
        ("/", {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": MESSAGE}),
        ("/", {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": MESSAGE}),
    ],
)
async def test_requests_leave_no_cyclic_garbage(base_url: str, path: str, body: dict) -> None:
    async with aiohttp.ClientSession() as session:

        async def call() -> None:
            async with session.post(base_url + path, json=body, headers={"A2A-Version": "1.0"}) as resp:
                assert resp.status == 200
                await resp.read()

        await call()  # warm caches (compiled codec plans, routes)
        gc.collect()
        gc.disable()
        try:
            before = _alive(GatewayContext)
            for _ in range(30):
                await call()
            after = _alive(GatewayContext)
        finally:
            gc.enable()
    assert after - before <= 1, f"{after - before} GatewayContext objects outlived their requests"
