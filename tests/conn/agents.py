"""Agents the connection tests serve in subprocesses."""

from __future__ import annotations

from collections.abc import AsyncIterator

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.types import Event


class BoomAgent(EchoAgent):
    """Fails on every message after its first event (a real server fault:
    the server logs its traceback)."""

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        yield ctx.status(2)  # WORKING
        raise RuntimeError("boom")
