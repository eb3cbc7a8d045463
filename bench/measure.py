"""One benchmark cell: closed-loop load on running server(s), sampled into a :class:`Cell`."""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter

from bench.loadgen import TASKS_CREATED, Client, WindowResult, prepare_task_ids, run_load
from bench.pg import backend_cpu
from bench.procs import ServerProc
from bench.report import Cell

__all__ = ["cell_line", "measure_cell"]


async def measure_cell(
    servers: list[ServerProc],
    client: Client,
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
    """Runs one cell through ``client`` against ``servers`` (one, or the replicas the
    client spreads its calls over) and returns its medians; server CPU and RSS are
    summed over ``servers``, named after the first one's spec; the CPU of the
    PostgreSQL backends serving their database is counted apart (``db_cpu_us_per_req``)."""
    task_ids = await prepare_task_ids(client, 64) if method == "GetTask" else None

    databases = sorted({s.database for s in servers if s.database})

    def sample() -> tuple[float, float, float, dict[int, float]]:
        t = os.times()
        db = {pid: cpu for name in databases for pid, cpu in backend_cpu(name).items()}
        return (time.perf_counter(), sum(s.cpu_seconds() for s in servers), t.user + t.system, db)

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
    cpu_pct, cpu_us, gen_pct, db_us = _per_window(ws, bool(databases))
    errors: Counter[str] = sum((w.errors for w in ws), Counter())
    med = statistics.median
    spec = servers[0].spec
    return Cell(
        server=spec.name,
        family=spec.family,
        store=spec.store,
        binding=binding,
        method=method,
        concurrency=concurrency,
        rps=med(w.rps for w in ws),
        p50_ms=1e3 * med(w.percentile(0.50) for w in ws),
        p99_ms=1e3 * med(w.percentile(0.99) for w in ws),
        cpu_pct=med(cpu_pct),
        cpu_us_per_req=med(cpu_us),
        rss_mb=sum(s.rss_mb() for s in servers),
        rss_start_mb=rss_start,
        tasks_stored=TASKS_CREATED[0],
        gen_cpu_pct=med(gen_pct),
        requests=sum(w.ok for w in ws),
        errors=sum(errors.values()),
        windows=len(ws),
        error_samples=[f"{v}× {k}" for k, v in sorted(errors.items(), key=lambda kv: -kv[1])[:3]],
        db_cpu_us_per_req=med(db_us),
    )


def _per_window(
    ws: list[WindowResult], with_db: bool
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Per window: server CPU %, server CPU µs/request, load generator CPU %, and the
    PostgreSQL backends' CPU µs/request (NaN without a database)."""
    cpu_pct, cpu_us, gen_pct, db_us = [], [], [], []
    nan = float("nan")
    for w in ws:
        (t0, c0, g0, d0), (t1, c1, g1, d1) = w.extra
        cpu_pct.append(100 * (c1 - c0) / (t1 - t0))
        gen_pct.append(100 * (g1 - g0) / (t1 - t0))
        cpu_us.append(1e6 * (c1 - c0) / w.ok if w.ok else nan)
        db = sum(cpu - d0.get(pid, 0.0) for pid, cpu in d1.items())  # a backend gone meanwhile is lost
        db_us.append(1e6 * db / w.ok if w.ok and with_db else nan)
    return cpu_pct, cpu_us, gen_pct, db_us


def _db(cell: Cell) -> str:
    x = cell.db_cpu_us_per_req
    return "" if x != x else f" (+ PostgreSQL {x:,.0f})"


def cell_line(cell: Cell) -> str:
    """One cell as the console line a run prints while it goes."""
    line = (
        f"   {cell.server:15} {cell.binding:8} {cell.method:21} c={cell.concurrency:<3} {cell.rps:9,.0f} req/s"
        f"  p50 {cell.p50_ms:7.2f} ms  p99 {cell.p99_ms:7.2f} ms  cpu {cell.cpu_pct:4.0f}%"
        f"  {cell.cpu_us_per_req:7,.0f} µs/req{_db(cell)}  rss {cell.rss_mb:6.1f} MiB  gen {cell.gen_cpu_pct:4.0f}%"
        f"  errors {cell.errors}"
    )
    if cell.errors:
        line += f"\n     errors: {'; '.join(cell.error_samples)}"
    return line
