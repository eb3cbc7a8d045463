"""The benchmark's figures and their Markdown report: cells, the cluster section, targets.

:class:`Cell` is one measured (server, binding, method, concurrency) cell;
:class:`ClusterResult` the cluster section (cross-replica event latency, SendMessage
through 2 replicas sharing PostgreSQL). :func:`render` turns them into the report
``make bench`` prints; :func:`targets` reads issue 17's targets off the same figures
(met / missed with the figure: a report, not an assertion).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CLIENT_BOUND_PCT", "Cell", "ClusterResult", "Target", "render", "targets"]

from bench.loadgen import BINDINGS, METHODS

CLIENT_BOUND_PCT = 85
CEILING_FOR = {"grpc": "bare-grpc", "jsonrpc": "bare-aiohttp", "rest": "bare-aiohttp"}
#: (server, column title) of the summary tables, in order.
COLUMNS = (
    ("ours-memory", "ours mem"),
    ("ours-sqlite", "ours sqlite"),
    ("ours-postgres", "ours pg"),
    ("sdk-memory", "sdk mem"),
    ("sdk-sqlite", "sdk sqlite"),
    ("sdk-postgres", "sdk pg"),
)
STORES = (("memory", "mem"), ("sqlite", "sqlite"), ("postgres", "pg"))
SERVER_ORDER = [name for name, _ in COLUMNS] + ["bare-grpc", "bare-aiohttp"]


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
    #: CPU µs per request of the PostgreSQL backends serving the server's database (NaN: none).
    db_cpu_us_per_req: float = float("nan")


@dataclass(slots=True)
class ClusterResult:
    """The cluster section. Latencies in milliseconds (``cross``: committed on r1 →
    received by a subscriber on r2; ``local``: the same with the subscriber on r1);
    ``cells``: SendMessage through 2 replicas (CPU summed over both); ``checked`` /
    ``check_errors``: tasks read back through the replica that did not create them."""

    events: int = 0
    cross_p50_ms: float = float("nan")
    cross_p99_ms: float = float("nan")
    local_p50_ms: float = float("nan")
    local_p99_ms: float = float("nan")
    cells: list[Cell] = field(default_factory=list)
    checked: int = 0
    check_errors: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return self.check_errors + sum(c.errors for c in self.cells)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClusterResult:
        cells = [Cell(**c) for c in data.get("cells", ())]
        return cls(**{**{k: v for k, v in data.items() if k in cls.__dataclass_fields__}, "cells": cells})


# --- targets --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """One target of issue 17: ``met`` is None when nothing in the run measures it."""

    name: str
    met: bool | None
    figure: str

    def line(self) -> str:
        word = {True: "met", False: "MISSED", None: "not measured"}[self.met]
        return f"- **{word}** — {self.name}: {self.figure}"


def _where(c: Cell) -> str:
    return f"{c.binding} {c.method} c={c.concurrency}"


def _ratio_target(
    name: str, pairs: Iterable[tuple[Cell, float]], ok: Callable[[float], bool], worst: Callable[..., Any]
) -> Target:
    """A target over cells: each pair is (cell, ratio); met when ``ok`` holds for all."""
    got = [(c, r) for c, r in pairs if r == r]
    if not got:
        return Target(name, None, "no cell of this run measures it")
    cell, r = worst(got, key=lambda cr: cr[1])
    held = sum(ok(x) for _, x in got)
    return Target(name, held == len(got), f"worst {r:.2f}× ({_where(cell)}); {held} of {len(got)} cells hold")


def _cpu(a: Cell | None, b: Cell | None) -> float:
    """a's CPU per request over b's (NaN when either is missing or empty)."""
    if a is None or b is None or not b.cpu_us_per_req or not a.requests or not b.requests:
        return float("nan")
    return a.cpu_us_per_req / b.cpu_us_per_req


def _reachable(vs_sdk: list[tuple[Cell, float]], by: dict[tuple[str, str, str, int], Cell]) -> Target:
    """The ours/SDK target narrowed to the cells some server could meet: a server
    costs at least the bare transport (the ceiling cell), so where the SDK's CPU is
    under 10× the ceiling's no server is 10× cheaper than the SDK (e.g. GetTask)."""
    reach, out = [], []
    for ours, ratio in vs_sdk:
        sdk = by.get((f"sdk-{ours.store}", ours.binding, ours.method, ours.concurrency))
        ceiling = by.get((CEILING_FOR[ours.binding], ours.binding, ours.method, ours.concurrency))
        bound = _cpu(sdk, ceiling)
        (out if bound == bound and bound < 10 else reach).append((ours, ratio))
    target = _ratio_target(
        "ours/SDK ≥ 10× on the cells of that target that the bare transport leaves reachable"
        " (SDK CPU ≥ 10× the ceiling's)",
        reach,
        lambda r: r >= 10,
        min,
    )
    if out:
        where = ", ".join(f"{c.store} {_where(c)}" for c, _ in out)
        target = Target(target.name, target.met, f"{target.figure}; out of any server's reach: {where}")
    return target


