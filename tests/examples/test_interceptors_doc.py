"""docs/interceptors.md's example runs as written and prints what the page says
it prints: a server with two interceptors of its own, called over gRPC and
HTTP+JSON on ephemeral 127.0.0.1 ports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "interceptors.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", PAGE.read_text(), flags=re.M | re.S)


def test_the_example_prints_what_the_page_says() -> None:
    example = next(b for b in _blocks("python") if "async def main" in b)
    printed = _blocks("")[-1]
    result = subprocess.run(
        [sys.executable, "-c", example], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed
