"""The README's "write your own agent" example stays true: ``examples.my_agent:WordCountAgent``
loads by the name the README gives ``--agent``, serves over gRPC, JSON-RPC and HTTP+JSON
from a real A2AServer, streams a WORKING status and returns the ``word-count`` artifact; and
the README's serve command (``a2a-grpc serve --agent ...``) starts it."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from a2a_grpc.agents import load_agent
from a2a_grpc.client import A2AClient
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb

REPO = Path(__file__).resolve().parents[2]
AGENT = "examples.my_agent:WordCountAgent"
TEXT = "the quick brown fox\njumps over the lazy dog"


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    srv = A2AServer(load_agent(AGENT), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)


def counts(artifact: pb.Artifact) -> dict[str, object]:
    assert artifact.name == "word-count"
    return json_format.MessageToDict(artifact.parts[0].data)


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc", "rest"])
async def test_word_count_artifact(server: A2AServer, binding: str) -> None:
    url = f"http://127.0.0.1:{server.http_port}"
    async with await A2AClient.connect(url, bindings=[binding], timeout=10) as client:
        task = (await client.send_message(TEXT)).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        assert task.status.message.parts[0].text == "9 words"
        assert counts(task.artifacts[0]) == {"words": 9, "lines": 2}


async def test_word_count_streams_status_then_artifact(server: A2AServer) -> None:
    url = f"http://127.0.0.1:{server.http_port}"
    async with await A2AClient.connect(url, timeout=10) as client:
        assert client.card is not None and client.card.name == "Word Count Agent"
        events = [e async for e in client.send_streaming_message(TEXT)]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"]
    assert events[1].status_update.status.state == pb.TASK_STATE_WORKING
    assert events[1].status_update.status.message.parts[0].text == f"Counting {len(TEXT)} characters"
    assert counts(events[2].artifact_update.artifact) == {"words": 9, "lines": 2}
    assert events[3].status_update.status.state == pb.TASK_STATE_COMPLETED


async def test_readme_serve_command_serves_the_agent() -> None:
    """``a2a-grpc serve --agent examples.my_agent:WordCountAgent`` from the repo root, no PYTHONPATH."""
    exe = Path(sys.executable).with_name("a2a-grpc")
    args = ["serve", "--agent", AGENT, "--store", "memory", "--grpc-port", "0", "--http-port", "0"]
    proc = await asyncio.create_subprocess_exec(
        exe,
        *args,
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        assert proc.stdout is not None
        url: str | None = None
        lines: list[str] = []
        while url is None and len(lines) < 20:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            if not line:
                break
            lines.append(line)
            if m := re.match(r"\s+HTTP\+JSON\s+(http://\S+)", line):
                url = m.group(1)
        assert url, "".join(lines)
        async with await A2AClient.connect(url, bindings=["grpc"], timeout=10) as client:
            task = (await client.send_message("hello A2A world")).task
        assert counts(task.artifacts[0]) == {"words": 3, "lines": 1}
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