def targets(cells: list[Cell], cluster: ClusterResult | None) -> list[Target]:
    """Issue 17's targets, read from this run's cells (CPU per request) and cluster section."""
    by = {(c.server, c.binding, c.method, c.concurrency): c for c in cells}

    def pairs(num: str, den: str, keep: Callable[[Cell], bool], on: str) -> list[tuple[Cell, float]]:
        out = []
        for (srv, b, m, c), cell in by.items():
            if srv == den and keep(cell):
                other = by.get((num, b, m, c))
                ratio = _cpu(other, cell) if on == "num" else _cpu(cell, other)
                out.append((cell, ratio))
        return out

    send = lambda c: c.method == "SendMessage"  # noqa: E731
    vs_sdk = []
    for store in ("sqlite", "postgres"):
        vs_sdk += pairs(f"sdk-{store}", f"ours-{store}", lambda c: True, "num")
    vs_sdk += pairs("sdk-memory", "ours-memory", lambda c: c.binding != "grpc", "num")
    unary = lambda c: c.binding == "grpc" and c.method in ("SendMessage", "GetTask")  # noqa: E731
    out = [
        _ratio_target(
            "SQLite SendMessage CPU ≤ 1.3× in-memory (ours)",
            pairs("ours-sqlite", "ours-memory", send, "num"),
            lambda r: r <= 1.3,
            max,
        ),
        _ratio_target(
            "PostgreSQL SendMessage CPU ≤ 1.6× in-memory (ours)",
            pairs("ours-postgres", "ours-memory", send, "num"),
            lambda r: r <= 1.6,
            max,
        ),
        _ratio_target(
            "ours/SDK ≥ 10× (CPU per request) on every durable cell and every in-memory HTTP cell",
            vs_sdk,
            lambda r: r >= 10,
            min,
        ),
        _reachable(vs_sdk, by),
        _ratio_target(
            "gRPC unary ≥ 0.7 of the bare grpc.aio ceiling (ceiling CPU / ours CPU, in-memory)",
            pairs("bare-grpc", "ours-memory", unary, "num"),
            lambda r: r >= 0.7,
            min,
        ),
    ]
    name = "cross-replica event p99 ≤ 10 ms"
    if cluster is None or cluster.cross_p99_ms != cluster.cross_p99_ms:
        out.append(Target(name, None, "no cluster section in this run"))
    else:
        p99 = cluster.cross_p99_ms
        out.append(Target(name, p99 <= 10.0, f"p99 {p99:.2f} ms (p50 {cluster.cross_p50_ms:.2f} ms)"))
    return out


# --- the Markdown ---------------------------------------------------------------------


def _fmt(x: float, nd: int = 0) -> str:
    if x != x:  # NaN
        return "–"
    return f"{x:,.{nd}f}"


def _times(x: float) -> str:
    return "–" if x != x else f"{x:.2f}×"


