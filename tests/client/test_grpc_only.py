"""The client and CLI against deployments without an HTTP card: ``grpc://``
URLs, ports that do not speak A2A, and the follow-up hints of the CLI."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.types import pb
from tests.client.conftest import base_url, serving
from tests.client.test_cli import cli


@pytest.fixture
async def grpc_only() -> AsyncIterator[A2AServer]:
    async with serving(ServerConfig(grpc_port=0, http_port=None)) as srv:
        yield srv


@pytest.fixture
async def not_a2a() -> AsyncIterator[int]:
    """A gRPC server with health and reflection but no A2A service."""
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    reflection.enable_server_reflection(("grpc.health.v1.Health", reflection.SERVICE_NAME), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield port
    finally:
        await server.stop(0)


async def test_client_connects_by_grpc_url(grpc_only: A2AServer) -> None:
    async with await A2AClient.connect(f"grpc://127.0.0.1:{grpc_only.grpc_port}") as client:
        assert client.binding == "grpc" and client.card is None
        response = await client.send_message("echo hi")
    assert response.task.status.state == pb.TASK_STATE_COMPLETED


async def test_cli_send_and_task_commands_by_grpc_url(grpc_only: A2AServer) -> None:
    url = f"grpc://127.0.0.1:{grpc_only.grpc_port}"
    sent = await cli("send", url, "echo over grpc only")
    assert sent.exit_code == 0, sent.output
    assert "COMPLETED" in sent.stdout and "over grpc only" in sent.stdout
    listed = await cli("task", "list", url)
    assert listed.exit_code == 0 and "1 of 1 tasks" in listed.stdout
    refused = await cli("send", url, "echo x", "--binding", "rest")
    assert refused.exit_code == 1 and "is a gRPC endpoint" in refused.stderr


async def test_card_of_grpc_url_is_one_line(grpc_only: A2AServer) -> None:
    result = await cli("card", f"grpc://127.0.0.1:{grpc_only.grpc_port}")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "serves the public Agent Card over HTTP only" in lines[0]


async def test_http_url_on_the_grpc_port_names_grpc(grpc_only: A2AServer) -> None:
    port = grpc_only.grpc_port
    result = await cli("send", f"http://127.0.0.1:{port}", "echo hi")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"use grpc://127.0.0.1:{port}" in lines[0] and "\\x00" not in lines[0]


async def test_grpc_server_without_a2a(not_a2a: int) -> None:
    with pytest.raises(A2AError) as raised:
        await A2AClient.connect(f"grpc://127.0.0.1:{not_a2a}", connect_timeout=3)
    assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION
    assert "does not serve lf.a2a.v1.A2AService" in raised.value.message
    assert "grpc.health.v1.Health" in raised.value.message
    result = await cli("send", f"grpc://127.0.0.1:{not_a2a}", "hi")
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1


async def test_subscribe_to_a_finished_task_shows_it(server: A2AServer) -> None:
    url = base_url(server)
    async with await A2AClient.connect(url) as client:
        done = (await client.send_message("echo finished")).task
    result = await cli("task", "subscribe", url, done.id)
    assert result.exit_code == 4, result.output
    assert "COMPLETED" in result.stdout and "finished" in result.stdout
    missing = await cli("task", "subscribe", url, "no-such-task")
    assert missing.exit_code == 1 and "TASK_NOT_FOUND" in missing.stderr


async def test_ctrl_c_on_a_stream_says_how_to_follow(server: A2AServer) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_grpc.cli",
        "send",
        base_url(server),
        "slow 30",
        "--stream",
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert b'"task"' in first
        proc.send_signal(signal.SIGINT)
        err = (await asyncio.wait_for(proc.stderr.read(), 20)).decode()
        assert await proc.wait() == 130
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert "Traceback" not in err
    assert f"a2a-grpc task subscribe {base_url(server)} " in err
