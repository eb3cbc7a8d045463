"""Agents of the conformance server.

:class:`ConformanceAgent` runs the command in the first word of the message
text; ``echo`` is the built-in :class:`~a2a_grpc.agents._echo.EchoAgent`
(every part echoed byte-exact into an artifact):

- ``echo …`` / anything unknown: EchoAgent.
- ``ask``: INPUT_REQUIRED with a question; the follow-up message completes
  the task with an artifact ``got: <text>``.
- ``chunks N``: one artifact streamed in N chunks (append / last_chunk).
- ``hold``: WORKING, then waits until canceled.
- ``reply``: a direct Message, no task.
- ``silent``: no event at all (INVALID_AGENT_RESPONSE).
- ``refuse``: CONTENT_TYPE_NOT_SUPPORTED before any event.
- ``ext``: echoes which extensions the caller requested, as an artifact.
- ``nonfinite``: an artifact whose data part holds NaN, Infinity and
  -Infinity, numbers no request may carry but an agent (or an older version
  of the store) may write; the task must stay readable on every binding.

:class:`BareAgent` declares no streaming, no extended card and a required
extension, for the capability errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import Event, pb

OPTIONAL_EXTENSION = "https://example.com/ext/trace/v1"
REQUIRED_EXTENSION = "https://example.com/ext/required/v1"


class ConformanceAgent(AgentExecutor):
    card = pb.AgentCard(
        name="Conformance",
        description="Scripted agent of the cross-binding conformance suite.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(
            streaming=True,
            extensions=[pb.AgentExtension(uri=OPTIONAL_EXTENSION, description="trace", required=False)],
        ),
        default_input_modes=["text/plain", "application/octet-stream", "application/json"],
        default_output_modes=["text/plain", "application/octet-stream"],
        skills=[pb.AgentSkill(id="script", name="Script", description="Runs commands.", tags=["test"])],
    )

    def __init__(self) -> None:
        self.echo = EchoAgent()

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        words = ctx.text().split()
        cmd = words[0] if words else ""
        if ctx.task is not None and ctx.task.status.state == pb.TASK_STATE_INPUT_REQUIRED:
            yield ctx.status(pb.TASK_STATE_WORKING)
            yield ctx.artifact([f"got: {ctx.text()}"], name="answer")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "what else?")
        elif cmd == "chunks":
            n = int(words[1])
            for i in range(n):
                yield ctx.artifact([f"c{i}"], artifact_id="chunked", append=i > 0, last_chunk=i == n - 1)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "hold":
            yield ctx.status(pb.TASK_STATE_WORKING, "holding")
            await asyncio.Event().wait()  # until canceled
        elif cmd == "reply":
            yield ctx.agent_message("hi there", with_task=False)
        elif cmd == "silent":
            return
        elif cmd == "refuse":
            raise A2AError(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, "this agent only reads text/x-never")
        elif cmd == "nonfinite":
            data = pb.Part()
            for number in (float("nan"), float("inf"), float("-inf"), 1.5):
                data.data.list_value.values.add().number_value = number
            yield ctx.artifact([data], name="nonfinite")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "ext":
            yield ctx.artifact([",".join(sorted(ctx.call.requested_extensions))], name="extensions")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        else:
            async for event in self.echo.execute(ctx):
                yield event


class BareAgent(AgentExecutor):
    card = pb.AgentCard(
        name="Bare",
        description="No streaming, no push, no extended card; requires an extension.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(
            streaming=False,
            extended_agent_card=False,
            extensions=[pb.AgentExtension(uri=REQUIRED_EXTENSION, required=True)],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["test"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        yield ctx.artifact(list(ctx.message.parts), name="echo")
        yield ctx.status(pb.TASK_STATE_COMPLETED)