def _table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a row or a column with nothing but '–' (not measured) past
    the three key columns is left out."""
    rows = [r for r in rows if any(x != "–" for x in r[3:])]
    keep = [i for i in range(len(header)) if i < 3 or any(r[i] != "–" for r in rows)]
    out = ["| " + " | ".join(header[i] for i in keep) + " |", "|" + "|".join(align[i] for i in keep) + "|"]
    out += ["| " + " | ".join(r[i] for i in keep) + " |" for r in rows]
    return out


def _keys(cells: list[Cell]) -> list[tuple[str, str, int]]:
    return sorted(
        {(c.binding, c.method, c.concurrency) for c in cells},
        key=lambda k: (BINDINGS.index(k[0]), METHODS.index(k[1]), k[2]),
    )


def _rps_table(cells: list[Cell]) -> list[str]:
    by = {(c.server, c.binding, c.method, c.concurrency): c for c in cells}

    def rps(x: Cell | None) -> str:
        if x is None:
            return "–"
        return _fmt(x.rps) + (" †" if x.gen_cpu_pct >= CLIENT_BOUND_PCT else "")

    def ratio(a: Cell | None, b: Cell | None) -> str:
        if a is None or b is None or not b.rps or not a.requests:
            return "–"
        return f"{a.rps / b.rps:.2f}×"

    rows = []
    for b, m, c in _keys(cells):
        got = [by.get((s, b, m, c)) for s, _ in COLUMNS]
        ce = by.get((CEILING_FOR[b], b, m, c))
        rows.append(
            [b, m, str(c), *(rps(x) for x in got), rps(ce)]
            + [ratio(by.get((f"ours-{s}", b, m, c)), by.get((f"sdk-{s}", b, m, c))) for s, _ in STORES]
            + [ratio(got[0], ce), _fmt(got[0].p99_ms, 1) if got[0] else "–"]
            + [_fmt(got[3].p99_ms, 1) if got[3] else "–"]
        )
    header = ["binding", "method", "conc", *(t for _, t in COLUMNS), "ceiling"]
    header += [f"ours/sdk {t}" for _, t in STORES] + ["ours mem/ceiling", "p99 ours mem", "p99 sdk mem"]
    return _table(header, ["---"] * 2 + ["---:"] * (len(header) - 2), rows)


def _cpu_table(cells: list[Cell]) -> list[str]:
    by = {(c.server, c.binding, c.method, c.concurrency): c for c in cells}
    rows = []
    for b, m, c in _keys(cells):
        got = [by.get((s, b, m, c)) for s, _ in COLUMNS]
        ce = by.get((CEILING_FOR[b], b, m, c))
        rows.append(
            [
                b,
                m,
                str(c),
                *(_fmt(x.cpu_us_per_req) if x else "–" for x in got),
                _fmt(ce.cpu_us_per_req) if ce else "–",
            ]
            + [_times(_cpu(by.get((f"sdk-{s}", b, m, c)), by.get((f"ours-{s}", b, m, c)))) for s, _ in STORES]
            + [_times(_cpu(ce, got[0]))]
        )
    header = ["binding", "method", "conc", *(t for _, t in COLUMNS), "ceiling"]
    header += [f"sdk/ours {t}" for _, t in STORES] + ["ceiling/ours mem"]
    return _table(header, ["---"] * 2 + ["---:"] * (len(header) - 2), rows)


def _with_db(a: Cell | None, b: Cell | None) -> float:
    """(a's CPU + its PostgreSQL backends' CPU) per request over b's."""
    if a is None or a.db_cpu_us_per_req != a.db_cpu_us_per_req:
        return float("nan")
    return _cpu(a, b) * (a.cpu_us_per_req + a.db_cpu_us_per_req) / a.cpu_us_per_req


def _durable_table(cells: list[Cell]) -> list[str]:
    by = {(c.server, c.binding, c.method, c.concurrency): c for c in cells}
    rows = []
    for b, m, c in _keys(cells):
        row = [b, m, str(c)]
        for fam in ("ours", "sdk"):
            mem = by.get((f"{fam}-memory", b, m, c))
            pg = by.get((f"{fam}-postgres", b, m, c))
            row += [_times(_cpu(by.get((f"{fam}-sqlite", b, m, c)), mem)), _times(_cpu(pg, mem))]
            row.append(_times(_with_db(pg, mem)))
        rows.append(row)
    header = ["binding", "method", "conc"]
    for fam in ("ours", "sdk"):
        header += [f"{fam} sqlite/mem", f"{fam} pg/mem", f"{fam} (pg + PostgreSQL)/mem"]
    return _table(header, ["---"] * 2 + ["---:"] * 7, rows)


