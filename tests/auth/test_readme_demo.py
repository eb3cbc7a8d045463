"""The README's authentication demo works as pasted: its command block, run by
bash from the repository root (``a2a-grpc`` from this virtualenv on PATH, free
ports instead of 8090/50090, a temporary directory instead of /tmp), prints
what the README shows (ids and times normalised as for the CLI walkthrough)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.test_readme_cli import README, REPO, matches, normalise, section

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_readme_auth_demo_prints_what_the_readme_shows(tmp_path: Path) -> None:
    text = section(README, "## Authentication", "## Performance")
    ((commands, shown),) = re.findall(r"```sh\n(.*?)```\n\n```\n(.*?)```", text, re.S)
    http, grpc_port = free_port(), free_port()
    script = (
        commands.replace("8090", str(http)).replace("50090", str(grpc_port)).replace("/tmp/", f"{tmp_path}/")
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "COLUMNS": "100"}
    env.pop("A2A_GRPC_API_KEY", None)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=90,
        check=False,
    )
    printed = done.stdout.replace(str(http), "8090").replace(str(grpc_port), "50090")
    assert "Traceback" not in printed, printed
    assert matches(normalise(shown), normalise(printed)), (
        f"README shows:\n{shown}\n--- now prints:\n{printed}"
    )
