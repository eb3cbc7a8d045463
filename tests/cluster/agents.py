"""The agent the multi-process cluster tests serve (``--agent
tests.cluster.agents:StepsAgent``).

The message text picks the behaviour:

- ``steps=N delay=S``: WORKING, then N artifact chunks S seconds apart, then
  COMPLETED (default 3 steps, 0.05 s);
  with ``stamp=1`` each chunk's text is the time it was yielded
  (``time.time_ns()``: the cross-replica latency bench); with ``big=1`` every
  other chunk is 9,000 characters (beyond a NOTIFY payload: the relay reads it);
- ``ask``: INPUT_REQUIRED at once (an interrupted task, no execution left).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import Event, pb

log = logging.getLogger("steps")


def _params(text: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in text.split() if "=" in word)


class StepsAgent(AgentExecutor):
    """Works in timed steps (see the module docstring)."""

    card = pb.AgentCard(
        name="Steps Agent",
        description="Works in timed steps; for the cluster tests.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="steps", name="Steps", description="Timed steps.", tags=["test"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        text = ctx.text()
        if text.strip() == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "what next?")
            return
        params = _params(text)
        steps, delay = int(params.get("steps", "3")), float(params.get("delay", "0.05"))
        stamp, big = params.get("stamp") == "1", params.get("big") == "1"
        yield ctx.status(pb.TASK_STATE_WORKING)
        try:
            for i in range(steps):
                await asyncio.sleep(delay)
                text = str(time.time_ns()) if stamp else f"chunk {i}"
                if big and i % 2:
                    text = text.ljust(9000, ".")
                yield ctx.artifact([text], artifact_id="out", append=i > 0, last_chunk=i == steps - 1)
        except (asyncio.CancelledError, GeneratorExit) as stop:
            # CancelledError while it awaits; GeneratorExit when the
            # interruption came while the server applied its last event.
            log.warning("agent stopped by %s on task %s", type(stop).__name__, ctx.task_id)
            raise
        yield ctx.status(pb.TASK_STATE_COMPLETED)


class ResumableStepsAgent(StepsAgent):
    """StepsAgent that declares itself resumable: run again after its replica
    died, it continues from the chunks the stored task already has and ends
    COMPLETED with "resumed after REPLICA"."""

    resumable = True

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        if not ctx.metadata.get("resumed"):
            async for event in super().execute(ctx):
                yield event
            return
        assert ctx.task is not None
        params = _params(ctx.text())
        steps, delay = int(params.get("steps", "3")), float(params.get("delay", "0.05"))
        done = sum(len(a.parts) for a in ctx.task.artifacts if a.artifact_id == "out")
        for i in range(done, steps):
            await asyncio.sleep(delay)
            yield ctx.artifact([f"chunk {i}"], artifact_id="out", append=i > 0, last_chunk=i == steps - 1)
        yield ctx.status(pb.TASK_STATE_COMPLETED, f"resumed after {ctx.metadata['previous_replica']}")
