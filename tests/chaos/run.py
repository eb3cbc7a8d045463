"""One mixed chaos run, and its command line.

``python -m tests.chaos.run --seed 7 --seconds 300 --bus redis`` starts three
replicas on a fresh database (each through its own PostgreSQL proxy), runs
the mixed workload (:mod:`tests.chaos.workload`) while faults are injected
(:mod:`tests.chaos.faults`) for ``--seconds``, heals everything, lets the
cluster settle, checks the invariants (:mod:`tests.chaos.invariants`) and
prints the run's summary line, then its violations; it exits 1 when there
are any. ``--bus both`` runs once per bus, splitting the time. The seed
defaults to ``$CHAOS_SEED`` (else 7); every random choice of the workload
and of the injector comes from it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tests.chaos.faults import KINDS, Injector
from tests.chaos.harness import ChaosCluster
from tests.chaos.invariants import RunRecord, Violation, check, spurious_takeovers, summary
from tests.chaos.workload import Workload

__all__ = ["DEFAULT_SEED", "run_chaos", "seed_from_env"]

DEFAULT_SEED = 7


def seed_from_env() -> int:
    """``$CHAOS_SEED``, else :data:`DEFAULT_SEED`."""
    return int(os.environ.get("CHAOS_SEED") or DEFAULT_SEED)


async def run_chaos(
    tmp: Path,
    *,
    seed: int,
    seconds: float,
    bus: str = "postgresql",
    ttl: float = 2.0,
    workers: int = 6,
    kinds: Sequence[str] = KINDS,
    fail_rate: float = 0.1,
) -> tuple[RunRecord, list[Violation]]:
    """One run (see the module docstring); files (replica logs, the execution
    log) go to ``tmp``. Returns what it recorded and the violations found."""
    run = RunRecord(seed=seed, bus=bus, seconds=seconds)
    began = time.monotonic()
    async with ChaosCluster(tmp, ttl=ttl, bus=bus, seed=seed, fail_rate=fail_rate) as cluster:
        run.bound = cluster.bound
        run.timings["start"] = time.monotonic() - began
        until = time.monotonic() + seconds
        workload = Workload(cluster, run, seed, workers=workers)
        injector = Injector(cluster, run, seed, kinds=kinds)
        load = asyncio.ensure_future(workload.run_until(until))
        await injector.run_until(until)
        for r in cluster.replicas:  # whatever a failed restart left down
            if not r.alive:
                await asyncio.to_thread(r.start)
        workload.stopping = True
        try:
            await asyncio.wait_for(asyncio.shield(load), 150)
        except TimeoutError:
            load.cancel()
        run.timings["load"] = time.monotonic() - began - run.timings["start"]
        mark = time.monotonic()
        await cluster.settle(cluster.bound * 2 + 30)
        await asyncio.sleep(2.0)  # a late re-send of a push would arrive by now
        run.timings["settle"] = time.monotonic() - mark
        mark = time.monotonic()
        await cluster.collect(run)
        run.timings["collect"] = time.monotonic() - mark
    return run, check(run)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=seed_from_env(), help="seed of every random choice")
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("CHAOS_SECONDS") or 60))
    parser.add_argument("--bus", choices=("postgresql", "redis", "both"), default="postgresql")
    parser.add_argument("--ttl", type=float, default=2.0, help="--lease-ttl of the replicas")
    parser.add_argument("--workers", type=int, default=6, help="concurrent clients")
    parser.add_argument("--faults", default=",".join(KINDS), help=f"fault kinds, of {','.join(KINDS)}")
    parser.add_argument("--keep", type=Path, help="keep the replica logs and the execution log here")
    parser.add_argument("--show", type=int, default=30, help="violations printed (the first ones)")
    return parser.parse_args(argv)


async def _main(args: argparse.Namespace) -> int:
    buses = ["postgresql", "redis"] if args.bus == "both" else [args.bus]
    failed = 0
    for bus in buses:
        tmp = args.keep / bus if args.keep else Path(tempfile.mkdtemp(prefix=f"chaos-{bus}-"))
        tmp.mkdir(parents=True, exist_ok=True)
        run, violations = await run_chaos(
            tmp,
            seed=args.seed,
            seconds=args.seconds / len(buses),
            bus=bus,
            ttl=args.ttl,
            workers=args.workers,
            kinds=[k for k in args.faults.split(",") if k],
        )
        print(summary(run, violations), flush=True)
        errors = ", ".join(f"{k}={n}" for k, n in run.errors.most_common(12))
        print(f"  errors: {errors or 'none'}", flush=True)
        print("  timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in run.timings.items()), flush=True)
        for v in violations[: args.show]:
            print(f"  {v}", flush=True)
        if len(violations) > args.show:
            print(f"  … {len(violations) - args.show} more", flush=True)
        for v in spurious_takeovers(run)[:5]:
            print(f"  (not a violation) {v}", flush=True)
        print(f"  logs: {tmp}", flush=True)
        failed += bool(violations)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(_main(_parse(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    raise SystemExit(main())
