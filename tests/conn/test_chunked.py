"""A chunked artifact end to end on SQLite (issue 10, item 9): every binding
reads the whole artifact back, and the maximum task size fails the task with
a clear message."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import grpc
import pytest

from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.types import pb, pb_grpc
from bench.chunked import ChunkAgent

MD = (("a2a-version", "1.0"),)
CHUNK = 64 * 1024


async def _start(tmp_path: Path, **handler: int) -> A2AServer:
    cfg = ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.5)
    for key, value in handler.items():
        setattr(cfg.handler, key, value)
    srv = A2AServer(ChunkAgent(), SqlTaskStore(f"sqlite:///{tmp_path}/chunks.db"), cfg)
    await srv.start()
    return srv


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[A2AServer]:
    srv = await _start(tmp_path)
    yield srv
    await srv.stop()


async def _stream(srv: A2AServer, n: int) -> list[pb.StreamResponse]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}") as ch:
        stub = pb_grpc.A2AServiceStub(ch)
        req = pb.SendMessageRequest(
            message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text=f"{n} {CHUNK}")])
        )
        return [ev async for ev in stub.SendStreamingMessage(req, metadata=MD)]


async def test_chunked_artifact_reads_back_whole_on_every_binding(server: A2AServer) -> None:
    events = await _stream(server, 30)
    task_id = events[0].task.id
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        task = await pb_grpc.A2AServiceStub(ch).GetTask(pb.GetTaskRequest(id=task_id), metadata=MD)
    parts = task.artifacts[0].parts
    assert [p.raw[:1] for p in parts] == [bytes([i]) for i in range(30)]
    assert sum(len(p.raw) for p in parts) == 30 * CHUNK
    base = f"http://127.0.0.1:{server.http_port}"
    async with aiohttp.ClientSession(headers={"A2A-Version": "1.0"}) as http:
        async with http.get(f"{base}/tasks/{task_id}") as res:
            rest = await res.json(content_type=None)
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        async with http.post(
            f"{base}/", data=json.dumps(body), headers={"Content-Type": "application/json"}
        ) as res:
            rpc = (await res.json(content_type=None))["result"]
    for got in (rest, rpc):
        assert len(got["artifacts"][0]["parts"]) == 30
        assert got["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_maximum_task_size_fails_the_task_with_a_clear_message(tmp_path: Path) -> None:
    limit = 1024 * 1024
    srv = await _start(tmp_path, max_task_bytes=limit)
    try:
        events = await _stream(srv, 40)  # 40 × 64 KiB = 2.5 MiB
        last = events[-1].status_update.status
        assert last.state == pb.TASK_STATE_FAILED
        text = last.message.parts[0].text
        assert text.startswith("RESOURCE_EXHAUSTED: ") and f"maximum task size of {limit} bytes" in text
        async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}") as ch:
            task = await pb_grpc.A2AServiceStub(ch).GetTask(
                pb.GetTaskRequest(id=events[0].task.id), metadata=MD
            )
        assert task.ByteSize() <= limit
        assert 10 < len(task.artifacts[0].parts) < 16
    finally:
        await srv.stop()


async def test_serve_takes_the_maximum_task_size_from_its_environment_variable() -> None:
    import asyncio
    import os
    import socket
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "A2A_GRPC_MAX_TASK_BYTES": "1048576"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc.cli", "serve", "--agent", "bench.chunked:ChunkAgent", "--store", "memory",
        "--grpc-port", str(port), "--http-port", "0", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:

        class _Srv:
            grpc_port = port

        async with asyncio.timeout(30):
            while True:
                try:
                    events = await _stream(_Srv(), 40)  # type: ignore[arg-type]
                    break
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.2)
        last = events[-1].status_update.status
        assert last.state == pb.TASK_STATE_FAILED
        assert "maximum task size of 1048576 bytes" in last.message.parts[0].text
    finally:
        proc.terminate()
        await proc.wait()
