"""Agents used by the scale checks (``bench/scale.py``).

:class:`HoldAgent` parks a new task in INPUT_REQUIRED — an interrupted, not terminal,
state, so ``SubscribeToTask`` streams can attach to it and wait — and completes it,
echoing the text as an artifact, when the next message for the task arrives.
Loaded with ``--agent bench.agents:HoldAgent``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import Event, pb

__all__ = ["HoldAgent"]


class HoldAgent(AgentExecutor):
    """First message: INPUT_REQUIRED. Follow-up: artifact echoing the text, COMPLETED."""

    card = pb.AgentCard(
        name="Hold Agent",
        description="Waits for a second message, then echoes it and completes (benchmark fan-out).",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="hold", name="Hold", description="Hold then echo.", tags=["bench"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        if ctx.is_new_task:
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "send another message to finish")
            return
        yield ctx.artifact([ctx.text()], name="echo")
        yield ctx.status(pb.TASK_STATE_COMPLETED)
