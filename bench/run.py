"""Benchmark runner: a2a-grpc vs the official ``a2a-sdk`` vs bare ceilings (issue 6).

``python -m bench.run`` runs the whole matrix — servers × {grpc, jsonrpc, rest} ×
{SendMessage, SendStreamingMessage, GetTask} × concurrency {16, 64} — and writes
``bench/results/latest.md`` (and ``.json``); ``--quick`` runs one cell per binding;
``--scale`` runs the scale checks (``bench/scale.py``) instead.

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
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.loadgen import BINDINGS, METHODS, TASKS_CREATED, discover, make_client, prepare_task_ids, run_load
from bench.procs import REPO, ServerProc, ServerSpec, pin_self, start_server

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
    "sdk-memory": ServerSpec(
        "sdk-memory", "sdk", "bench.servers.sdk_echo", ("--store", "memory"), store="memory"
    ),
    "sdk-sqlite": ServerSpec(
        "sdk-sqlite",
        "sdk",
        "bench.servers.sdk_echo",
        ("--store", "sqlite:///{workdir}/tasks.db"),
        store="sqlite",
    ),
    "bare-grpc": ServerSpec("bare-grpc", "ceiling", "bench.servers.bare_grpc", bindings=("grpc",)),
    "bare-aiohttp": ServerSpec(
        "bare-aiohttp", "ceiling", "bench.servers.bare_aiohttp", bindings=("jsonrpc", "rest")
    ),
}
CLIENT_BOUND_PCT = 85
CEILING_FOR = {"grpc": "bare-grpc", "jsonrpc": "bare-aiohttp", "rest": "bare-aiohttp"}


@dataclass(slots=True)
class Cell:
    """The measured figures of one (server, binding, method, concurrency) cell:
    medians over the windows. Latencies in milliseconds, CPU in percent of one core
    and in CPU microseconds per successful request, RSS in MiB after the cell."""

    server: str
    family: str
    store: str
    binding: str
    method: str
    concurrency: int
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_pct: float
    cpu_us_per_req: float
    rss_mb: float
    rss_start_mb: float
    tasks_stored: int
    gen_cpu_pct: float
    requests: int
    errors: int
    windows: int
    error_samples: list[str]


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


async def measure_cell(
    server: ServerProc,
    binding: str,
    method: str,
    concurrency: int,
    *,
    warmup: float,
    window: float,
    windows: int,
    text_size: int,
    rss_start: float = float("nan"),
) -> Cell:
    """Runs one cell against a running server and returns its medians."""
    endpoints = await discover(server.grpc_port, server.http_port)
    client = make_client(endpoints, binding, concurrency)
    try:
        task_ids = await prepare_task_ids(client, 64) if method == "GetTask" else None

        def sample() -> tuple[float, float, float]:
            t = os.times()
            return (time.perf_counter(), server.cpu_seconds(), t.user + t.system)

        ws = await run_load(
            client,
            method,
            concurrency=concurrency,
            warmup=warmup,
            window=window,
            windows=windows,
            text_size=text_size,
            task_ids=task_ids,
            on_window=sample,
        )
    finally:
        await client.close()
    rss = server.rss_mb()
    cpu_pct, cpu_us, gen_pct = [], [], []
    for w in ws:
        (t0, c0, g0), (t1, c1, g1) = w.extra
        cpu_pct.append(100 * (c1 - c0) / (t1 - t0))
        gen_pct.append(100 * (g1 - g0) / (t1 - t0))
        cpu_us.append(1e6 * (c1 - c0) / w.ok if w.ok else float("nan"))
    errors: dict[str, int] = {}
    for w in ws:
        for k, v in w.errors.items():
            errors[k] = errors.get(k, 0) + v
    med = statistics.median
    return Cell(
        server=server.spec.name,
        family=server.spec.family,
        store=server.spec.store,
        binding=binding,
        method=method,
        concurrency=concurrency,
        rps=med(w.rps for w in ws),
        p50_ms=1e3 * med(w.percentile(0.50) for w in ws),
        p99_ms=1e3 * med(w.percentile(0.99) for w in ws),
        cpu_pct=med(cpu_pct),
        cpu_us_per_req=med(cpu_us),
        rss_mb=rss,
        rss_start_mb=rss_start,
        tasks_stored=TASKS_CREATED[0],
        gen_cpu_pct=med(gen_pct),
        requests=sum(w.ok for w in ws),
        errors=sum(errors.values()),
        windows=len(ws),
        error_samples=[f"{v}× {k}" for k, v in sorted(errors.items(), key=lambda kv: -kv[1])[:3]],
    )


# --- report -------------------------------------------------------------------------


def _fmt(x: float, nd: int = 0) -> str:
    if x != x:  # NaN
        return "–"
    return f"{x:,.{nd}f}"


def _ratio(a: Cell | None, b: Cell | None) -> str:
    if a is None or b is None or not b.rps or not a.requests:
        return "–"
    return f"{a.rps / b.rps:.2f}×"


def _cpu_ratio(a: Cell | None, b: Cell | None) -> str:
    if a is None or b is None or not b.cpu_us_per_req or a.cpu_us_per_req != a.cpu_us_per_req:
        return "–"
    return f"{a.cpu_us_per_req / b.cpu_us_per_req:.2f}×"


def render(cells: list[Cell], info: dict[str, Any], args: argparse.Namespace, notes: list[str]) -> str:
    """The Markdown report: context, the summary with ratios, then every cell."""
    by = {(c.server, c.binding, c.method, c.concurrency): c for c in cells}
    keys = sorted(
        {(c.binding, c.method, c.concurrency) for c in cells},
        key=lambda k: (BINDINGS.index(k[0]), METHODS.index(k[1]), k[2]),
    )
    out = [
        "# a2a-grpc benchmark",
        "",
        f"- date: {info['date']}",
        f"- machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}, load average at start {info['loadavg']}",
        f"- Python {info['python']}; servers pinned to CPU 0, load generator on CPU 1 (uvloop everywhere)",
        f"- per cell: {args.warmup:g} s warm-up, then the median of {args.windows} windows of {args.window:g} s;"
        f" {args.text_size}-byte text; closed loop at fixed concurrency",
        "- servers: ours = a2a-grpc `A2AServer` with the `echo` agent; sdk = `a2a-sdk` 1.3.0"
        " (`DefaultRequestHandler`, `GrpcHandler`, Starlette JSON-RPC/REST routes on uvicorn) with the same echo agent;"
        " ceilings = bare `grpc.aio` servicer / bare aiohttp handlers answering the same shapes with no framework",
        "- every answer is parsed and checked (COMPLETED task echoing the text; GetTask returns the task);"
        " errors are counted, never served",
    ]
    if args.label:
        out.append(f"- **{args.label}**")
    out += [f"- note: {n}" for n in notes]
    out += [
        "",
        "## Summary (req/s; ratios of req/s; p99 in ms)",
        "",
        "| binding | method | conc | ours mem | ours sqlite | sdk mem | sdk sqlite | ceiling |"
        " ours/sdk mem | ours/sdk sqlite | ours mem/ceiling | p99 ours mem | p99 sdk mem |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b, m, c in keys:
        om, osq = by.get(("ours-memory", b, m, c)), by.get(("ours-sqlite", b, m, c))
        sm, ssq = by.get(("sdk-memory", b, m, c)), by.get(("sdk-sqlite", b, m, c))
        ce = by.get((CEILING_FOR[b], b, m, c))

        def rps(x: Cell | None) -> str:
            if x is None:
                return "–"
            return _fmt(x.rps) + (" †" if x.gen_cpu_pct >= CLIENT_BOUND_PCT else "")

        def p99(x: Cell | None) -> str:
            return _fmt(x.p99_ms, 1) if x else "–"

        out.append(
            f"| {b} | {m} | {c} | {rps(om)} | {rps(osq)} | {rps(sm)} | {rps(ssq)} | {rps(ce)} |"
            f" {_ratio(om, sm)} | {_ratio(osq, ssq)} | {_ratio(om, ce)} | {p99(om)} | {p99(sm)} |"
        )
    out += [
        "",
        f"† the load generator used ≥ {CLIENT_BOUND_PCT}% of its core: the figure is a lower bound (client-bound).",
    ]
    out += [
        "",
        "## Server CPU per request (µs; the noise-robust view: ratios = how many times less CPU ours needs)",
        "",
        "| binding | method | conc | ours mem | ours sqlite | sdk mem | sdk sqlite | ceiling |"
        " sdk/ours mem | sdk/ours sqlite | ceiling/ours mem |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b, m, c in keys:
        om, osq = by.get(("ours-memory", b, m, c)), by.get(("ours-sqlite", b, m, c))
        sm, ssq = by.get(("sdk-memory", b, m, c)), by.get(("sdk-sqlite", b, m, c))
        ce = by.get((CEILING_FOR[b], b, m, c))

        def us(x: Cell | None) -> str:
            return _fmt(x.cpu_us_per_req) if x else "–"

        out.append(
            f"| {b} | {m} | {c} | {us(om)} | {us(osq)} | {us(sm)} | {us(ssq)} | {us(ce)} |"
            f" {_cpu_ratio(sm, om)} | {_cpu_ratio(ssq, osq)} | {_cpu_ratio(ce, om)} |"
        )
    out += [
        "",
        "## Memory (RSS after the server's last cell; every task it created is still stored)",
        "",
        "| server | RSS at start MiB | RSS at end MiB | tasks stored | KiB per stored task |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in SERVERS:
        mine = [x for x in cells if x.server == name]
        if not mine:
            continue
        last = mine[-1]
        per = (
            (last.rss_mb - last.rss_start_mb) * 1024 / last.tasks_stored
            if last.tasks_stored
            else float("nan")
        )
        out.append(
            f"| {name} | {_fmt(last.rss_start_mb, 1)} | {_fmt(last.rss_mb, 1)} | {last.tasks_stored:,} | {_fmt(per, 2)} |"
        )
    out += [
        "",
        "## Every cell",
        "",
        "| server | binding | method | conc | req/s | p50 ms | p99 ms | server CPU % | CPU µs/req | RSS MiB |"
        " loadgen CPU % | errors |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    order = list(SERVERS)
    for cell in sorted(
        cells,
        key=lambda x: (
            BINDINGS.index(x.binding),
            METHODS.index(x.method),
            x.concurrency,
            order.index(x.server) if x.server in order else 99,
        ),
    ):
        out.append(
            f"| {cell.server} | {cell.binding} | {cell.method} | {cell.concurrency} | {_fmt(cell.rps)} |"
            f" {_fmt(cell.p50_ms, 2)} | {_fmt(cell.p99_ms, 2)} | {_fmt(cell.cpu_pct)} | {_fmt(cell.cpu_us_per_req)} |"
            f" {_fmt(cell.rss_mb, 1)} | {_fmt(cell.gen_cpu_pct)} | {cell.errors} |"
        )
    errs = [c for c in cells if c.errors]
    if errs:
        out += ["", "## Errors", ""]
        out += [
            f"- {c.server} {c.binding} {c.method} c={c.concurrency}: {'; '.join(c.error_samples)}"
            for c in errs
        ]
    out += [
        "",
        "How to read: `server CPU %` near 100 means the server core is saturated (the figure is the server's);"
        " `loadgen CPU %` near 100 means the load generator is the bottleneck and the figure is a lower bound."
        " `CPU µs/req` is the least noise-sensitive figure on a shared machine.",
        "",
        "Targets, the bounds behind them and the profiled hot spots: `bench/results/analysis.md`;"
        " scale checks (`--scale`): `bench/results/scale.md`.",
        "",
    ]
    return "\n".join(out)


# --- main ---------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="one cell per binding (SendMessage, c=16), short windows"
    )
    ap.add_argument("--scale", action="store_true", help="run the scale checks (bench/scale.py) instead")
    ap.add_argument("--servers", help=f"comma list of {','.join(SERVERS)} (or families ours,sdk,ceiling)")
    ap.add_argument("--bindings", help="comma list of grpc,jsonrpc,rest")
    ap.add_argument("--methods", help="comma list of SendMessage,SendStreamingMessage,GetTask")
    ap.add_argument("--concurrency", help="comma list, default 16,64")
    ap.add_argument("--warmup", type=float, help="seconds of warm-up per cell (default 1, quick 0.5)")
    ap.add_argument("--window", type=float, help="seconds per measurement window (default 2, quick 1)")
    ap.add_argument(
        "--windows", type=int, default=3, help="windows per cell; figures are medians (default 3)"
    )
    ap.add_argument("--text-size", type=int, default=100, help="bytes of message text (default 100)")
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
        args.servers = args.servers or "ours-memory,sdk-memory,ceiling"
        args.warmup = 0.5 if args.warmup is None else args.warmup
        args.window = 1.0 if args.window is None else args.window
    args.warmup = 1.0 if args.warmup is None else args.warmup
    args.window = 2.0 if args.window is None else args.window
    return args


def _select_servers(spec: str | None) -> list[ServerSpec]:
    if not spec:
        return list(SERVERS.values())
    chosen: list[ServerSpec] = []
    for name in (s.strip() for s in spec.split(",") if s.strip()):
        if name in SERVERS:
            chosen.append(SERVERS[name])
        elif name in {"ours", "sdk", "ceiling"}:
            chosen += [s for s in SERVERS.values() if s.family == name]
        else:
            raise SystemExit(f"unknown server {name!r}; known: {', '.join(SERVERS)}, ours, sdk, ceiling")
    return list(dict.fromkeys(chosen))


async def run_matrix(args: argparse.Namespace) -> tuple[list[Cell], dict[str, Any], list[str]]:
    servers = _select_servers(args.servers)
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
    if not args.no_pin and not pin_self():
        notes.append("fewer than 2 CPUs: server and load generator are not pinned")
    if any(s.family == "ours" for s in servers) and not ours_available():
        notes.append("a2a-grpc's server is not built yet: its rows are missing")
        servers = [s for s in servers if s.family != "ours"]
    info = machine_info()
    cells: list[Cell] = []
    started = time.monotonic()
    for spec in servers:
        todo = [(b, m, c) for b in bindings if b in spec.bindings for m in methods for c in concs]
        if not todo:
            continue
        print(f"== {spec.name}: starting", flush=True)
        try:
            server = await asyncio.to_thread(start_server, spec, pin=not args.no_pin)
        except RuntimeError as exc:
            notes.append(f"{spec.name} failed to start: {str(exc).splitlines()[0]}")
            print(exc, file=sys.stderr, flush=True)
            continue
        TASKS_CREATED[0] = 0
        rss_start = server.rss_mb()
        try:
            for b, m, c in todo:
                cell = await measure_cell(
                    server,
                    b,
                    m,
                    c,
                    warmup=args.warmup,
                    window=args.window,
                    windows=args.windows,
                    text_size=args.text_size,
                    rss_start=rss_start,
                )
                cells.append(cell)
                print(
                    f"   {spec.name:13} {b:8} {m:21} c={c:<3} {cell.rps:9,.0f} req/s  p50 {cell.p50_ms:7.2f} ms"
                    f"  p99 {cell.p99_ms:7.2f} ms  cpu {cell.cpu_pct:4.0f}%  {cell.cpu_us_per_req:7,.0f} µs/req"
                    f"  rss {cell.rss_mb:6.1f} MiB  gen {cell.gen_cpu_pct:4.0f}%  errors {cell.errors}",
                    flush=True,
                )
                if cell.errors:
                    print(f"     errors: {'; '.join(cell.error_samples)}", flush=True)
                if server.proc.poll() is not None:
                    notes.append(f"{spec.name} exited during the run: {server.log_tail(3)}")
                    break
        finally:
            server.stop()
    notes.append(f"matrix took {time.monotonic() - started:.0f} s")
    return cells, info, notes


def write_report(cells: list[Cell], info: dict[str, Any], notes: list[str], args: argparse.Namespace) -> int:
    """Writes the Markdown and JSON reports, prints the Markdown; returns the exit
    status (1 when a cell had errors or nothing was measured)."""
    report = render(cells, info, args, notes)
    out: Path = args.out or RESULTS / "latest.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    json_path: Path = args.json or out.with_suffix(".json")
    settings = {k: getattr(args, k) for k in ("warmup", "window", "windows", "text_size", "label")}
    json_path.write_text(
        json.dumps(
            {"machine": info, "settings": settings, "notes": notes, "cells": [asdict(c) for c in cells]},
            indent=1,
        )
    )
    print()
    print(report)
    return 1 if any(c.errors for c in cells) or not cells else 0


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    if args.render:
        data = json.loads(args.render.read_text())
        for k, v in data.get("settings", {}).items():
            if k != "label" or not args.label:
                setattr(args, k, v)
        fields = set(Cell.__dataclass_fields__)
        old = {"rss_start_mb": float("nan"), "tasks_stored": 0}  # absent from early runs
        cells = [Cell(**{**old, **{k: v for k, v in c.items() if k in fields}}) for c in data["cells"]]
        return write_report(cells, data["machine"], data["notes"], args)
    if args.scale:
        from bench.scale import run_scale

        return asyncio.run(run_scale(args))
    cells, info, notes = asyncio.run(run_matrix(args))
    return write_report(cells, info, notes, args)


if __name__ == "__main__":
    sys.exit(main())
