"""ruff as the review's subprocess: its JSON report, and its failure modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a_grpc.agents._review.ruff_runner import RuffError, run_ruff


async def test_report_lists_diagnostics_of_the_selected_families(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('import os\nq = f"SELECT * FROM t WHERE id = {os.getpid()}"\n')
    report = await run_ruff([str(source)], ["S"])
    assert [(d["code"], d["location"]["row"]) for d in report] == [("S608", 2)]
    assert await run_ruff([str(source)], ["PERF"]) == []


async def test_timeout_kills_ruff(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("x = 1\n")
    with pytest.raises(RuffError, match="did not finish"):
        await run_ruff([str(source)], ["E"], timeout=0.0001)


async def test_bad_target_version_is_a_ruff_error(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("x = 1\n")
    with pytest.raises(RuffError, match="exited with status 2"):
        await run_ruff([str(source)], ["E"], target_version="py99")
