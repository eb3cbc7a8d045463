"""The official Python SDK client drives the orchestrator: a registry, the
code-review agent and the orchestrator run on one loop in a thread; the SDK
process (``sdk_client.py --review``) sends the SQL-injection diff to the
orchestrator over each binding, which delegates it to the code-review agent,
and the S608 finding comes back. A message that names no skill is refused
INVALID_PARAMS (the code-review agent itself would ask for the diff)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.interop.conftest import BINDINGS, HERE, ROOT, run_json_lines
from tests.interop.test_sdk_client import ok, parse
from tests.interop.test_sdk_review import assert_sql_injection_found

pytestmark = pytest.mark.interop

DIFF = ROOT / "examples" / "diffs" / "sql_injection.diff"


class _World(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="interop-orchestrator", daemon=True)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.url = ""
        self.stopped: list[Any] = []

    async def _start(self) -> None:
        from a2a_grpc.agents._code_review import CodeReviewAgent
        from a2a_grpc.agents._orchestrator import OrchestratorAgent
        from a2a_grpc.registry._client import RegistryClient
        from a2a_grpc.registry._server import RegistryConfig, RegistryServer
        from a2a_grpc.server import A2AServer, ServerConfig
        from a2a_grpc.store._memory import InMemoryTaskStore

        registry = RegistryServer(RegistryConfig(grpc_port=0, http_port=0, allow_private=True))
        await registry.start()
        review = A2AServer(CodeReviewAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
        await review.start()
        async with RegistryClient(f"grpc://{registry.grpc_target}") as client:
            await client.register(f"http://127.0.0.1:{review.http_port}")
        orchestrator = A2AServer(
            OrchestratorAgent(f"grpc://{registry.grpc_target}"),
            InMemoryTaskStore(),
            ServerConfig(grpc_port=0, http_port=0),
        )
        await orchestrator.start()
        self.stopped = [orchestrator, review, registry]
        self.url = f"http://127.0.0.1:{orchestrator.http_port}"

    def run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self.ready.set()
        self.loop.run_forever()
        for srv in self.stopped:
            self.loop.run_until_complete(srv.stop())
        self.loop.close()


@pytest.fixture(scope="module")
def orchestrator_url() -> Iterator[str]:
    world = _World()
    world.start()
    assert world.ready.wait(30), "the orchestrator did not start within 30 s"
    yield world.url
    world.loop.call_soon_threadsafe(world.loop.stop)
    world.join(10)


@pytest.mark.parametrize("binding", BINDINGS)
def test_sdk_client_gets_the_delegated_finding(orchestrator_url: str, binding: str) -> None:
    argv = [sys.executable, str(HERE / "sdk_client.py"), orchestrator_url, binding, "--review", str(DIFF)]
    steps = run_json_lines(argv, timeout=120)
    card = ok(steps, "review_card")
    assert card["name"] == "Orchestrator"
    from a2a_grpc.types import pb

    for name in ("review_text", "review_file"):
        task = parse(ok(steps, name)[0], pb.StreamResponse()).task
        assert_sql_injection_found(task)
        (artifact,) = [a for a in task.artifacts if a.name == "review-findings"]
        assert artifact.metadata["delegate"]["name"] == "Code Review Agent"
    asked = steps["review_ask"]
    assert not asked["ok"] and "which skill" in asked["error"]["message"]
