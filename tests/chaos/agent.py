"""The chaos test agent (``--agent tests.chaos.agent:ChaosAgent``) and its
agent-side execution log.

The message text picks the behaviour (as ``tests.cluster.agents.StepsAgent``):

- ``steps=N delay=S``: WORKING, then N artifact chunks S seconds apart, then
  COMPLETED; chunk ``i`` reads ``i@REPLICA/PID`` (who executed it), or with
  ``stamp=1`` the ``time.time_ns()`` it was yielded at (latency);
- ``ask``: INPUT_REQUIRED at once (the first turn of a multi-turn task; the
  next message, ``steps=…``, continues it).

Every execution appends to the file named by ``$CHAOS_EXEC_LOG`` (one JSON
object a line, one ``write`` each, ``O_APPEND``: lines of several processes
never interleave): ``begin`` when the agent starts, one ``step`` line per
chunk *before* it is yielded (so a step the server never stored is still
seen), ``ask``, and ``end`` with how it ended (``done``, or the exception:
``CancelledError``, ``GeneratorExit``). Each line has the task id, the
message id, the replica (``--replica-id``, or the worker's), the process id
and ``time.time()``. A (task, message, step) logged twice is a double
execution; a step logged after the task ended elsewhere is a step too many.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import Event, pb

__all__ = ["LOG_ENV", "ChaosAgent", "ExecEntry", "read_exec_log", "replica_name"]

LOG_ENV = "CHAOS_EXEC_LOG"


def replica_name() -> str:
    """This process's replica id: a worker's (``$A2A_GRPC_WORKER``), else
    ``--replica-id`` of the command line, else ``$A2A_GRPC_REPLICA_ID``."""
    worker = os.environ.get("A2A_GRPC_WORKER")
    if worker:
        return str(json.loads(worker).get("replica_id", ""))
    argv = sys.argv
    for i, arg in enumerate(argv):
        if arg == "--replica-id" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--replica-id="):
            return arg.split("=", 1)[1]
    return os.environ.get("A2A_GRPC_REPLICA_ID", "")


@dataclass(frozen=True, slots=True)
class ExecEntry:
    """One line of the execution log. ``what`` is begin, step, ask or end;
    ``step`` the chunk index (-1 otherwise); ``how`` how an execution ended."""

    t: float
    what: str
    task: str
    msg: str
    replica: str
    pid: int
    step: int = -1
    how: str = ""

    @property
    def execution(self) -> tuple[str, str, int]:
        """Which execution: (task, message, pid)."""
        return (self.task, self.msg, self.pid)


class _Log:
    def __init__(self) -> None:
        self._fd: int | None = None
        self.replica = replica_name()

    def write(self, ctx: ExecutorContext, what: str, **extra: object) -> None:
        path = os.environ.get(LOG_ENV)
        if not path:
            return
        if self._fd is None:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        line = {"t": time.time(), "what": what, "task": ctx.task_id, "msg": ctx.message.message_id}
        line.update(replica=self.replica, pid=os.getpid(), **extra)
        os.write(self._fd, (json.dumps(line) + "\n").encode())


_LOG = _Log()


def _params(text: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in text.split() if "=" in word)


class ChaosAgent(AgentExecutor):
    """Works in timed steps and logs each one (see the module docstring)."""

    card = pb.AgentCard(
        name="Chaos Agent",
        description="Works in timed steps and logs each; for the chaos suite.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="steps", name="Steps", description="Timed steps.", tags=["test"])],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        text = ctx.text()
        _LOG.write(ctx, "begin")
        how = "done"
        try:
            if text.strip() == "ask":
                _LOG.write(ctx, "ask")
                yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "what next?")
                return
            params = _params(text)
            steps, delay = int(params.get("steps", "3")), float(params.get("delay", "0.05"))
            stamp = params.get("stamp") == "1"
            yield ctx.status(pb.TASK_STATE_WORKING)
            for i in range(steps):
                await asyncio.sleep(delay)
                _LOG.write(ctx, "step", step=i)
                chunk = str(time.time_ns()) if stamp else f"{i}@{_LOG.replica}/{os.getpid()}"
                yield ctx.artifact([chunk], artifact_id="out", append=i > 0, last_chunk=i == steps - 1)
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        except BaseException as stop:
            how = type(stop).__name__
            raise
        finally:
            _LOG.write(ctx, "end", how=how)


def read_exec_log(path: Path) -> Iterator[ExecEntry]:
    """The entries of an execution log, in file order (a torn last line of a
    killed process is skipped)."""
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        try:
            raw = json.loads(line)
        except ValueError:
            continue
        yield ExecEntry(
            t=float(raw["t"]),
            what=str(raw["what"]),
            task=str(raw["task"]),
            msg=str(raw["msg"]),
            replica=str(raw["replica"]),
            pid=int(raw["pid"]),
            step=int(raw.get("step", -1)),
            how=str(raw.get("how", "")),
        )
