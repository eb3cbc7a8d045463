"""A scripted agent for client tests: the first word of the message's text is
a command.

- ``echo TEXT``: an artifact ``echo`` with TEXT (and any non-text parts), COMPLETED.
- ``ask``: INPUT_REQUIRED with a question; the follow-up message completes.
- ``slow N``: WORKING, N seconds of (cancellable) work, COMPLETED.
- ``reply``: a direct Message, no task.
- ``review``: WORKING per file, then an artifact with a findings data part (the
  code-review agent's media type) and a text summary, COMPLETED.
- ``fail``: FAILED with a reason.
- anything else: COMPLETED.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2a_grpc.agents._views import REVIEW_FINDINGS
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext, data_part
from a2a_grpc.types import Event, pb

FINDINGS = {
    "findings": [
        {
            "file": "app/db.py",
            "line": 12,
            "rule": "S608",
            "severity": "high",
            "issue": "Possible SQL injection vector through string-based query construction",
            "recommendation": "Use parameterized queries.",
        }
    ],
    "summary": "1 finding in 1 file",
}


class ScriptAgent(AgentExecutor):
    card = pb.AgentCard(
        name="Script Agent",
        description="Client test agent driven by commands.",
        version="0.1.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "text/x-diff", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[pb.AgentSkill(id="script", name="Script", description="Runs commands.", tags=["test"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        text = ctx.text()
        words = text.split()
        cmd = words[0] if words else ""
        if ctx.task is not None and ctx.task.status.state == pb.TASK_STATE_INPUT_REQUIRED:
            yield ctx.artifact([f"got: {text}"], name="answer")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
            return
        if cmd == "echo":
            others = [p for p in ctx.message.parts if p.WhichOneof("content") != "text"]
            yield ctx.artifact([text[5:], *others], name="echo")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "which file?")
        elif cmd == "slow":
            yield ctx.status(pb.TASK_STATE_WORKING, "working")
            await asyncio.sleep(float(words[1]) if len(words) > 1 else 30)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "reply":
            yield ctx.agent_message("hi there", with_task=False)
        elif cmd == "review":
            yield ctx.status(pb.TASK_STATE_WORKING, "reviewing app/db.py")
            yield ctx.artifact(
                [data_part(FINDINGS, media_type=REVIEW_FINDINGS), "1 finding in 1 file"],
                name="review-findings",
                last_chunk=True,
            )
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "fail":
            yield ctx.status(pb.TASK_STATE_FAILED, "could not parse the diff")
        else:
            yield ctx.status(pb.TASK_STATE_COMPLETED)
