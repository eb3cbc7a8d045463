"""The documentation's generated parts stay current: the error table in ``docs/errors.md`` is
exactly what ``scripts/error_table.py`` prints from ``a2a_grpc.errors.ErrorCode``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from a2a_grpc.errors import ErrorCode

REPO = Path(__file__).resolve().parents[2]
START, END = "<!-- error-table:start -->\n", "<!-- error-table:end -->"


def script_output() -> str:
    return subprocess.run(
        [sys.executable, "scripts/error_table.py"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout


def test_error_table_script_lists_every_error_code() -> None:
    rows = script_output().splitlines()[2:]
    assert len(rows) == len(ErrorCode)
    for row, code in zip(rows, ErrorCode, strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == f"`{code.reason}`"
        assert cells[1] == f"`{code.grpc_code.name}`"
        assert cells[2].startswith(f"{code.http_status} ")
        assert cells[3] == str(code.jsonrpc_code)


def test_docs_error_table_is_the_script_output() -> None:
    doc = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    assert START in doc and END in doc, "docs/errors.md lost its error-table markers"
    table = doc.split(START, 1)[1].split(END, 1)[0]
    assert table == script_output(), "docs/errors.md is stale: paste the output of scripts/error_table.py"