def _header(info: dict[str, Any], args: argparse.Namespace, notes: list[str]) -> list[str]:
    out = [
        "# a2a-grpc benchmark",
        "",
        f"- date: {info['date']}",
        f"- machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}, load average at start {info['loadavg']}",
        f"- Python {info['python']}; servers pinned to CPU 0, load generator on CPU 1 (uvloop everywhere);"
        " PostgreSQL (when used) is the machine's own server, not pinned",
        f"- per cell: {args.warmup:g} s warm-up, then the median of {args.windows} windows of {args.window:g} s;"
        f" {args.text_size}-byte text; closed loop at fixed concurrency",
    ]
    slow = getattr(args, "slow_windows", args.windows)
    if slow < args.windows:
        out.append(
            f"- the SDK's durable servers (sdk sqlite, sdk pg: ~100 req/s) run {slow} windows per cell instead of"
            f" {args.windows} (of the same length, long against their latency), to keep the full run under ~16 min"
        )
    out += [
        "- servers: ours = a2a-grpc `A2AServer` with the `echo` agent; sdk = `a2a-sdk` 1.3.0"
        " (`DefaultRequestHandler`, `GrpcHandler`, Starlette JSON-RPC/REST routes on uvicorn) with the same echo agent;"
        " ceilings = bare `grpc.aio` servicer / bare aiohttp handlers answering the same shapes with no framework",
        "- stores: mem = in-memory; sqlite = a file in a fresh temp dir; pg = a fresh PostgreSQL database per server"
        " (ours: `--store postgresql://…`; sdk: `DatabaseTaskStore` on `postgresql+asyncpg`), dropped afterwards",
        "- every answer is parsed and checked (COMPLETED task echoing the text; GetTask returns the task);"
        " errors are counted, never served",
    ]
    if args.label:
        out.append(f"- **{args.label}**")
    return out + [f"- note: {n}" for n in notes]


def _memory_table(cells: list[Cell]) -> list[str]:
    out = [
        "| server | RSS at start MiB | RSS at end MiB | tasks stored | KiB per stored task |",
        "|---|---:|---:|---:|---:|",
    ]
    names = sorted(
        {c.server for c in cells}, key=lambda s: SERVER_ORDER.index(s) if s in SERVER_ORDER else 99
    )
    for name in names:
        last = [x for x in cells if x.server == name][-1]
        delta = last.rss_mb - last.rss_start_mb
        per = delta * 1024 / last.tasks_stored if last.tasks_stored else float("nan")
        out.append(
            f"| {name} | {_fmt(last.rss_start_mb, 1)} | {_fmt(last.rss_mb, 1)} | {last.tasks_stored:,} | {_fmt(per, 2)} |"
        )
    return out


def _cell_rows(cells: list[Cell]) -> list[str]:
    def order(x: Cell) -> tuple[int, int, int, int]:
        srv = SERVER_ORDER.index(x.server) if x.server in SERVER_ORDER else 99
        return (BINDINGS.index(x.binding), METHODS.index(x.method), x.concurrency, srv)

    return [
        f"| {c.server} | {c.binding} | {c.method} | {c.concurrency} | {_fmt(c.rps)} |"
        f" {_fmt(c.p50_ms, 2)} | {_fmt(c.p99_ms, 2)} | {_fmt(c.cpu_pct)} | {_fmt(c.cpu_us_per_req)} |"
        f" {_fmt(c.db_cpu_us_per_req)} | {_fmt(c.rss_mb, 1)} | {_fmt(c.gen_cpu_pct)} | {c.errors} |"
        for c in sorted(cells, key=order)
    ]


_CELL_HEADER = [
    "| server | binding | method | conc | req/s | p50 ms | p99 ms | server CPU % | CPU µs/req | PostgreSQL CPU µs/req |"
    " RSS MiB | loadgen CPU % | errors |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
]


