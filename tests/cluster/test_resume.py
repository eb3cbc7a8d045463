"""Resumable agents (issue 12, item 6): ``kill -9`` of the replica running a
task of an agent with ``resumable = True`` → another replica takes the lease
over and runs the agent again (instead of FAILED "execution lost"); the agent
sees the stored task and continues, and a subscriber on the surviving replica
follows the task to COMPLETED. A non-resumable agent's task still ends FAILED
(tests/cluster/test_leases.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_grpc.types import pb
from tests.cluster.conftest import TTL, cluster_args
from tests.cluster.replicas import Replica

pytestmark = pytest.mark.slow

RESUMABLE = ["--agent", "tests.cluster.agents:ResumableStepsAgent"]
NOW = pb.SendMessageConfiguration(return_immediately=True)
STEPS = 40


@pytest.fixture
def pair(database: str, tmp_path: Path) -> Iterator[tuple[Replica, Replica]]:
    started: list[Replica] = []
    try:
        for name in ("victim", "heir"):
            r = Replica(name, [*cluster_args(database, name), *RESUMABLE], tmp_path / f"{name}.log")
            started.append(r.start())
        yield started[0], started[1]
    finally:
        for r in started:
            r.stop()


async def _follow(replica: Replica, task_id: str) -> list[pb.StreamResponse]:
    client = await replica.client("jsonrpc")
    try:
        return [event async for event in client.subscribe_to_task(task_id, timeout=30)]
    finally:
        await client.close()


async def test_resumable_agent_is_run_again_after_kill_9(pair: tuple[Replica, Replica]) -> None:
    victim, heir = pair
    cv = await victim.client()
    try:
        task = (await cv.send_message(f"steps={STEPS} delay=0.1", configuration=NOW)).task
    finally:
        await cv.close()
    ch = await heir.client()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # some chunks stored by the victim
            seen = await ch.get_task(task.id)
            if seen.artifacts and len(seen.artifacts[0].parts) >= 5:
                break
            await asyncio.sleep(0.05)
        follower = asyncio.create_task(_follow(heir, task.id))
        await asyncio.sleep(0.3)  # the subscription is open on the heir
        victim.kill()
        killed = time.monotonic()
        events = await asyncio.wait_for(follower, TTL + TTL / 3 + STEPS * 0.1 + 10)
        took = time.monotonic() - killed
        final = await ch.get_task(task.id)
    finally:
        await ch.close()
    assert final.status.state == pb.TASK_STATE_COMPLETED, final.status
    assert final.status.message.parts[0].text == "resumed after victim"
    # The agent continued from the stored chunks: each one exactly once, in order.
    assert [p.text for p in final.artifacts[0].parts] == [f"chunk {i}" for i in range(STEPS)]
    assert [m.role for m in final.history].count(pb.ROLE_USER) == 1  # no message added by the re-run
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert took < TTL + TTL / 3 + STEPS * 0.1 + 2, took
    assert "running the resumable agent again" in heir.log.read_text()
