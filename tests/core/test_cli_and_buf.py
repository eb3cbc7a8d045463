"""The server as users drive it: ``buf curl --reflect`` against a running
server (README), and ``a2a-grpc serve`` stopping gracefully on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.types import SERVICE_NAME
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
HAVE_BUF = shutil.which("npx") is not None and (ROOT / "node_modules" / "@bufbuild" / "buf").is_dir()


async def buf_curl(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "npx",
        "--no-install",
        "buf",
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "--reflect",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.skipif(not HAVE_BUF, reason="npx buf is not installed (npm install)")
@pytest.mark.parametrize("store_kind", ["memory"])
async def test_buf_curl_reflect(server) -> None:
    base = f"http://127.0.0.1:{server.grpc_port}"
    rc, out, err = await buf_curl("--list-methods", base)
    assert rc == 0, err
    assert "lf.a2a.v1.A2AService/SendMessage" in out.split()
    assert len([m for m in out.split() if m.startswith("lf.a2a.v1.A2AService/")]) == 11

    body = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "echo hello"}]}}
    rc, out, err = await buf_curl(
        "-H", "a2a-version: 1.0", "-d", json.dumps(body), f"{base}/lf.a2a.v1.A2AService/SendMessage"
    )
    assert rc == 0, err
    task = json.loads(out)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "hello"

    rc, out, err = await buf_curl(
        "-H",
        "a2a-version: 1.0",
        "-d",
        json.dumps({"id": task["id"]}),
        f"{base}/lf.a2a.v1.A2AService/CancelTask",
    )
    assert rc != 0
    error = json.loads(err)
    assert error["code"] == "failed_precondition"
    assert error["details"][0]["type"] == "google.rpc.ErrorInfo"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_serve_stops_gracefully_on_signal(sig: signal.Signals) -> None:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_grpc.cli",
        "serve",
        "--agent",
        "echo",
        "--grpc-port",
        str(port),
        "--http-port",
        "0",
        "--store",
        "memory",
        "--grace",
        "1",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            resp = await health.Check(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME), wait_for_ready=True, timeout=20
            )
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        proc.send_signal(sig)
        out, _ = await asyncio.wait_for(proc.communicate(), 15)
        assert proc.returncode == 0, out.decode()
        assert "Traceback" not in out.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
