"""A scripted test agent: the first text part of each message is a command.

- ``echo …``: artifact with the text, COMPLETED.
- ``ask``: INPUT_REQUIRED with a question; the next message completes.
- ``slow N``: WORKING, then N seconds of work (cancellable), then COMPLETED.
- ``chunks N``: one artifact in N chunks (append / last_chunk), COMPLETED.
- ``reply``: a direct Message, no task.
- ``bad-terminal``: COMPLETED, then another status (invalid).
- ``bad-end``: WORKING, then the generator ends (invalid).
- ``boom``: raises RuntimeError after WORKING.
- ``refuse``: raises CONTENT_TYPE_NOT_SUPPORTED before any event.
- ``reject``: REJECTED.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import Event, pb


class ScriptedAgent(AgentExecutor):
    card = pb.AgentCard(
        name="Scripted",
        description="Test agent driven by commands in the message text.",
        version="0.0.1",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="script", name="Script", description="Runs commands.", tags=["test"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        words = ctx.text().split()
        cmd = words[0] if words else ""
        if ctx.task is not None and ctx.task.status.state == pb.TASK_STATE_INPUT_REQUIRED:
            yield ctx.status(pb.TASK_STATE_WORKING)
            yield ctx.artifact([f"got: {ctx.text()}"], name="answer")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
            return
        if cmd == "echo":
            yield ctx.artifact([ctx.text()[5:]], name="echo")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "what else?")
        elif cmd == "slow":
            yield ctx.status(pb.TASK_STATE_WORKING, "working")
            await asyncio.sleep(float(words[1]) if len(words) > 1 else 30)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "chunks":
            n = int(words[1])
            for i in range(n):
                yield ctx.artifact([f"c{i}"], artifact_id="a1", append=i > 0, last_chunk=i == n - 1)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "reply":
            yield ctx.agent_message("hi there", with_task=False)
        elif cmd == "bad-terminal":
            yield ctx.status(pb.TASK_STATE_COMPLETED)
            yield ctx.status(pb.TASK_STATE_WORKING)
        elif cmd == "bad-end":
            yield ctx.status(pb.TASK_STATE_WORKING)
        elif cmd == "boom":
            yield ctx.status(pb.TASK_STATE_WORKING)
            raise RuntimeError("boom")
        elif cmd == "refuse":
            raise A2AError(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, "no thanks")
        elif cmd == "reject":
            yield ctx.status(pb.TASK_STATE_REJECTED, "will not do that")
        else:
            yield ctx.status(pb.TASK_STATE_COMPLETED)
