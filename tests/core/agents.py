"""A scripted test agent: the first text part of each message is a command.

- ``echo …``: artifact with the text, COMPLETED.
- ``ask``: INPUT_REQUIRED with a question; the next message completes
  (unless it is ``refuse``).
- ``auth``: AUTH_REQUIRED.
- ``slow N``: WORKING, then N seconds of work (cancellable), then COMPLETED.
- ``gate NAME``: WORKING, then waits until the test opens gate NAME, then an
  artifact and COMPLETED. ``agent.started(NAME)`` is set when it waits.
- ``chunks N``: one artifact in N chunks (append / last_chunk), COMPLETED.
- ``orphan-append``: an ``append=true`` chunk for an artifact never sent.
- ``replace``: artifact "r" twice without append (the second replaces it).
- ``many N SIZE [GATE [lockstep]]``: WORKING, (waits for gate GATE,) then N
  updates of artifact "big" (replaced each time, SIZE bytes of text), then
  COMPLETED. With ``lockstep`` each update waits for gate ``GATE-step``.
- ``at SECONDS``: COMPLETED with the status timestamp fixed at SECONDS.
- ``reply``: a direct Message, no task.
- ``bad-terminal``: COMPLETED, then another status (invalid).
- ``bad-end``: WORKING, then the generator ends (invalid).
- ``bad KIND``: WORKING, then an invalid event of KIND (see ``_bad``).
- ``bad-first KIND``: an invalid event of KIND as the very first event.
- ``boom``: raises RuntimeError (with a secret in its text) after WORKING.
- ``boom-first``: raises RuntimeError before any event.
- ``raise REASON``: raises A2AError(ErrorCode[REASON]) before any event.
- ``refuse``: raises CONTENT_TYPE_NOT_SUPPORTED before any event.
- ``reject``: REJECTED.
- ``empty``: yields nothing at all.

Each execution's context is recorded in ``agent.seen``; task ids whose
execution saw ``asyncio.CancelledError`` are in ``agent.cancelled``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from google.protobuf import timestamp_pb2

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import Event, pb

#: Text of the exception ``boom`` raises; it must never reach a client.
SECRET = "s3cr3t-db-password"


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

    def __init__(self, card: pb.AgentCard | None = None) -> None:
        if card is not None:
            self.card = card
        self.seen: list[ExecutorContext] = []
        self.cancelled: set[str] = set()
        self._gates: dict[str, asyncio.Event] = {}
        self._started: dict[str, asyncio.Event] = {}

    def gate(self, name: str) -> asyncio.Event:
        """The event ``gate NAME`` waits for; ``.set()`` it to let it finish."""
        return self._gates.setdefault(name, asyncio.Event())

    def started(self, name: str) -> asyncio.Event:
        """Set once ``gate NAME`` has reported WORKING and is waiting."""
        return self._started.setdefault(name, asyncio.Event())

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        self.seen.append(ctx)
        try:
            async for event in self._run(ctx):
                yield event
        except asyncio.CancelledError:
            self.cancelled.add(ctx.task_id)
            raise

    async def _run(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        words = ctx.text().split()
        cmd = words[0] if words else ""
        if ctx.task is not None and ctx.task.status.state == pb.TASK_STATE_INPUT_REQUIRED:
            if cmd == "refuse":
                raise A2AError(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, "no thanks")
            yield ctx.status(pb.TASK_STATE_WORKING)
            yield ctx.artifact([f"got: {ctx.text()}"], name="answer")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
            return
        if cmd == "echo":
            yield ctx.artifact([ctx.text()[5:]], name="echo")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "what else?")
        elif cmd == "auth":
            yield ctx.status(pb.TASK_STATE_AUTH_REQUIRED, "please sign in")
        elif cmd == "slow":
            yield ctx.status(pb.TASK_STATE_WORKING, "working")
            await asyncio.sleep(float(words[1]) if len(words) > 1 else 30)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "gate":
            name = words[1]
            yield ctx.status(pb.TASK_STATE_WORKING, "waiting for " + name)
            self.started(name).set()
            await self.gate(name).wait()
            yield ctx.artifact([f"opened {name}"], name="gate")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "chunks":
            n = int(words[1])
            for i in range(n):
                yield ctx.artifact([f"c{i}"], artifact_id="a1", append=i > 0, last_chunk=i == n - 1)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "orphan-append":
            yield ctx.artifact(["tail"], artifact_id="never-sent", append=True, last_chunk=True)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "replace":
            yield ctx.artifact(["first"], artifact_id="r")
            yield ctx.artifact(["second"], artifact_id="r")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "many":
            n, size = int(words[1]), int(words[2])
            yield ctx.status(pb.TASK_STATE_WORKING)
            if len(words) > 3:
                self.started(words[3]).set()
                await self.gate(words[3]).wait()
            lockstep = len(words) > 4 and words[4] == "lockstep"
            for i in range(n):
                yield ctx.artifact([f"{i:08d}" + "x" * size], artifact_id="big")
                if lockstep:  # the next update only once the test says "step"
                    step = self.gate(words[3] + "-step")
                    await step.wait()
                    step.clear()
                else:
                    await asyncio.sleep(0)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif cmd == "at":
            ev = ctx.status(pb.TASK_STATE_COMPLETED)
            ev.status.timestamp.CopyFrom(timestamp_pb2.Timestamp(seconds=int(words[1])))
            yield ev
        elif cmd == "reply":
            yield ctx.agent_message("hi there", with_task=False)
        elif cmd == "bad-terminal":
            yield ctx.status(pb.TASK_STATE_COMPLETED)
            yield ctx.status(pb.TASK_STATE_WORKING)
        elif cmd == "bad-end":
            yield ctx.status(pb.TASK_STATE_WORKING)
        elif cmd == "bad":
            yield ctx.status(pb.TASK_STATE_WORKING)
            yield _bad(ctx, words[1])
        elif cmd == "bad-first":
            yield _bad(ctx, words[1])
        elif cmd == "boom":
            yield ctx.status(pb.TASK_STATE_WORKING)
            raise RuntimeError(f"connection to postgres://admin:{SECRET}@db failed")
        elif cmd == "boom-first":
            raise RuntimeError(f"connection to postgres://admin:{SECRET}@db failed")
        elif cmd == "raise":
            raise A2AError(ErrorCode[words[1]], f"agent raised {words[1]}")
        elif cmd == "refuse":
            raise A2AError(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, "no thanks")
        elif cmd == "reject":
            yield ctx.status(pb.TASK_STATE_REJECTED, "will not do that")
        elif cmd == "empty":
            return
        else:
            yield ctx.status(pb.TASK_STATE_COMPLETED)


def _bad(ctx: ExecutorContext, kind: str) -> Event:
    """An event that breaks the executor rules (a2a_grpc/core/_executor.py)."""
    if kind == "other-task":
        ev = ctx.status(pb.TASK_STATE_COMPLETED)
        ev.task_id = "some-other-task"
        return ev
    if kind == "other-context":
        ev = ctx.status(pb.TASK_STATE_COMPLETED)
        ev.context_id = "some-other-context"
        return ev
    if kind == "unspecified":
        return ctx.status(pb.TASK_STATE_UNSPECIFIED)
    if kind == "no-artifact-id":
        ev = ctx.artifact(["x"])
        ev.artifact.artifact_id = ""
        return ev
    if kind == "empty-artifact":
        ev = ctx.artifact(["x"])
        del ev.artifact.parts[:]
        return ev
    if kind == "message":  # a direct Message after the task exists
        return ctx.agent_message("late reply", with_task=False)
    if kind == "not-an-event":
        return pb.Part(text="not an event")  # type: ignore[return-value]
    raise ValueError(kind)
