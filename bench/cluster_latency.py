"""Cross-replica event latency and takeover time in cluster mode (issue 12).

``python -m bench.cluster_latency [--events N] [--tasks T]`` starts two
``a2a-grpc serve --cluster`` replicas on a fresh PostgreSQL database
(:mod:`bench.pg` names the server; the database is dropped afterwards) and measures:

- **cross-replica latency**: a task runs on r1 (:class:`StampAgent`: each
  artifact chunk carries ``time.monotonic_ns()`` taken just before the agent yields
  it, i.e. before r1 writes it); a SubscribeToTask on r2 over gRPC records
  when each chunk arrives. The figure is yield → received on r2: r1's
  transaction with its NOTIFY, the wake-up of r2's relay, its publish (from
  the payload, or a read of the event log) and the gRPC stream to the
  subscriber (same machine: CLOCK_MONOTONIC is one clock for all processes).
  Every chunk must arrive (in the snapshot or as an update);
- the same with the subscriber on r1 (the in-process bus: the baseline);
- **takeover time**: ``kill -9`` of a replica running a task → the task is
  FAILED on the other, for the chosen ``--lease-ttl``.

Prints p50/p90/p99/max in milliseconds; ``--trace`` adds where they go
(:mod:`bench.cluster_trace`: r1's write and commit, the notification, the
relay's publish, the stream). ``make bench`` runs the latency part
(:func:`measure_latency`) for its cluster section; the takeover only runs here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from a2a_grpc.client import A2AClient
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import Event, pb
from bench import cluster_trace, pg
from bench.procs import ALL_CPUS

REPO = Path(__file__).resolve().parent.parent
_IFACE = re.compile(r"^\s+HTTP\+JSON\s+(\S+)\s*$", re.M)


cluster_trace.install()  # in a replica started with --trace (``$A2A_BENCH_TRACE``)


class StampAgent(AgentExecutor):
    """``N D``: N artifact chunks D seconds apart, each the time it was yielded (ns)."""

    card = pb.AgentCard(
        name="Stamp Agent",
        description="Timestamps its artifact chunks (cluster latency bench).",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="stamp", name="Stamp", description="Timestamps.", tags=["bench"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        n, delay = ctx.text().split()
        yield ctx.status(pb.TASK_STATE_WORKING)
        for i in range(int(n)):
            await asyncio.sleep(float(delay))
            yield ctx.artifact([str(time.monotonic_ns())], artifact_id="t", append=i > 0)
        yield ctx.status(pb.TASK_STATE_COMPLETED)


def _start(
    name: str, store: str, ttl: float, log: Path, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], str]:
    cli = str(Path(sys.executable).parent / "a2a-grpc")
    argv = [cli, "serve", "--agent", "bench.cluster_latency:StampAgent", "--grpc-port", "0"]
    argv += ["--http-port", "0", "--store", store, "--cluster", "--replica-id", name]
    argv += ["--lease-ttl", str(ttl), "--log-level", "WARNING", *extra]
    with log.open("wb") as out:  # on every CPU, even when started by the pinned bench.run
        proc = subprocess.Popen(
            argv,
            cwd=REPO,
            stdout=out,
            stderr=out,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            preexec_fn=lambda: os.sched_setaffinity(0, ALL_CPUS),
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = _IFACE.search(log.read_text(errors="replace"))
        if found and "card " in log.read_text(errors="replace"):
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not start:\n{log.read_text()}")


async def _latencies(
    run_on: str, watch_on: str, events: int, delay: float, received: dict[str, int] | None = None
) -> list[float]:
    """Milliseconds from each chunk's yield on ``run_on`` to its arrival at a
    subscriber on ``watch_on``; ``received`` (if given) gets stamp → arrival, ns.
    The chunks that came before the subscription (in its snapshot) are not
    measured; prints a WARNING unless snapshot and updates hold every chunk
    exactly once."""
    runner = await A2AClient.connect(run_on, bindings=("grpc",))
    watcher = await A2AClient.connect(watch_on, bindings=("grpc",))
    out: list[float] = []
    seen = 0
    try:
        cfg = pb.SendMessageConfiguration(return_immediately=True)
        task = (await runner.send_message(f"{events} {delay}", configuration=cfg)).task
        async for event in watcher.subscribe_to_task(task.id):
            now = time.monotonic_ns()
            if event.WhichOneof("payload") == "artifact_update":
                stamp = event.artifact_update.artifact.parts[0].text
                out.append((now - int(stamp)) / 1e6)
                if received is not None:
                    received[stamp] = now
            elif event.WhichOneof("payload") == "task":
                seen = sum(len(a.parts) for a in event.task.artifacts)
    finally:
        await runner.close()
        await watcher.close()
    if seen + len(out) != events:  # a bug of the server: say so, the latencies stand
        print(
            f"WARNING: task {task.id} on {run_on} watched on {watch_on}: {seen} chunks in the snapshot"
            f" + {len(out)} updates != {events}",
            flush=True,
        )
    return out


async def _takeover(store: str, ttl: float, survivor: str, tmp: Path) -> float:
    """Seconds from kill -9 of a replica running a task to the task FAILED on ``survivor``."""
    proc, url = _start("victim", store, ttl, tmp / "victim.log")
    try:
        client = await A2AClient.connect(url, bindings=("grpc",))
        cfg = pb.SendMessageConfiguration(return_immediately=True)
        task = (await client.send_message("1000 0.05", configuration=cfg)).task
        await client.close()
        await asyncio.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        watcher = await A2AClient.connect(survivor, bindings=("grpc",))
        try:
            while True:
                if (await watcher.get_task(task.id)).status.state == pb.TASK_STATE_FAILED:
                    break
                await asyncio.sleep(0.01)
        finally:
            await watcher.close()
        return time.monotonic() - killed
    finally:
        proc.kill()
        proc.wait()


def _summary(name: str, values: list[float]) -> str:
    p50, p90, p99 = (quantile(values, q) for q in (50, 90, 99))
    return (
        f"{name:<28} n={len(values):<5} p50={p50:.2f} ms  p90={p90:.2f} ms  "
        f"p99={p99:.2f} ms  max={max(values):.2f} ms"
    )


async def _pair_latencies(
    store: str,
    ttl: float,
    tmp: Path,
    events: int,
    tasks: int,
    delay: float,
    received: tuple[dict[str, int], dict[str, int]] | None = None,
    extra: tuple[str, ...] = (),
) -> tuple[list[float], list[float]]:
    """Starts r1 and r2 on ``store`` and returns (cross-replica, same-replica)
    latencies, ms; ``received`` (if given) gets the arrivals of each (--trace)."""
    procs = []
    try:
        p1, r1 = _start("r1", store, ttl, tmp / "r1.log", extra)
        procs.append(p1)
        p2, r2 = _start("r2", store, ttl, tmp / "r2.log", extra)
        procs.append(p2)
        await _latencies(r1, r2, 20, delay)  # warm-up
        cross, local = [], []
        for _ in range(tasks):
            cross += await _latencies(r1, r2, events, delay, received and received[0])
            local += await _latencies(r1, r1, events, delay, received and received[1])
        return cross, local
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(10)


async def measure_latency(
    store: str, events: int = 200, tasks: int = 5, delay: float = 0.005, ttl: float = 3.0
) -> tuple[list[float], list[float]]:
    """(cross-replica, same-replica) event latencies in ms: ``tasks`` tasks of
    ``events`` events ``delay`` s apart, two replicas on the database ``store``."""
    with tempfile.TemporaryDirectory() as tmp:
        return await _pair_latencies(store, ttl, Path(tmp), events, tasks, delay)


async def _takeovers(store: str, ttl: float, tmp: Path) -> list[float]:
    """Three takeover times, seconds (r2 survives)."""
    p2, r2 = _start("r2", store, ttl, tmp / "r2.log")
    try:
        return [await _takeover(store, ttl, r2, tmp) for _ in range(3)]
    finally:
        p2.send_signal(signal.SIGTERM)
        p2.wait(10)


def quantile(values: list[float], q: int) -> float:
    """The ``q``-th percentile of ``values`` (interpolated; never beyond the largest)."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=200, help="events per task")
    ap.add_argument("--tasks", type=int, default=5, help="tasks per measurement")
    ap.add_argument("--delay", type=float, default=0.005, help="seconds between two events")
    ap.add_argument("--lease-ttl", type=float, default=3.0)
    ap.add_argument(
        "--trace", action="store_true", help="also print where the time goes (bench/cluster_trace.py)"
    )
    ap.add_argument("--no-takeover", action="store_true", help="latency only")
    ap.add_argument("--bus", help="the replicas' --bus (default: PostgreSQL LISTEN/NOTIFY)")
    args = ap.parse_args()
    store = await pg.create_database()
    received: tuple[dict[str, int], dict[str, int]] = ({}, {})
    bus = ("--bus", args.bus) if args.bus else ()
    took: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.trace:
                os.environ["A2A_BENCH_TRACE"] = tmp
            cross, local = await _pair_latencies(
                store, args.lease_ttl, Path(tmp), args.events, args.tasks, args.delay, received, bus
            )
            if args.trace:
                del os.environ["A2A_BENCH_TRACE"]
                print("r1 → subscriber on r2, by stage:")
                print(cluster_trace.summary(cluster_trace.breakdown(Path(tmp), received[0], relayed=True)))
                print("r1 → subscriber on r1, by stage:")
                print(cluster_trace.summary(cluster_trace.breakdown(Path(tmp), received[1], relayed=False)))
            if not args.no_takeover:
                took = await _takeovers(store, args.lease_ttl, Path(tmp))
    finally:
        await pg.drop_database(store)
    print(_summary("r1 → subscriber on r2", cross))
    print(_summary("r1 → subscriber on r1", local))
    if took:
        print(
            f"takeover after kill -9 (lease TTL {args.lease_ttl:g} s, reaper every {args.lease_ttl / 3:g} s): "
            + ", ".join(f"{t:.2f} s" for t in took)
        )


if __name__ == "__main__":
    asyncio.run(main())
