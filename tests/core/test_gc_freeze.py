"""``ServerConfig.freeze_gc`` moves the start-up heap out of the cyclic GC's reach."""

from __future__ import annotations

import gc

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore


async def test_freeze_gc_only_when_asked() -> None:
    gc.unfreeze()
    plain = A2AServer(EchoAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=None))
    await plain.start()
    try:
        assert gc.get_freeze_count() == 0
    finally:
        await plain.stop(0.1)
    frozen = A2AServer(
        EchoAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0, freeze_gc=True)
    )
    await frozen.start()
    try:
        assert gc.get_freeze_count() > 10_000  # modules, classes, descriptor pools, the app
    finally:
        await frozen.stop(0.1)
        gc.unfreeze()
