"""Fault injection of a chaos run: one fault at a time, on a replica and at a
moment chosen by the run's seeded random generator, each recorded as a
:class:`~tests.chaos.invariants.Fault` (and a line of ``faults.log`` in the
run's directory):

- ``kill``: ``kill -9``, down for 0.5–2 s, then started again under the same
  replica id;
- ``pause``: SIGSTOP for 1.5–3 lease TTLs (its leases expire and are taken
  over), then SIGCONT;
- ``partition``: the replica's PostgreSQL proxy black-holes (what is sent is
  lost, the connections stay open) for 0.5–3 TTLs;
- ``stall``: the proxy holds everything for 0.5–3 TTLs, then lets it through;
- ``delay``: the proxy adds 5–50 ms to every chunk (each way), for 2–5 s: a
  slow link, not an outage, so no lease may be lost to it (at 200 ms a write
  of five round trips takes 2 s, a lease TTL: every lease is lost).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict

from tests.chaos.harness import ChaosCluster, ChaosReplica
from tests.chaos.invariants import Fault, RunRecord

__all__ = ["KINDS", "Injector", "kill", "partition", "pause"]

KINDS = ("kill", "pause", "partition", "stall", "delay")


class Injector:
    """Injects faults of ``kinds`` with 1–4 s between them until ``until``
    (``time.monotonic()``); a fault under way is always healed."""

    def __init__(
        self, cluster: ChaosCluster, run: RunRecord, seed: int, *, kinds: Sequence[str] = KINDS
    ) -> None:
        self.cluster = cluster
        self.run = run
        self.rng = random.Random(seed ^ 0x5EED)
        self.kinds = list(kinds)

    async def run_until(self, until: float) -> None:
        ttl = self.cluster.effective_ttl
        while True:
            await asyncio.sleep(self.rng.uniform(1.0, 4.0))
            if time.monotonic() >= until or not self.kinds:
                return
            kind = self.rng.choice(self.kinds)
            victim = self.rng.choice(self.cluster.replicas)
            start, pid = time.time(), victim.pid
            if kind == "kill":
                await kill(self.cluster, victim, self.rng.uniform(0.5, 2.0))
            elif kind == "pause":
                await pause(victim, self.rng.uniform(1.5, 3.0) * ttl)
            elif kind in ("partition", "stall"):
                mode = "blackhole" if kind == "partition" else "stall"
                await partition(victim, self.rng.uniform(0.5, 3.0) * ttl, mode=mode)
            else:
                await partition(
                    victim, self.rng.uniform(2.0, 5.0), mode="delay", delay=self.rng.uniform(0.005, 0.05)
                )
            fault = Fault(kind, victim.name, start, time.time())
            self.run.faults.append(fault)
            with (self.cluster.tmp / "faults.log").open("a") as out:
                out.write(json.dumps({**asdict(fault), "pid": pid}) + "\n")


async def kill(cluster: ChaosCluster, victim: ChaosReplica, down: float) -> None:
    """``kill -9`` of ``victim``; ``down`` seconds later it starts again
    (same replica id); its old clients are dropped."""
    victim.kill()
    await asyncio.sleep(down)
    for attempt in range(3):
        try:
            await asyncio.to_thread(victim.start)
            break
        except RuntimeError:
            if attempt == 2:
                raise
            await asyncio.sleep(1.0)
    await cluster.forget(victim)


async def pause(victim: ChaosReplica, seconds: float) -> None:
    """SIGSTOP of ``victim`` for ``seconds``, then SIGCONT."""
    victim.pause()
    try:
        await asyncio.sleep(seconds)
    finally:
        victim.resume()


async def partition(
    victim: ChaosReplica, seconds: float, *, mode: str = "blackhole", delay: float = 0.0
) -> None:
    """``victim``'s PostgreSQL proxy in ``mode`` for ``seconds``, then passing again."""
    proxy = victim.proxy
    assert proxy is not None, "partitions need a proxied cluster"
    await asyncio.to_thread(proxy.set, mode, delay)
    try:
        await asyncio.sleep(seconds)
    finally:
        await asyncio.to_thread(proxy.set, "pass")
