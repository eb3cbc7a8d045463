"""Benchmark runner: a2a-grpc vs the official ``a2a-sdk`` vs bare ceilings (issues 6, 17).

``python -m bench.run`` runs the whole matrix — servers (ours and the SDK on the
in-memory, SQLite and PostgreSQL stores; the bare ceilings) × {grpc, jsonrpc, rest} ×
{SendMessage, SendStreamingMessage, GetTask} × concurrency {16, 64} — then the cluster
section (``bench/cluster.py``), and writes ``bench/results/latest.md`` (and ``.json``)
with the targets of issue 17 read off the figures. ``--quick`` runs one cell per
binding (the durable stores on gRPC only) and a short cluster section;
``--no-postgres`` leaves out everything that needs PostgreSQL; ``--scale`` runs the
scale checks (``bench/scale.py``) instead.

Every server runs in its own process pinned to CPU 0; this process (the load generator)
pins itself to CPU 1. Per cell: warm-up, then ``--windows`` back-to-back windows; each
figure is the median over the windows. Server CPU comes from /proc/<pid>/stat, RSS from
/proc/<pid>/status right after the cell.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import importlib.util
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import pg
from bench.loadgen import BINDINGS, METHODS, TASKS_CREATED, discover, make_client
from bench.measure import cell_line, measure_cell
from bench.procs import REPO, ServerSpec, pin_self, start_server
from bench.report import Cell, ClusterResult, render

__all__ = ["RESULTS", "SERVERS", "Cell", "machine_info", "main"]

RESULTS = REPO / "bench" / "results"

SERVERS: dict[str, ServerSpec] = {
    "ours-memory": ServerSpec(
        "ours-memory", "ours", "bench.servers.ours", ("--store", "memory"), store="memory"
    ),
    "ours-sqlite": ServerSpec(
        "ours-sqlite",
        "ours",
        "bench.servers.ours",
        ("--store", "sqlite:///{workdir}/tasks.db"),
        store="sqlite",
    ),
    "ours-postgres": ServerSpec(
        "ours-postgres", "ours", "bench.servers.ours", ("--store", "{pg}"), store="postgres"
    ),
    "sdk-memory": ServerSpec(
        "sdk-memory", "sdk", "bench.servers.sdk_echo", ("--store", "memory"), store="memory"
    ),
    "sdk-sqlite": ServerSpec(
        "sdk-sqlite",
        "sdk",
        "bench.servers.sdk_echo",
        ("--store", "sqlite:///{workdir}/tasks.db"),
        store="sqlite",
        slow=True,
    ),
    "sdk-postgres": ServerSpec(
        "sdk-postgres", "sdk", "bench.servers.sdk_echo", ("--store", "{pg}"), store="postgres", slow=True
    ),
    "bare-grpc": ServerSpec("bare-grpc", "ceiling", "bench.servers.bare_grpc", bindings=("grpc",)),
    "bare-aiohttp": ServerSpec(
        "bare-aiohttp", "ceiling", "bench.servers.bare_aiohttp", bindings=("jsonrpc", "rest")
    ),
}
#: Not a server of the matrix: ``--servers cluster`` (and the default) adds the cluster section.
CLUSTER = "cluster"
#: ``--quick``: the SDK's slow SQLite store is left out (its PostgreSQL store is in).
QUICK_SERVERS = "ours,sdk-memory,sdk-postgres,ceiling,cluster"


def ours_available() -> bool:
    """Whether the core server (``a2a_grpc.server``) and gateway exist yet."""
    return all(importlib.util.find_spec(m) is not None for m in ("a2a_grpc.server", "a2a_grpc.agents"))


def machine_info() -> dict[str, Any]:
    model = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load: list[str] = []
    with contextlib.suppress(OSError):
        load = Path("/proc/loadavg").read_text().split()[:3]
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadavg": " ".join(load) if load else "?",
    }


# --- main ---------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="one cell per binding (SendMessage, c=16; durable stores on gRPC only), short windows",
    )
    ap.add_argument("--scale", action="store_true", help="run the scale checks (bench/scale.py) instead")
    ap.add_argument(
        "--servers", help=f"comma list of {','.join(SERVERS)}, {CLUSTER} (or families ours,sdk,ceiling)"
    )
    ap.add_argument("--bindings", help="comma list of grpc,jsonrpc,rest")
    ap.add_argument("--methods", help="comma list of SendMessage,SendStreamingMessage,GetTask")
    ap.add_argument("--concurrency", help="comma list, default 16,64")
    ap.add_argument("--warmup", type=float, help="seconds of warm-up per cell (default 1, quick 0.5)")
    ap.add_argument("--window", type=float, help="seconds per measurement window (default 2, quick 1)")
    ap.add_argument(
        "--slow-windows",
        type=int,
        help="windows per cell of the SDK's durable servers (~100 req/s; default 2, at most --windows)",
    )
    ap.add_argument(
        "--windows", type=int, default=3, help="windows per cell; figures are medians (default 3)"
    )
    ap.add_argument("--text-size", type=int, default=100, help="bytes of message text (default 100)")
    ap.add_argument(
        "--no-postgres", action="store_true", help="leave out the PostgreSQL columns and the cluster section"
    )
    ap.add_argument(
        "--cluster-tasks", type=int, help="cross-replica latency: tasks of 200 events (default 3, quick 1)"
    )
    ap.add_argument("--out", type=Path, help="Markdown report (default bench/results/latest.md)")
    ap.add_argument("--json", type=Path, help="JSON cells (default next to --out, .json)")
    ap.add_argument("--label", default="", help="a line added to the report (e.g. 'shared machine: noisy')")
    ap.add_argument(
        "--streams", type=int, help="--scale: SubscribeToTask streams (default 10000, quick 1000)"
    )
    ap.add_argument("--render", type=Path, help="only re-render the report from a JSON written by a run")
    ap.add_argument("--no-pin", action="store_true", help="do not pin server and load generator to CPUs")
    args = ap.parse_args(argv)
    if args.quick:
        args.methods = args.methods or "SendMessage"
        args.concurrency = args.concurrency or "16"
        args.servers = args.servers or QUICK_SERVERS
        args.warmup = 0.5 if args.warmup is None else args.warmup
        args.window = 1.0 if args.window is None else args.window
        args.cluster_tasks = 1 if args.cluster_tasks is None else args.cluster_tasks
    args.warmup = 1.0 if args.warmup is None else args.warmup
    args.window = 2.0 if args.window is None else args.window
    args.slow_windows = min(args.windows, 2 if args.slow_windows is None else args.slow_windows)
    args.cluster_tasks = 3 if args.cluster_tasks is None else args.cluster_tasks
    return args


def _select_servers(spec: str | None) -> tuple[list[ServerSpec], bool]:
    """The servers ``--servers`` names, and whether it asks for the cluster section
    (the default: every server and the cluster)."""
    if not spec:
        return list(SERVERS.values()), True
    chosen: list[ServerSpec] = []
    cluster = False
    for name in (s.strip() for s in spec.split(",") if s.strip()):
        if name in SERVERS:
            chosen.append(SERVERS[name])
        elif name in {"ours", "sdk", "ceiling"}:
            chosen += [s for s in SERVERS.values() if s.family == name]
        elif name == CLUSTER:
            cluster = True
        else:
            raise SystemExit(
                f"unknown server {name!r}; known: {', '.join(SERVERS)}, {CLUSTER}, ours, sdk, ceiling"
            )
    return list(dict.fromkeys(chosen)), cluster


async def _plan(
    args: argparse.Namespace,
) -> tuple[list[tuple[ServerSpec, list[tuple[str, str, int]]]], bool, list[str]]:
    """What to run: each server with its (binding, method, concurrency) cells, whether
    to run the cluster section, and notes. Exits with one line when PostgreSQL is
    needed (not ``--no-postgres``) but unreachable."""
    servers, cluster = _select_servers(args.servers)
    bindings = [b for b in (args.bindings or ",".join(BINDINGS)).split(",") if b]
    methods = [m for m in (args.methods or ",".join(METHODS)).split(",") if m]
    concs = [int(c) for c in (args.concurrency or "16,64").split(",") if c]
    for b in bindings:
        if b not in BINDINGS:
            raise SystemExit(f"unknown binding {b!r}")
    for m in methods:
        if m not in METHODS:
            raise SystemExit(f"unknown method {m!r}")
    notes: list[str] = []
    if any(s.family == "ours" for s in servers) and not ours_available():
        notes.append("a2a-grpc's server is not built yet: its rows are missing")
        servers = [s for s in servers if s.family != "ours"]
    if args.no_postgres:
        if cluster or any(s.store == "postgres" for s in servers):
            notes.append("PostgreSQL columns and the cluster section left out (--no-postgres)")
        servers, cluster = [s for s in servers if s.store != "postgres"], False
    elif cluster or any(s.store == "postgres" for s in servers):
        try:
            await pg.check()
        except pg.PostgresUnavailable as exc:
            raise SystemExit(str(exc)) from None
    plan = []
    for spec in servers:
        mine = [b for b in bindings if b in spec.bindings]
        if args.quick and spec.store in ("sqlite", "postgres"):
            mine = mine[:1]  # quick: the durable stores on one binding
        todo = [(b, m, c) for b in mine for m in methods for c in concs]
        if todo:
            plan.append((spec, todo))
    return plan, cluster, notes


async def _run_server(
    spec: ServerSpec,
    todo: list[tuple[str, str, int]],
    args: argparse.Namespace,
    cells: list[Cell],
    notes: list[str],
) -> None:
    """Starts one server (on a fresh database for PostgreSQL), measures its cells, stops it."""
    db = await pg.create_database() if spec.store == "postgres" else ""
    print(f"== {spec.name}: starting" + (f" (database {pg.name_of(db)})" if db else ""), flush=True)
    try:
        try:
            server = await asyncio.to_thread(start_server, spec, pin=not args.no_pin, subst={"{pg}": db})
        except RuntimeError as exc:
            notes.append(f"{spec.name} failed to start: {str(exc).splitlines()[0]}")
            print(exc, file=sys.stderr, flush=True)
            return
        TASKS_CREATED[0] = 0
        rss_start = server.rss_mb()
        windows = args.slow_windows if spec.slow else args.windows
        try:
            for b, m, c in todo:
                client = make_client(await discover(server.grpc_port, server.http_port), b, c)
                try:
                    cell = await measure_cell(
                        [server], client, b, m, c, warmup=args.warmup, window=args.window,
                        windows=windows, text_size=args.text_size, rss_start=rss_start,
                    )  # fmt: skip
                finally:
                    await client.close()
                cells.append(cell)
                print(cell_line(cell), flush=True)
                if server.proc.poll() is not None:
                    notes.append(f"{spec.name} exited during the run: {server.log_tail(3)}")
                    break
        finally:
            server.stop()
    finally:
        if db:
            await pg.drop_database(db)


def _estimate(
    plan: list[tuple[ServerSpec, list[tuple[str, str, int]]]], with_cluster: bool, args: argparse.Namespace
) -> str:
    """The size of the run and about how long it takes (windows, plus ~3 s per server start)."""
    cells = sum(len(todo) for _, todo in plan)
    secs = 0.0
    for spec, todo in plan:
        windows = args.slow_windows if spec.slow else args.windows
        secs += 3 + len(todo) * (args.warmup + windows * args.window)
    if with_cluster:  # 2 × tasks × 200 events 5 ms apart, 4 replica starts, one cell per concurrency
        concs = len((args.concurrency or "16,64").split(","))
        secs += 2.5 * args.cluster_tasks + 12 + concs * (args.warmup + args.windows * args.window + 1)
    more = " and the cluster section" if with_cluster else ""
    took = f"{secs:.0f} s" if secs < 90 else f"{secs / 60:.0f} min"
    return f"{cells} cells on {len(plan)} servers{more}: about {took} on a quiet machine"


async def run_matrix(
    args: argparse.Namespace,
) -> tuple[list[Cell], ClusterResult | None, dict[str, Any], list[str]]:
    """Runs the planned servers' cells, then the cluster section; returns what they
    measured, the machine and the notes."""
    plan, with_cluster, notes = await _plan(args)
    if not args.no_pin and not pin_self():
        notes.append("fewer than 2 CPUs: server and load generator are not pinned")
    info = machine_info()
    print(f"== plan: {_estimate(plan, with_cluster, args)}", flush=True)
    cells: list[Cell] = []
    started = time.monotonic()
    for spec, todo in plan:
        await _run_server(spec, todo, args, cells, notes)
    cluster = None
    if with_cluster and ours_available():
        from bench.cluster import cluster_section

        concs = [int(c) for c in (args.concurrency or "16,64").split(",") if c]
        cluster = await cluster_section(args, concs)
    notes.append(f"matrix took {time.monotonic() - started:.0f} s")
    return cells, cluster, info, notes


def write_report(
    cells: list[Cell],
    info: dict[str, Any],
    notes: list[str],
    args: argparse.Namespace,
    cluster: ClusterResult | None = None,
) -> int:
    """Writes the Markdown and JSON reports, prints the Markdown; returns the exit
    status (1 when a cell had errors or nothing was measured)."""
    report = render(cells, info, args, notes, cluster)
    out: Path = args.out or RESULTS / "latest.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    json_path: Path = args.json or out.with_suffix(".json")
    keys = ("warmup", "window", "windows", "slow_windows", "text_size", "label")
    settings = {k: getattr(args, k) for k in keys}
    data = {
        "machine": info,
        "settings": settings,
        "notes": notes,
        "cells": [asdict(c) for c in cells],
        "cluster": asdict(cluster) if cluster is not None else None,
    }
    json_path.write_text(json.dumps(data, indent=1))
    print()
    print(report)
    errors = any(c.errors for c in cells) or (cluster is not None and cluster.errors > 0)
    return 1 if errors or not cells else 0


def render_json(path: Path, args: argparse.Namespace) -> int:
    """Re-renders the report of a JSON written by a run (``--render``)."""
    data = json.loads(path.read_text())
    for k, v in data.get("settings", {}).items():
        if k != "label" or not args.label:
            setattr(args, k, v)
    fields = set(Cell.__dataclass_fields__)
    old = {"rss_start_mb": float("nan"), "tasks_stored": 0}  # absent from early runs
    cells = [Cell(**{**old, **{k: v for k, v in c.items() if k in fields}}) for c in data["cells"]]
    cluster = ClusterResult.from_json(data["cluster"]) if data.get("cluster") else None
    return write_report(cells, data["machine"], data["notes"], args, cluster)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    if args.render:
        return render_json(args.render, args)
    if args.scale:
        from bench.scale import run_scale

        return asyncio.run(run_scale(args))
    cells, cluster, info, notes = asyncio.run(run_matrix(args))
    return write_report(cells, info, notes, args, cluster)


if __name__ == "__main__":
    sys.exit(main())
