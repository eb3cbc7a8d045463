"""The console in a real browser: Debian's chromium driven by playwright-core
(``console/e2e/drive.mjs``) against ``a2a-grpc console`` in front of the
code-review agent with the SQLite store, push on (ephemeral 127.0.0.1 ports).

The page sends ``examples/diffs/sql_injection.diff`` (pasted) and shows the
S608 row of the findings table; answers an INPUT_REQUIRED question on the same
task with the diff dropped as a file; cancels a task; lists tasks with a state
filter and paging; retries a dead letter. What the page did is then checked
on the agent and its store. Screenshots (card, review, input-required, tasks,
dead-letters, charts) land in build/ci-artifacts/console/, which CI keeps.

Skipped without chromium, the console's Node packages or its built page —
except under CI (``CI=true``), where ``.ci/run`` and ``make install`` provide
them and a skip would hide a broken console.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from a2a_grpc.agents._code_review import CodeReviewAgent
from a2a_grpc.client import A2AClient
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import open_store
from a2a_grpc.types import pb

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
DRIVER = REPO / "console" / "e2e" / "drive.mjs"
SHOTS = REPO / "build" / "ci-artifacts" / "console"
DIFF = REPO / "examples" / "diffs" / "sql_injection.diff"

pytestmark = pytest.mark.slow


def need_browser() -> None:
    missing = [
        what
        for what, ok in (
            ("chromium (apt-get install chromium)", CHROMIUM.exists()),
            ("node", shutil.which("node") is not None),
            ("console/node_modules (make install)", (REPO / "console/node_modules/playwright-core").is_dir()),
            ("the built page (make install)", (REPO / "a2a_grpc/console/static/index.html").is_file()),
        )
        if not ok
    ]
    if missing:
        message = "the browser test needs " + ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


class Webhook:
    """A push receiver on 127.0.0.1 that answers ``status`` and keeps what it got."""

    def __init__(self) -> None:
        self.status = 401
        self.accepted: list[dict[str, Any]] = []
        self.refused = 0
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self.status == 200:
            self.accepted.append(body)
        else:
            self.refused += 1
        return web.Response(status=self.status)

    async def __aenter__(self) -> Webhook:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/hook"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


async def eventually(check: Any, what: str, timeout: float = 20.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = await check()
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.2)


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[tuple[A2AServer, str]]:
    url = f"sqlite:///{tmp_path / 'a2a-grpc.db'}"
    store = open_store(url)
    push = PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1)
    config = ServerConfig(grpc_port=0, http_port=0, metrics=True)
    server = A2AServer(CodeReviewAgent(), store, config, push=push)
    await server.start()
    try:
        yield server, url
    finally:
        await server.stop(0.5)


async def dead_letters(server: A2AServer, webhook: Webhook) -> list[int]:
    """A task whose push notifications the webhook refused: dead letters (max_attempts=1)."""
    base = f"http://127.0.0.1:{server.http_port}"
    async with await A2AClient.connect(base, bindings=["jsonrpc"]) as client:
        asked = (await client.send_message("Please review my change")).task
        config = pb.TaskPushNotificationConfig(task_id=asked.id, url=webhook.url)
        await client.create_task_push_notification_config(config)
        parts = [pb.Part(raw=DIFF.read_bytes(), filename=DIFF.name, media_type="text/x-diff")]
        await client.send_message(parts, task_id=asked.id, context_id=asked.context_id)

    async def dead() -> list[int]:
        return [r.seq for r in await server.store.dead_letters(100, 0)]  # type: ignore[attr-defined]

    return await eventually(dead, "dead letters")


async def start_console(url: str, store_url: str) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc.cli", "console", url, "--port", "0", "--store", store_url,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
    assert line.startswith(f"console for {url}: http://127.0.0.1:"), line
    return proc, line.rsplit(" ", 1)[1].strip()


async def drive(console_url: str) -> dict[str, Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CONSOLE_URL": console_url, "DIFF": str(DIFF), "SHOTS": str(SHOTS)}
    proc = await asyncio.create_subprocess_exec(
        "node", str(DRIVER), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, f"drive.mjs failed (screenshots in {SHOTS}):\n{err.decode()[-4000:]}"
    return json.loads(out.decode().strip().splitlines()[-1])


@pytest.mark.timeout(300)
async def test_the_console_in_chromium(agent: tuple[A2AServer, str]) -> None:
    need_browser()
    server, store_url = agent
    base = f"http://127.0.0.1:{server.http_port}"
    async with Webhook() as webhook:
        dead = await dead_letters(server, webhook)
        webhook.status = 200  # the retry the page makes is delivered
        console, console_url = await start_console(base, store_url)
        try:
            done = await drive(console_url)
        finally:
            console.terminate()
            await console.wait()

        assert done["retried"] == dead[0]

        async def delivered() -> bool:
            return bool(webhook.accepted)

        await eventually(delivered, "the retried notification")
        left = [r.seq for r in await server.store.dead_letters(100, 0)]  # type: ignore[attr-defined]
        assert dead[0] not in left and left == dead[1:]

    async with await A2AClient.connect(base, bindings=["grpc"]) as client:
        review = await client.get_task(done["reviewTask"])
        asked = await client.get_task(done["questionTask"])
        canceled = await client.get_task(done["canceledTask"])
    assert review.status.state == pb.TASK_STATE_COMPLETED
    sent = review.history[0].parts[0]
    assert (sent.filename, sent.media_type, sent.raw) == ("pasted.diff", "text/x-diff", DIFF.read_bytes())
    assert asked.status.state == pb.TASK_STATE_COMPLETED
    user = [m for m in asked.history if m.role == pb.ROLE_USER]
    assert [m.parts[0].text for m in user][:1] == ["Please review my change"]
    assert (user[1].parts[0].filename, user[1].parts[0].media_type) == (DIFF.name, "text/x-diff")
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    for name in ("card", "review", "input-required", "tasks", "dead-letters", "charts"):
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000, name
