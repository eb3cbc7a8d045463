"""The agent of the cross-caller probes: tasks that stay WORKING or INPUT_REQUIRED until the test says.

The first word of the caller's message picks the behaviour (the rest is free text,
e.g. a secret the probes must never see):

* ``hold KEY …``: WORKING ("holding KEY"), then one event per command the test
  puts on :meth:`ProbeAgent.commands` ``(KEY)``: ``("tick", LABEL)`` a WORKING
  status whose message is LABEL; ``("ask", LABEL)`` INPUT_REQUIRED (LABEL) and
  the execution ends; ``("done", LABEL)`` COMPLETED (LABEL) and it ends;
* ``lurk KEY …``: as ``hold``, but it waits for the first command *before* its
  first event — an execution that has stored nothing yet (the window in which
  a message naming a task id reserves it); :meth:`entered` tells when it runs;
* ``ask …``: INPUT_REQUIRED at once ("what next? (N related)", N the number of
  ``referenceTaskIds`` the server resolved for the caller), new task or not;
* anything else: the echo agent (one artifact, COMPLETED).

Every label the test sends is unique, so a stream that shows it received an event
sent after a probe.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.types import Event, pb

Command = tuple[str, str]
_STATES = {
    "tick": pb.TASK_STATE_WORKING,
    "ask": pb.TASK_STATE_INPUT_REQUIRED,
    "done": pb.TASK_STATE_COMPLETED,
}


class ProbeAgent(EchoAgent):
    """Echo, plus test-driven ``hold`` / ``lurk`` executions and ``ask``."""

    card = pb.AgentCard()
    card.CopyFrom(EchoAgent.card)
    card.name = "Probe Agent"

    def __init__(self) -> None:
        self._queues: dict[str, asyncio.Queue[Command]] = {}
        self._entered: dict[str, asyncio.Event] = {}

    def commands(self, key: str) -> asyncio.Queue[Command]:
        """The commands of the ``hold`` / ``lurk`` execution named ``key``."""
        return self._queues.setdefault(key, asyncio.Queue())

    def entered(self, key: str) -> asyncio.Event:
        """Set once an execution named ``key`` runs in the agent."""
        return self._entered.setdefault(key, asyncio.Event())

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        words = ctx.text().split()
        verb = words[0] if words else ""
        if verb in ("hold", "lurk") and len(words) > 1:
            key = words[1]
            self.entered(key).set()
            if verb == "hold":
                yield ctx.status(pb.TASK_STATE_WORKING, f"holding {key}")
            while True:
                kind, label = await self.commands(key).get()
                yield ctx.status(_STATES[kind], label)
                if kind != "tick":
                    return
        if verb == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, f"what next? ({len(ctx.related_tasks)} related)")
            return
        async for event in super().execute(ctx):
            yield event
