"""The demo webhook receiver (``python -m a2a_grpc.push.receiver``)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from a2a_grpc.push.receiver import make_app, summary


@pytest.fixture
async def demo() -> AsyncIterator[tuple[str, io.StringIO]]:
    out = io.StringIO()
    runner = web.AppRunner(make_app("tok", "Bearer cred", out=out))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    assert site._server is not None
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/hook", out
    finally:
        await runner.cleanup()


async def test_checks_credentials_and_drops_duplicates(demo: tuple[str, io.StringIO]) -> None:
    url, out = demo
    body = {"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}}
    good = {"X-A2A-Notification-Token": "tok", "Authorization": "Bearer cred", "A2A-Notification-Id": "t1:2"}
    async with aiohttp.ClientSession() as s:
        for headers in ({**good, "X-A2A-Notification-Token": "nope"}, {**good, "Authorization": "Bearer x"}):
            async with s.post(url, json=body, headers=headers) as r:
                assert r.status == 401
        for _ in range(2):
            async with s.post(url, json=body, headers=good) as r:
                assert r.status == 200
    lines = out.getvalue().splitlines()
    assert lines == ["t1:2 statusUpdate task=t1 state=TASK_STATE_WORKING", "t1:2 duplicate (ignored)"]


def test_summary() -> None:
    assert summary({"task": {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}}) == (
        "task task=t state=TASK_STATE_SUBMITTED"
    )
    assert summary({"artifactUpdate": {"taskId": "t", "artifact": {"name": "echo"}}}) == (
        "artifactUpdate task=t artifact=echo"
    )
