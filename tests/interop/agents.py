"""The agent our server runs for the interoperability tests.

``slow`` (optionally ``slow SECONDS``): WORKING, then waits (cancellable) and
completes — used to cancel a task that is still running. ``ask``:
INPUT_REQUIRED with a question; the next message on the task is echoed and
completes it (multi-turn). ``reply``: a direct Message, no task. ``boom``:
WORKING, then the agent raises (the task must end FAILED). Anything else: the
built-in echo agent's behaviour (one artifact named ``echo`` with the message
parts, then COMPLETED).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.types import Event, pb


class InteropAgent(EchoAgent):
    """Echo, plus ``slow [SECONDS]`` for cancel and ``ask`` for multi-turn scenarios."""

    card = pb.AgentCard()
    card.CopyFrom(EchoAgent.card)
    card.name = "Interop Agent"

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        words = ctx.text().split()
        if ctx.task is None and words == ["reply"]:
            yield ctx.agent_message("a direct reply", with_task=False)
            return
        if ctx.task is None and words == ["boom"]:
            yield ctx.status(pb.TASK_STATE_WORKING, "about to fail")
            raise RuntimeError("the agent broke")
        if ctx.task is None and words == ["ask"]:
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "what should I echo?")
            return
        if words and words[0] == "slow":
            yield ctx.status(pb.TASK_STATE_WORKING, "working slowly")
            await asyncio.sleep(float(words[1]) if len(words) > 1 else 30.0)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
            return
        async for event in super().execute(ctx):
            yield event
