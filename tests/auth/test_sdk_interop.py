"""The official ``a2a-sdk`` client interoperates with an authenticated server:
it reads our card's schemes and sends the API key where they say, on all three
bindings; without the key it is refused."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.auth.conftest import AuthServer
from tests.auth.wire import BINDINGS

pytestmark = [pytest.mark.asyncio(loop_scope="package"), pytest.mark.interop]
SCRIPT = Path(__file__).with_name("sdk_auth_client.py")


async def run_sdk(*args: str) -> dict[str, dict]:
    """Runs the SDK driver without blocking the loop the server runs on."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return {r["step"]: r for r in map(json.loads, out.decode().splitlines())}


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_sdk_client_sends_the_key_the_card_asks_for(auth_server: AuthServer, binding):
    steps = await run_sdk(auth_server.wire.http, binding, auth_server.secrets["erin"])
    assert steps["card"]["value"] == ["apiKey", "corp"]
    assert not steps["anonymous"]["ok"]
    # gRPC: our status message; HTTP: the SDK reports the 401 itself.
    refusal = steps["anonymous"]["error"]["message"]
    assert ("authentication required" if binding == "grpc" else "401") in refusal, refusal
    assert steps["send"]["ok"], steps["send"]
    assert steps["send"]["value"]["state"] == "TASK_STATE_COMPLETED"
    assert steps["get"]["value"]["state"] == "TASK_STATE_COMPLETED"
    assert steps["send"]["value"]["id"] in steps["list"]["value"]
