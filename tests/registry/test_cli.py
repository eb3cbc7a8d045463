"""``a2a-grpc registry add|find|list|watch|remove`` as processes against a
real registry."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.registry._server import RegistryServer
from tests.registry.conftest import card, skill, url_of

A2A = str(Path(sys.executable).parent / "a2a-grpc")


async def _run(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        A2A, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.slow
async def test_registry_commands(registry: RegistryServer, start_agent: Any):
    srv = await start_agent(card("Cli Agent", skill("cli-skill", "shell")))
    target = f"grpc://{registry.grpc_target}"
    code, out, _ = await _run("registry", "add", url_of(srv), "--registry", target, "--json")
    assert code == 0
    agent = json.loads(out)
    assert agent["card"]["name"] == "Cli Agent"
    watch = await asyncio.create_subprocess_exec(
        A2A, "registry", "watch", "--registry", target, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert watch.stdout is not None
        change = json.loads(await asyncio.wait_for(watch.stdout.readline(), 60))
        assert change["change"] == "CHANGE_TYPE_EXISTING" and change["agent"]["agentId"] == agent["agentId"]
    finally:
        watch.terminate()
        await watch.wait()
    code, out, _ = await _run("registry", "find", "--skill", "other", "--registry", target, "--json")
    assert code == 0 and out == ""
    code, out, _ = await _run("registry", "list", "--registry", target)
    assert code == 0 and "Cli Agent" in out and "healthy" in out
    code, out, _ = await _run("registry", "remove", agent["agentId"], "--registry", target)
    assert code == 0 and agent["agentId"] in out
    code, _, err = await _run("registry", "remove", agent["agentId"], "--registry", target)
    assert code == 1 and "AGENT_NOT_FOUND" in err
    code, _, err = await _run("registry", "add", "http://127.0.0.1:1", "--registry", target)
    assert code == 1 and "UNAVAILABLE" in err
