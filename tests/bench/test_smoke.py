"""Smoke test of the benchmark harness (issue 6): it runs, checks answers and reports.

Runs ``python -m bench.run`` for about a second against a2a-grpc's server (in-memory
store) on one cell — gRPC SendMessage — and checks the JSON and Markdown it writes.
No figure is asserted beyond "requests were served and none failed": performance is
read from the table, never timed in tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.loadgen import CheckError, _json_stream_echoes, _json_task_echoes

REPO = Path(__file__).resolve().parents[2]


def test_harness_runs_one_cell_against_our_server(tmp_path: Path) -> None:
    out, js = tmp_path / "r.md", tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "--servers=ours-memory",
            "--bindings=grpc",
            "--methods=SendMessage",
            "--concurrency=4",
            "--warmup=0.2",
            "--window=0.3",
            "--windows=3",
            "--no-pin",
            f"--out={out}",
            f"--json={js}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(js.read_text())
    [cell] = data["cells"]
    assert (cell["server"], cell["binding"], cell["method"], cell["concurrency"]) == (
        "ours-memory",
        "grpc",
        "SendMessage",
        4,
    )
    assert cell["errors"] == 0, cell["error_samples"]
    assert cell["requests"] > 0 and cell["windows"] == 3
    assert cell["rps"] > 0 and 0 < cell["p50_ms"] <= cell["p99_ms"]
    assert cell["rss_mb"] > 0 and cell["cpu_us_per_req"] > 0
    report = out.read_text()
    assert "| ours-memory | grpc | SendMessage | 4 |" in report
    assert data["machine"]["nproc"] >= 1


def test_checks_reject_wrong_answers() -> None:
    task = {
        "id": "t",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"parts": [{"text": "hi"}]}],
    }
    assert _json_task_echoes(task, "hi") == "t"
    with pytest.raises(CheckError):
        _json_task_echoes(task, "other text")
    with pytest.raises(CheckError):
        _json_task_echoes({**task, "status": {"state": "TASK_STATE_WORKING"}}, "hi")
    events = [
        {"task": {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}},
        {"artifactUpdate": {"taskId": "t", "artifact": {"parts": [{"text": "hi"}]}}},
        {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}},
    ]
    assert _json_stream_echoes(events, "hi") == "t"
    with pytest.raises(CheckError):
        _json_stream_echoes(events[:2], "hi")  # never reached COMPLETED
    with pytest.raises(CheckError):
        _json_stream_echoes([], "hi")
