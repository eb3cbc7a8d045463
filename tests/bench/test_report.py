"""The benchmark report of issue 17: durable/in-memory ratios, the cluster section and
the target lines, computed from a fixed small results JSON (``--render``), and the one
clear line when PostgreSQL is not reachable. No timing: the figures are made up so
that each target lands on a known side of its bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import pg
from bench.run import main
from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]


def _cell(server: str, binding: str, method: str, cpu_us: float, rps: float = 1000.0) -> dict[str, Any]:
    family, _, store = server.partition("-")
    db_cpu = {"ours-postgres": 100, "sdk-postgres": 1000}.get(server)  # PostgreSQL's backends
    return {
        **({"db_cpu_us_per_req": db_cpu} if db_cpu else {}),
        "server": server,
        "family": "ceiling" if family == "bare" else family,
        "store": store,
        "binding": binding,
        "method": method,
        "concurrency": 16,
        "rps": rps,
        "p50_ms": 1.0,
        "p99_ms": 2.0,
        "cpu_pct": 90.0,
        "cpu_us_per_req": cpu_us,
        "rss_mb": 80.0,
        "rss_start_mb": 70.0,
        "tasks_stored": 1000,
        "gen_cpu_pct": 50.0,
        "requests": 3000,
        "errors": 0,
        "windows": 3,
        "error_samples": [],
    }


# ours: memory 200 µs, SQLite 250 (1.25×: holds ≤ 1.3), PostgreSQL 400 (2.00×: misses ≤ 1.6;
# 2.50× with its backends' 100 µs). SDK: PostgreSQL 3000 over memory 1000 (4.00× with the backends' 1000).
# SDK / ours: SQLite 3000/250 = 12×, PostgreSQL 3000/400 = 7.5× (the worst reachable), REST memory 2400/200 = 12×.
# gRPC unary: bare 150 / ours 200 = 0.75 on SendMessage, 100/160 = 0.625 on GetTask (the worst).
CELLS = [
    _cell("ours-memory", "grpc", "SendMessage", 200),
    _cell("ours-sqlite", "grpc", "SendMessage", 250),
    _cell("ours-postgres", "grpc", "SendMessage", 400),
    _cell("sdk-memory", "grpc", "SendMessage", 1000),
    _cell("sdk-sqlite", "grpc", "SendMessage", 3000),
    _cell("sdk-postgres", "grpc", "SendMessage", 3000),
    _cell("bare-grpc", "grpc", "SendMessage", 150),
    _cell("ours-memory", "grpc", "GetTask", 160),
    _cell("bare-grpc", "grpc", "GetTask", 100),
    _cell("ours-memory", "rest", "SendMessage", 200),
    _cell("sdk-memory", "rest", "SendMessage", 2400),
    # GetTask: SDK 300 / bare 100 = 3×, so no server reaches 10× there (ours: 1.2×)
    _cell("ours-memory", "rest", "GetTask", 250),
    _cell("sdk-memory", "rest", "GetTask", 300),
    _cell("bare-aiohttp", "rest", "GetTask", 100),
]


def _results(cluster: dict[str, Any] | None) -> dict[str, Any]:
    machine = {"date": "2026-12-01 12:00 UTC", "nproc": 2, "cpu": "test", "python": "3.11", "kernel": "6"}
    settings = {"warmup": 1, "window": 2, "windows": 3, "slow_windows": 2, "text_size": 100, "label": ""}
    return {
        "machine": {**machine, "loadavg": "0 0 0"},
        "settings": settings,
        "notes": [],
        "cells": CELLS,
        "cluster": cluster,
    }


CLUSTER = {
    "events": 600,
    "cross_p50_ms": 4.5,
    "cross_p99_ms": 12.25,
    "local_p50_ms": 3.0,
    "local_p99_ms": 6.0,
    "cells": [{**_cell("ours-cluster-pg", "grpc", "SendMessage", 900, rps=400), "store": "postgres"}],
    "checked": 128,
    "check_errors": 0,
    "notes": [],
}


def _render(tmp_path: Path, cluster: dict[str, Any] | None) -> tuple[int, str]:
    src, out = tmp_path / "in.json", tmp_path / "out.md"
    src.write_text(json.dumps(_results(cluster)))
    status = main(["--render", str(src), "--out", str(out), "--json", str(tmp_path / "out.json")])
    return status, out.read_text()


def test_targets_are_read_off_the_figures(tmp_path: Path) -> None:
    status, report = _render(tmp_path, CLUSTER)
    assert status == 0
    targets = report.split("## Targets", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in targets.splitlines() if line.startswith("- ")]
    assert lines == [
        "- **met** — SQLite SendMessage CPU ≤ 1.3× in-memory (ours): worst 1.25× (grpc SendMessage c=16);"
        " 1 of 1 cells hold",
        "- **MISSED** — PostgreSQL SendMessage CPU ≤ 1.6× in-memory (ours): worst 2.00× (grpc SendMessage c=16);"
        " 0 of 1 cells hold",
        "- **MISSED** — ours/SDK ≥ 10× (CPU per request) on every durable cell and every in-memory HTTP cell:"
        " worst 1.20× (rest GetTask c=16); 2 of 4 cells hold",
        "- **MISSED** — ours/SDK ≥ 10× on the cells of that target that the bare transport leaves reachable"
        " (SDK CPU ≥ 10× the ceiling's): worst 7.50× (grpc SendMessage c=16); 2 of 3 cells hold;"
        " out of any server's reach: memory rest GetTask c=16",
        "- **MISSED** — gRPC unary ≥ 0.7 of the bare grpc.aio ceiling (ceiling CPU / ours CPU, in-memory):"
        " worst 0.62× (grpc GetTask c=16); 1 of 2 cells hold",
        "- **MISSED** — cross-replica event p99 ≤ 10 ms: p99 12.25 ms (p50 4.50 ms)",
    ]


def test_durable_ratios_and_cluster_section(tmp_path: Path) -> None:
    _, report = _render(tmp_path, CLUSTER)
    assert "| grpc | SendMessage | 16 | 1.25× | 2.00× | 2.50× | 3.00× | 3.00× | 4.00× |" in report
    assert "| r1 → subscriber on r2 | 600 | 4.50 | 12.25 |" in report
    cluster = report.split("## Cluster", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ")[0:5] for line in cluster.splitlines() if line.startswith("| ours-")]
    assert rows == [  # the single replica without --cluster for reference, then the two
        ["| ours-postgres", "grpc", "SendMessage", "16", "1,000"],
        ["| ours-cluster-pg", "grpc", "SendMessage", "16", "400"],
    ]
    assert "not a scaling claim" in report and "128 read, 0 wrong or missing" in report
    # every PostgreSQL column of the summaries is there
    assert "| ours pg | sdk mem | sdk sqlite | sdk pg |" in report


def test_without_a_cluster_section_its_target_is_not_measured(tmp_path: Path) -> None:
    _, report = _render(tmp_path, None)
    assert "## Cluster" not in report
    assert "- **not measured** — cross-replica event p99 ≤ 10 ms: no cluster section in this run" in report


def test_cluster_errors_fail_the_run(tmp_path: Path) -> None:
    status, _ = _render(tmp_path, {**CLUSTER, "check_errors": 1})
    assert status == 1


def test_unreachable_postgres_is_one_clear_line() -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--servers=ours-postgres", "--no-pin"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "A2A_GRPC_BENCH_POSTGRES_URL": url},
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"PostgreSQL is not reachable at {url}")
    assert "--no-postgres" in proc.stderr
    assert "== ours-postgres" not in proc.stdout  # nothing was started


@pytest.mark.postgres
@pytest.mark.slow
def test_postgres_cells_and_the_cluster_section_run(tmp_path: Path) -> None:
    """One SendMessage cell on ours-postgres and the cluster section, briefly, against
    the real PostgreSQL: no errors, every cross-replica read back, no database left."""
    try:
        asyncio.run(pg.check())
    except pg.PostgresUnavailable as exc:
        pytest.skip(str(exc))
    out, js = tmp_path / "r.md", tmp_path / "r.json"
    argv = ["--servers=ours-postgres,cluster", "--bindings=grpc", "--methods=SendMessage", "--concurrency=4"]
    argv += ["--warmup=0.2", "--window=0.3", "--windows=2", "--cluster-tasks=1", "--no-pin"]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", *argv, f"--out={out}", f"--json={js}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(js.read_text())
    [cell] = data["cells"]
    assert (cell["server"], cell["errors"]) == ("ours-postgres", 0)
    assert cell["requests"] > 0 and cell["db_cpu_us_per_req"] > 0  # its own database's backends were found
    cluster = data["cluster"]
    assert cluster["events"] > 0 and 0 < cluster["cross_p50_ms"] <= cluster["cross_p99_ms"]
    [two] = cluster["cells"]
    assert two["errors"] == 0 and two["requests"] > 0
    assert cluster["checked"] > 0 and cluster["check_errors"] == 0
    used = re.findall(r"\(database (a2a_bench_[0-9a-f]+)\)", proc.stdout)
    assert len(used) == 3, proc.stdout  # ours-postgres, the latency pair, the throughput pair
    assert not set(used) & set(asyncio.run(_bench_databases()))  # all dropped


async def _bench_databases() -> list[str]:
    import asyncpg

    conn = await asyncpg.connect(pg.admin_url())
    try:
        rows = await conn.fetch("SELECT datname FROM pg_database WHERE datname LIKE 'a2a_bench_%'")
    finally:
        await conn.close()
    return [r["datname"] for r in rows]
