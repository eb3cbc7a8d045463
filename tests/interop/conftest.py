"""Fixtures for the interoperability tests.

The official SDKs never run in this process (``a2a-sdk`` registers its own
``lf.a2a.v1`` protos in protobuf's default descriptor pool, which clashes with
ours): they run as subprocesses that talk to 127.0.0.1 sockets only and print
JSON, and the tests assert on what they print.

- ``our_server``: an :class:`~a2a_grpc.server.A2AServer` serving
  :class:`tests.interop.agents.InteropAgent` on ephemeral ports, run in a
  background thread with its own event loop (one per session: every test
  works on tasks of its own contexts), with push notifications delivered to
  its :class:`Webhook` on 127.0.0.1.
- ``review_server``: the same with the built-in code-review agent.
- ``sdk_server``: ``tests/interop/sdk_server.py`` (an ``a2a-sdk`` server) as a
  subprocess; its ports come from the ``READY`` line it prints.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.interop.agents import InteropAgent

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BINDINGS = ("grpc", "jsonrpc", "rest")
SUBPROCESS_TIMEOUT = 60.0


@dataclass(slots=True)
class Webhook:
    """A push notification receiver on 127.0.0.1 (runs on the server's loop):
    records ``(path, headers, JSON body)`` of every POST and answers 200."""

    hits: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    base_url: str = ""
    runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"

    async def _handle(self, request: web.Request) -> web.Response:
        self.hits.append((request.path, dict(request.headers), await request.json()))
        return web.Response(text="ok")

    def wait_for(self, path: str, done: Any, timeout: float = 15.0) -> list[tuple[dict[str, str], Any]]:
        """The hits on ``path`` once ``done(bodies)`` is true (polls; fails after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while True:
            hits = [(h, b) for p, h, b in list(self.hits) if p == path]
            if done([b for _, b in hits]):
                return hits
            if time.monotonic() > deadline:
                pytest.fail(f"webhook {path}: condition not met in {timeout} s; got {hits}")
            time.sleep(0.05)


@dataclass(slots=True)
class LiveServer:
    """Where a server listens: ``base_url`` serves the card, JSON-RPC and REST."""

    base_url: str
    grpc_target: str
    server: A2AServer | None = None
    loop: asyncio.AbstractEventLoop | None = None
    webhook: Webhook | None = None

    def call(self, coro: Any, timeout: float = 10.0) -> Any:
        """Runs ``coro`` on the server's loop (e.g. to read its store)."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


class _ServerThread(threading.Thread):
    def __init__(self, agent: Any) -> None:
        super().__init__(name="interop-a2a-server", daemon=True)
        self.agent = agent
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.server: A2AServer | None = None
        self.webhook = Webhook()
        self.error: BaseException | None = None

    def run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            store = InMemoryTaskStore()
            push = PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1, timeout_seconds=5)
            self.server = A2AServer(
                self.agent, store, ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.5), push=push
            )
            self.loop.run_until_complete(self.server.start())
            self.loop.run_until_complete(self.webhook.start())
        except BaseException as exc:
            self.error = exc
            self.ready.set()
            return
        self.ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.server.stop(0.5))
        if self.webhook.runner is not None:
            self.loop.run_until_complete(self.webhook.runner.cleanup())
        self.loop.close()


def _serve(agent: Any) -> Iterator[LiveServer]:
    thread = _ServerThread(agent)
    thread.start()
    assert thread.ready.wait(15), "A2AServer did not start within 15 s"
    if thread.error is not None:
        raise thread.error
    srv = thread.server
    assert srv is not None
    yield LiveServer(
        base_url=f"http://127.0.0.1:{srv.http_port}",
        grpc_target=f"127.0.0.1:{srv.grpc_port}",
        server=srv,
        loop=thread.loop,
        webhook=thread.webhook,
    )
    thread.loop.call_soon_threadsafe(thread.loop.stop)
    thread.join(10)


@pytest.fixture(scope="session")
def our_server() -> Iterator[LiveServer]:
    """Our server with the interop agent (echo, ``slow``, ``ask``)."""
    yield from _serve(InteropAgent())


@pytest.fixture(scope="session")
def review_server() -> Iterator[LiveServer]:
    """Our server with the built-in ``code-review`` agent (the default of ``a2a-grpc serve``)."""
    from a2a_grpc.agents._code_review import CodeReviewAgent

    yield from _serve(CodeReviewAgent())


def run_json_lines(argv: list[str], *, timeout: float = SUBPROCESS_TIMEOUT) -> dict[str, dict[str, Any]]:
    """Runs a driver script and returns its JSON lines keyed by ``step``.

    Fails the test with the script's stderr when it exits non-zero or prints
    something that is not a JSON object."""
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=_child_env(), check=False
    )
    steps: dict[str, dict[str, Any]] = {}
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            pytest.fail(f"{argv[1]} printed a non-JSON line: {line!r}\nstderr:\n{proc.stderr}")
        steps[record["step"]] = record
    if proc.returncode != 0:
        pytest.fail(
            f"{' '.join(argv)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return steps


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the SDK process must not see our packages first
    return env


def sample_parts() -> list[Any]:
    """One Part of each kind, as ``sdk_client.py`` and ``js/client.mjs`` send them in
    their ``parts`` step: text with metadata, raw bytes whose base64 has ``+``
    and ``/``, a JSON data value, a URL; media types and file names."""
    text = pb.Part(text="héllo ✓", media_type="text/plain")
    text.metadata.update({"k": "v", "n": 1.5})
    data = pb.Part(media_type="application/json")
    data.data.struct_value.update({"list": [1, 2.5, "x", None, True], "nested": {"a": "b"}})
    raw = pb.Part(raw=bytes([0xFB, 0xFF, 0xFE, 0x00, 0x3E, 0x3F]), media_type="application/octet-stream")
    raw.filename = "b.bin"
    url = pb.Part(url="https://example.com/f.txt", media_type="text/plain", filename="f.txt")
    return [text, raw, data, url]


# ------------------------------------------------------------ a2a-sdk server
@dataclass(slots=True)
class SdkServer:
    base_url: str
    grpc_target: str
    process: subprocess.Popen[str]


@pytest.fixture(scope="session")
def sdk_server() -> Iterator[SdkServer]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "sdk_server.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=_child_env(),
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)  # READY or EOF, at most 30 s
        line = proc.stdout.readline() if ready else ""
        match = re.match(r"READY grpc=(\d+) http=(\d+)", line)
        if not match:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"sdk_server.py did not start: {line!r}\n{err}")
        grpc_port, http_port = match.groups()
        yield SdkServer(f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}", proc)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


# ------------------------------------------------------------------- node
def node_binary() -> str | None:
    """The machine's ``node`` when it and ``@a2a-js/sdk`` (npm install) are present."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "@a2a-js" / "sdk" / "package.json").is_file():
        return None
    return node


# --------------------------------------------------------- a2a-sdk 0.3.x venv
SDK03_VENV = ROOT / ".venv-sdk03"
SDK03_REQUIREMENT = "a2a-sdk[grpc]==0.3.*"  # the gRPC transport too


@pytest.fixture(scope="session")
def sdk03_python() -> str:
    """The python of a virtualenv with the official ``a2a-sdk`` 0.3.x client
    and its gRPC transport (``.venv-sdk03`` in the repository, made from PyPI
    on first use)."""
    python = SDK03_VENV / "bin" / "python"
    probe = [str(python), "-c", "import a2a.client, a2a.types, a2a.grpc.a2a_pb2_grpc, grpc"]
    if python.exists() and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return str(python)
    subprocess.run([sys.executable, "-m", "venv", str(SDK03_VENV)], check=True, timeout=120)
    install = [str(python), "-m", "pip", "install", "-q", SDK03_REQUIREMENT]
    proc = subprocess.run(install, capture_output=True, text=True, check=False, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"pip install {SDK03_REQUIREMENT} failed:\n{proc.stderr[-3000:]}")
    return str(python)
