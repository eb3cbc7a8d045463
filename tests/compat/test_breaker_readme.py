"""The README's commands for the older dialects, run as written (curl, python3) against a real
server with the code-review agent on an ephemeral 127.0.0.1 port."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.agents.code_review import CodeReviewAgent
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store.memory import InMemoryTaskStore

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Talking to older A2A clients and agents") :]


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    srv = A2AServer(CodeReviewAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)


def sh_block(containing: str) -> str:
    return next(b for b in re.findall(r"```sh\n(.*?)```", SECTION, re.S) if containing in b)


async def run(script: str, server: A2AServer) -> str:
    script = script.replace("http://127.0.0.1:8080", f"http://127.0.0.1:{server.http_port}")
    proc = await asyncio.create_subprocess_exec(
        "bash", "-euo", "pipefail", "-c", script, cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, out
    return out.decode()


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's commands use curl")
async def test_the_old_shape_commands_find_s608(server: A2AServer) -> None:
    out = await run(sh_block("/tasks/send"), server)
    first, rest = out.split("\n", 1)
    assert json.loads(first)["status"]["state"] == "input-required"
    task = json.loads(rest)
    assert task["id"] == "my-task-1" and task["status"]["state"] == "completed" and "sessionId" in task
    findings = task["artifacts"][0]["parts"][0]["data"]["findings"]
    assert [f["rule"] for f in findings] == ["S608"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's commands use curl")
async def test_the_v03_json_rpc_and_rest_commands_work(server: A2AServer) -> None:
    out = await run(sh_block('"method": "message/send"'), server)
    assert json.loads(out)["result"]["kind"] == "task"
    rest = sh_block("/v1/message:send").split("npx buf curl")[0].rstrip().removesuffix("\\")
    out = await run(rest, server)
    assert json.loads(out)["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
