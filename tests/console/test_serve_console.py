"""``a2a-grpc serve --console``: the server starts the web console for itself
(its own store for dead letters, its own ``/metrics``); behind ``--auth`` the
console forwards each caller's credentials and leaves the store out."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from a2a_grpc.auth._apikeys import digest, new_secret

HEADERS = {"X-A2A-Console": "1"}
pytestmark = pytest.mark.slow  # a serve process per test
PAGE = Path(__file__).resolve().parents[2] / "a2a_grpc" / "console" / "static" / "index.html"


@asynccontextmanager
async def serve(*extra: str) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc.cli", "serve", "--agent", "echo", "--store", "memory",
        "--grpc-port", "0", "--http-port", "0", "--console", "--console-port", "0", *extra,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        seen = []
        while True:
            line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
            seen.append(line)
            assert line, "".join(seen)
            if line.strip().startswith("console "):
                yield line.split()[-1]
                break
    finally:
        proc.terminate()
        await proc.wait()


@pytest.fixture(autouse=True)
def built_page() -> None:
    if not PAGE.is_file():
        message = "the console's page is not built (make install)"
        if os.environ.get("CI") == "true":  # .ci/run builds it: a skip would hide a broken build
            pytest.fail(message)
        pytest.skip(message)


async def test_serve_console_is_the_console_of_the_server() -> None:
    async with serve() as base, aiohttp.ClientSession(headers=HEADERS) as s:
        async with s.get(base + "api/info") as r:
            info = await r.json()
        assert info["panels"] == {"deadLetters": True, "registry": False, "metrics": True}
        async with s.get(base + "api/card") as r:
            assert (await r.json())["card"]["name"] == "Echo Agent"
        async with s.get(base + "api/dead-letters") as r:
            assert await r.json() == {"deadLetters": []}
        async with s.get(base) as r:
            assert r.status == 200 and "./assets/" in await r.text()


async def test_serve_console_behind_auth_forwards_the_callers_key(tmp_path: Path) -> None:
    key_id, secret = new_secret()
    config = tmp_path / "auth.toml"
    config.write_text(
        '[schemes.apiKey]\ntype = "apiKey"\nheader = "X-API-Key"\n'
        f'[[schemes.apiKey.keys]]\nid = "{key_id}"\nsubject = "alice"\nhash = "{digest(secret)}"\n'
    )
    async with serve("--auth", str(config)) as base, aiohttp.ClientSession(headers=HEADERS) as s:
        async with s.get(base + "api/tasks") as r:
            assert r.status == 401
        async with s.get(base + "api/tasks", headers={"X-API-Key": secret}) as r:
            assert r.status == 200 and (await r.json())["tasks"] == []
        async with s.get(base + "api/info") as r:
            info = await r.json()
        assert info["auth"] == "forwarded" and info["panels"]["deadLetters"] is False
