"""README "Several agents: registry and orchestrator": examples/registry_demo.sh
runs as pasted (on free ports here): the orchestrator delegates the SQL-injection
diff and the S608 finding comes back; the explain agent outlines source; the
stopped code-review agent turns unhealthy and is skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]


def test_readme_runs_the_demo() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Several agents: registry and orchestrator") :]
    assert "bash examples/registry_demo.sh" in section.split("\n## ", 1)[0]


@pytest.mark.slow
def test_demo_script() -> None:
    names = ("REGISTRY_GRPC", "REGISTRY_HTTP", "REVIEW", "EXPLAIN", "ORCHESTRATOR")
    env = {**os.environ, **{f"PORT_{n}": str(free_port()) for n in names}}
    env["A2A_GRPC"] = str(Path(sys.executable).parent / "a2a-grpc")
    env["COLUMNS"] = "200"
    done = subprocess.run(
        ["bash", "examples/registry_demo.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    first, rest = out.split("== some Python source", 1)
    assert "COMPLETED" in first and "S608" in first and "app/users.py" in first
    assert "WordCountAgent(AgentExecutor)" in rest and "my_agent.py" in rest
    stopped = rest.split("== stop the code-review agent", 1)[1]
    assert "unhealthy" in stopped
    assert "no healthy agent in the registry offers skill 'review-diff'" in stopped
    assert "(exit status 3)" in stopped
