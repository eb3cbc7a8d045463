"""A real webhook receiver on 127.0.0.1 and helpers that fill a store's outbox
the way the request handler does (one OutboxEntry per config per task update,
written in the same ``store.update``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import OutboxEntry, TaskWrite
from a2a_grpc.store import InMemoryTaskStore, SqlTaskStore, TaskStore
from a2a_grpc.types import new_id, now_timestamp, pb

OWNER = Owner()


@dataclass
class Hit:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


# A reply is a status, or (status, headers), or a coroutine factory (slow replies).
Reply = int | tuple[int, dict[str, str]]


@dataclass
class Receiver:
    """Records every POST; answers from a per-path script, then 200."""

    port: int = 0
    hits: list[Hit] = field(default_factory=list)
    scripts: dict[str, list[Reply]] = field(default_factory=dict)
    always: dict[str, Reply] = field(default_factory=dict)
    delay: dict[str, float] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self.hits.append(Hit(request.path, dict(request.headers), json.loads(raw), time.monotonic()))
        self._changed.set()
        if request.path in self.delay:
            await asyncio.sleep(self.delay[request.path])
        reply: Reply = 200
        script = self.scripts.get(request.path)
        if script:
            reply = script.pop(0)
        elif request.path in self.always:
            reply = self.always[request.path]
        status, headers = (reply, {}) if isinstance(reply, int) else reply
        return web.Response(status=status, headers=headers, text="ok" if status < 300 else "no")

    def on(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    async def wait_for(self, pred: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"timed out; hits so far: {[(h.path, h.headers.get('A2A-Notification-Id')) for h in self.hits]}"
                )
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.05))


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    rec = Receiver()
    app = web.Application()
    app.router.add_post("/{tail:.*}", rec.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert server is not None and server.sockets
    rec.port = server.sockets[0].getsockname()[1]
    try:
        yield rec
    finally:
        await runner.cleanup()


PG_URL = os.environ.get("A2A_GRPC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    """An opened, empty store of each backend (PostgreSQL: own tables, dropped after)."""
    s: TaskStore
    if request.param == "memory":
        s = InMemoryTaskStore()
    elif request.param == "sqlite":
        s = SqlTaskStore(f"sqlite:///{tmp_path / 'push.db'}")
    else:
        s = SqlTaskStore(PG_URL, table_prefix=f"push_{uuid.uuid4().hex[:10]}_")
    try:
        await s.open()
    except (OSError, SQLAlchemyError) as exc:
        pytest.skip(f"PostgreSQL at {PG_URL} is not reachable: {exc}")
    try:
        yield s
    finally:
        if isinstance(s, SqlTaskStore) and request.param == "postgresql":
            await s.drop_all()
        await s.close()


async def new_task(store: TaskStore, owner: Owner = OWNER) -> str:
    task_id = new_id()
    task = pb.Task(
        id=task_id,
        context_id="ctx-" + task_id[:8],
        status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED, timestamp=now_timestamp()),
    )
    await store.update(TaskWrite(task, owner))
    return task_id


async def add_config(
    store: TaskStore, task_id: str, url: str, *, config_id: str | None = None, owner: Owner = OWNER, **kw: Any
) -> str:
    cid = config_id or new_id()
    await store.put_push_config(owner, pb.TaskPushNotificationConfig(task_id=task_id, id=cid, url=url, **kw))
    return cid


async def emit(
    store: TaskStore, task_id: str, *, n: int = 1, owner: Owner = OWNER, state: int = pb.TASK_STATE_WORKING
) -> list[str]:
    """``n`` status updates of the task, each queued for every config of the
    task in the same update (as the handler does). Returns the event ids."""
    ids: list[str] = []
    configs = await store.list_push_configs(owner, task_id)
    for _ in range(n):
        stored = await store.get(task_id, owner)
        assert stored is not None
        task = stored.task
        task.status.CopyFrom(pb.TaskStatus(state=state, timestamp=now_timestamp()))
        event_id = f"{task_id}:{stored.version + 1}"
        event = pb.StreamResponse(
            status_update=pb.TaskStatusUpdateEvent(
                task_id=task_id, context_id=task.context_id, status=task.status
            )
        )
        payload = event.SerializeToString()
        entries = [OutboxEntry(task_id, c.id, event_id, payload, owner=owner) for c in configs]
        await store.update(TaskWrite(task, owner, stored.version, outbox=entries))
        ids.append(event_id)
    return ids
