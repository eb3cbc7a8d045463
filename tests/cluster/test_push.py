"""Cluster mode, part 3 (issue 12): push delivery claimed across replicas.

Three replicas with push on, every one running a dispatcher over the same
outbox; tasks on all of them, each with a webhook on a receiver that fails
20 % of the POSTs (500). Every notification is delivered, in order per
task+config, exactly once (counting 2xx answers: no crash, no duplicate).
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from sqlalchemy import text

from a2a_grpc.cluster._store import ClusterStore
from a2a_grpc.context import Owner
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.types import pb
from tests.cluster.replicas import BINDINGS, Replica, drop_database, fresh_database
from tests.store.storekit import PG_URL, entry, make_task, postgres_skip_reason

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

REPLICA_ARGS = [
    "--push",
    "--push-allow",
    "127.0.0.1",
    "--push-max-backoff",
    "1",
    "--push-max-attempts",
    "50",
]
TASKS_PER_REPLICA = 8
STEPS = 6  # events per task: the creation snapshot, WORKING, 6 chunks, COMPLETED


class FlakyReceiver:
    """A webhook on 127.0.0.1 answering 500 to a fifth of the POSTs."""

    def __init__(self) -> None:
        self.accepted: dict[str, list[int]] = defaultdict(list)  # task id → versions, in arrival order
        self.completed: set[str] = set()
        self.done = asyncio.Event()
        self.expect = 0
        self._random = random.Random(12)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self._random.random() < 0.2:
            return web.Response(status=500)
        task_id, _, version = request.headers["A2A-Notification-Id"].rpartition(":")
        self.accepted[task_id].append(int(version))
        state = body.get("statusUpdate", {}).get("status", {}).get("state")
        if state == "TASK_STATE_COMPLETED":
            self.completed.add(task_id)
            if len(self.completed) == self.expect:
                self.done.set()
        return web.Response(status=200)


async def test_claimed_delivery_across_replicas(replicas: list[Replica]) -> None:
    receiver = FlakyReceiver()
    app = web.Application()
    app.router.add_post("/hook", receiver.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    receiver.expect = TASKS_PER_REPLICA * len(replicas)
    clients = [await r.client(b) for r, b in zip(replicas, BINDINGS, strict=True)]
    try:
        hook = pb.TaskPushNotificationConfig(url=f"http://127.0.0.1:{port}/hook", token="t")
        cfg = pb.SendMessageConfiguration(return_immediately=True, task_push_notification_config=hook)
        sent = await asyncio.gather(
            *(
                c.send_message(f"steps={STEPS} delay=0.02", configuration=cfg)
                for c in clients
                for _ in range(TASKS_PER_REPLICA)
            )
        )
        await asyncio.wait_for(receiver.done.wait(), 40)
        await asyncio.sleep(0.5)  # anything sent twice would have arrived by now
    finally:
        for c in clients:
            await c.close()
        await runner.cleanup()
    ids = {r.task.id for r in sent}
    assert set(receiver.accepted) == ids
    for task_id, versions in receiver.accepted.items():
        # Versions 2 (the creation snapshot) … the COMPLETED one, each once, in order.
        assert versions == list(range(2, 2 + len(versions))), (task_id, versions)
        assert len(versions) == STEPS + 3
    # Which replica delivers which pair is a race (each claims the pairs it
    # finds first): exactly once and in order, above, is the property.
    assert any("push: delivered" in r.log.read_text() for r in replicas)


@pytest.fixture
async def two_stores() -> AsyncIterator[tuple[ClusterStore, ClusterStore]]:
    """Two cluster stores on one fresh database, claiming as replicas "a" and "b"."""
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    a, b = ClusterStore(url), ClusterStore(url)
    a.claimant, b.claimant = "a", "b"
    await a.open()
    await b.open()
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()
        await drop_database(PG_URL, url)


async def test_claims_on_the_store(two_stores: tuple[ClusterStore, ClusterStore]) -> None:
    """One replica's claim keeps a pair from the others; its expiry (the
    replica died) hands the unmarked rows, same event ids, to another; a
    pair with nothing pending is unclaimed at once."""
    a, b = two_stores
    a.push_claim_seconds = 0.3
    owner = Owner("acme", "alice")
    await a.update(TaskWrite(make_task("t1"), owner))
    await a.update(TaskWrite(make_task("t1"), owner, 1, outbox=[entry("t1", "c1", 2), entry("t1", "c2", 2)]))
    await a.update(TaskWrite(make_task("t1"), owner, 2, outbox=[entry("t1", "c1", 3)]))
    got_a = await a.outbox_due(1e12, 100)
    assert [(r.entry.config_id, r.entry.event_id) for r in got_a] == [
        ("c1", "t1:2"),
        ("c2", "t1:2"),
        ("c1", "t1:3"),
    ]
    assert await b.outbox_due(1e12, 100) == []  # claimed by a
    c2 = next(r for r in got_a if r.entry.config_id == "c2")
    await a.outbox_mark(c2.seq, state="delivered", attempts=1, next_attempt_at=0)
    await b.update(TaskWrite(make_task("t1"), owner, 3, outbox=[entry("t1", "c2", 4)]))
    assert [r.entry.event_id for r in await b.outbox_due(1e12, 100)] == ["t1:4"]  # c2 was unclaimed
    await asyncio.sleep(0.4)  # a "dies": its claim of (t1, c1) expires
    resent = await b.outbox_due(1e12, 100)
    assert [(r.entry.config_id, r.entry.event_id) for r in resent] == [
        ("c1", "t1:2"),
        ("c1", "t1:3"),
        ("c2", "t1:4"),
    ]
    assert await a.outbox_due(1e12, 100) == []  # now b's


async def test_a_claim_won_from_a_replica_that_just_delivered_does_not_send_again(
    two_stores: tuple[ClusterStore, ClusterStore],
) -> None:
    """Replica b delivers the pair's last pending row and drops its claim
    while replica a's claim statement is already running (it started before
    b's commit, so its snapshot still holds the row as pending, and it waits
    on b's claim row). a wins the claim once b commits, and must read the
    row as delivered: with the claim and the read in one statement it read
    it pending from the old snapshot and sent it a second time."""
    a, b = two_stores
    owner = Owner("acme", "alice")
    await b.update(TaskWrite(make_task("t1"), owner))
    await b.update(TaskWrite(make_task("t1"), owner, 1, outbox=[entry("t1", "c1", 2)]))
    [row] = await b.outbox_due(1e12, 100)
    claims, outbox = b.push_claims.name, b.schema.outbox.name
    async with b.engine.connect() as conn:  # b's mark and unclaim, committed together below
        tx = await conn.begin()
        await conn.execute(text(f"SELECT 1 FROM {claims} WHERE task_id = 't1' FOR UPDATE"))
        racing = asyncio.create_task(a.outbox_due(1e12, 100))
        await asyncio.sleep(0.3)  # a's statement has taken its snapshot and waits on b's row
        assert not racing.done()
        await conn.execute(
            text(f"UPDATE {outbox} SET state = 'delivered' WHERE seq = :seq"), {"seq": row.seq}
        )
        await conn.execute(text(f"DELETE FROM {claims} WHERE task_id = 't1'"))
        await tx.commit()
    assert await asyncio.wait_for(racing, 10) == []
