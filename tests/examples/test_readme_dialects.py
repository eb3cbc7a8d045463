"""The README's section "Talking to older A2A clients and agents" stays true:
each of its ``sh`` blocks, run by bash from the repository root against a real
server (the code-review agent, memory store, ephemeral 127.0.0.1 ports in
place of 8080 and 50051), prints what the plain block after it shows (ids and
times normalised as for the CLI walkthrough; a ``…`` line stands for any lines).

Every command block of the section must be followed by its output, so a
command added for another dialect is checked as soon as it is written.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.agents._code_review import CodeReviewAgent
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.examples.test_readme_cli import README, REPO, matches, normalise

SECTION = "## Talking to older A2A clients and agents"


def blocks() -> list[tuple[str, str]]:
    """(commands, shown output) of each ``sh`` block of the section."""
    text = _section_text()
    commands = re.findall(r"```sh\n(.*?)```", text, re.S)
    pairs = re.findall(r"```sh\n(.*?)```\n\n```\n(.*?)```", text, re.S)
    assert len(pairs) == len(commands), "every command block of the section is followed by its output"
    return pairs


def _section_text() -> str:
    start = README.index(SECTION)
    end = README.find("\n## ", start + len(SECTION))
    return README[start : end if end != -1 else len(README)]


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    srv = A2AServer(CodeReviewAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)


async def run(script: str, env: dict[str, str]) -> str:
    proc = await asyncio.create_subprocess_exec(
        "bash",
        "-eo",
        "pipefail",
        "-c",
        script,
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def test_the_dialect_commands_print_what_the_readme_shows(server: A2AServer) -> None:
    pairs = blocks()
    assert pairs, f"no commands under {SECTION!r}"
    http, grpc = str(server.http_port), str(server.grpc_port)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "COLUMNS": "100"}
    for commands, shown in pairs:
        script = commands.replace("127.0.0.1:8080", f"127.0.0.1:{http}").replace(
            "127.0.0.1:50051", f"127.0.0.1:{grpc}"
        )
        printed = (await run(script, env)).replace(http, "8080").replace(grpc, "50051")
        assert "Traceback" not in printed, printed
        assert matches(normalise(shown), normalise(printed)), (
            f"README output is stale for:\n{commands}\n--- README shows:\n{shown}\n--- now prints:\n{printed}"
        )