def _cluster_section(cl: ClusterResult, cells: list[Cell]) -> list[str]:
    out = ["", "## Cluster: 2 replicas of ours sharing one PostgreSQL database", ""]
    if cl.events:
        out += [
            "Cross-replica event latency (`bench/cluster_latency.py`: an agent on r1 stamps each artifact chunk"
            " just before it yields it, i.e. before r1 commits it; a SubscribeToTask over gRPC on the other replica"
            " records its arrival; LISTEN/NOTIFY bus; the two replicas are not pinned, as in `bench/results/cluster.md`):",
            "",
            "| path | events | p50 ms | p99 ms |",
            "|---|---:|---:|---:|",
            f"| r1 → subscriber on r2 | {cl.events:,} | {_fmt(cl.cross_p50_ms, 2)} | {_fmt(cl.cross_p99_ms, 2)} |",
            f"| r1 → subscriber on r1 (in-process bus: the baseline) | {cl.events:,} | {_fmt(cl.local_p50_ms, 2)} |"
            f" {_fmt(cl.local_p99_ms, 2)} |",
            "",
        ]
    if cl.cells:
        out += [
            "SendMessage through 2 replicas (`--cluster`, the client alternating replicas). Both replicas are pinned"
            " to CPU 0 and PostgreSQL shares the machine: **on 2 cores this is correctness under load, not a scaling"
            " claim**. Every answer is checked; CPU µs/req is both replicas' CPU over the requests served; after each"
            f" cell the last tasks of each replica are read back through the other ({cl.checked:,} read,"
            f" {cl.check_errors} wrong or missing).",
        ]
        mine = {(c.binding, c.method, c.concurrency) for c in cl.cells}
        single = [
            c for c in cells if c.server == "ours-postgres" and (c.binding, c.method, c.concurrency) in mine
        ]
        if single:
            out[-1] += (
                " The ours-postgres rows are one replica without `--cluster`, from the matrix, for reference."
            )
        out += ["", *_CELL_HEADER, *_cell_rows(cl.cells + single), ""]
    return out + [f"- note: {n}" for n in cl.notes]


def render(
    cells: list[Cell],
    info: dict[str, Any],
    args: argparse.Namespace,
    notes: list[str],
    cluster: ClusterResult | None = None,
) -> str:
    """The Markdown report: context, the summaries with ratios, the cluster section,
    the targets, then every cell."""
    out = _header(info, args, notes)
    out += ["", "## Summary (req/s; ratios of req/s; p99 in ms)", "", *_rps_table(cells)]
    out += [
        "",
        f"† the load generator used ≥ {CLIENT_BOUND_PCT}% of its core: the figure is a lower bound (client-bound).",
    ]
    out += [
        "",
        "## Server CPU per request (µs; the noise-robust view: ratios = how many times less CPU ours needs)",
        "",
        *_cpu_table(cells),
        "",
        "## Durable / in-memory (CPU per request: what the store costs on each cell)",
        "",
    ]
    if any(c.db_cpu_us_per_req == c.db_cpu_us_per_req for c in cells):
        out += [
            "`pg/mem` is the server's own CPU, as every other column; `(pg + PostgreSQL)/mem` adds the CPU of the"
            " PostgreSQL backends serving its database (not the WAL writer's or the checkpointer's).",
            "",
        ]
    out += _durable_table(cells)
    if cluster is not None:
        out += _cluster_section(cluster, cells)
    out += ["", "## Targets (issue 17; read from this run's figures: a report, not a test)", ""]
    out += [t.line() for t in targets(cells, cluster)]
    out += ["", "## Memory (RSS after the server's last cell; every task it created is still stored)", ""]
    out += _memory_table(cells)
    out += ["", "## Every cell", "", *_CELL_HEADER, *_cell_rows(cells)]
    errs = [c for c in cells + (cluster.cells if cluster else []) if c.errors]
    if errs:
        out += ["", "## Errors", ""]
        out += [f"- {c.server} {_where(c)}: {'; '.join(c.error_samples)}" for c in errs]
    out += [
        "",
        "How to read: `server CPU %` near 100 means the server core is saturated (the figure is the server's);"
        " `loadgen CPU %` near 100 means the load generator is the bottleneck and the figure is a lower bound."
        " `CPU µs/req` is the least noise-sensitive figure on a shared machine.",
        "",
        "Bounds behind the targets and the profiled hot spots: `bench/results/analysis.md`;"
        " scale checks (`--scale`): `bench/results/scale.md`; cluster takeover: `python -m bench.cluster_latency`.",
        "",
    ]
    return "\n".join(out)
