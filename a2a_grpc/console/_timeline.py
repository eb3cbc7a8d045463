"""What the console saw happen to each task: its timeline.

A task holds only its current status, its history (messages, without times)
and its artifacts. Every event the console relays (its own sends and
subscriptions) is recorded here with a time: a status change with the
agent's status timestamp, an artifact update with the time the console
received it. :meth:`Timelines.of` answers the recorded entries of a task, or
— for a task the console never followed — the entries its snapshot allows
(messages and artifacts in order, without times, then the status with its
timestamp). The last :data:`MAX_TASKS` tasks are kept, in memory only.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from a2a_grpc.types import pb

__all__ = ["MAX_TASKS", "Timelines"]

#: Tasks whose timelines are kept (least recently seen dropped first).
MAX_TASKS = 500
#: Entries kept per task.
MAX_ENTRIES = 1000


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _when(ts: Any) -> str:
    if ts.seconds == 0 and ts.nanos == 0:
        return ""
    return ts.ToDatetime(tzinfo=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(parts: Any) -> str:
    texts = [p.text for p in parts if p.WhichOneof("content") == "text"]
    files = [p.filename or p.media_type for p in parts if p.WhichOneof("content") in ("raw", "url")]
    return " ".join([*texts, *(f"[file {f}]" for f in files)])[:300]


def _status(status: pb.TaskStatus, source: str) -> dict[str, Any]:
    return {
        "at": _when(status.timestamp) or _now(),
        "source": source,
        "kind": "status",
        "state": pb.TaskState.Name(status.state),
        "text": _text(status.message.parts),
    }


class Timelines:
    """Timelines by task id, and the ids of the tasks seen, newest first."""

    def __init__(self) -> None:
        self._tasks: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def _entries(self, task_id: str) -> list[dict[str, Any]]:
        entries = self._tasks.pop(task_id, None)
        if entries is None:
            entries = []
            while len(self._tasks) >= MAX_TASKS:
                self._tasks.popitem(last=False)
        self._tasks[task_id] = entries
        return entries

    def _append(self, task_id: str, entry: dict[str, Any]) -> None:
        entries = self._entries(task_id)
        if entries and entries[-1] == entry:
            return  # a subscription's first snapshot repeats the last status
        entries.append(entry)
        del entries[:-MAX_ENTRIES]

    def record(self, event: pb.StreamResponse) -> None:
        """Adds one relayed event to its task's timeline."""
        kind = event.WhichOneof("payload")
        if kind == "task":
            self._append(event.task.id, _status(event.task.status, "agent"))
        elif kind == "status_update":
            self._append(event.status_update.task_id, _status(event.status_update.status, "agent"))
        elif kind == "artifact_update":
            update = event.artifact_update
            art = update.artifact
            self._append(
                update.task_id,
                {
                    "at": _now(),
                    "source": "console",
                    "kind": "artifact",
                    "artifactId": art.artifact_id,
                    "name": art.name,
                    "append": update.append,
                    "lastChunk": update.last_chunk,
                    "text": _text(art.parts),
                },
            )
        elif kind == "message" and event.message.task_id:
            msg = event.message
            self._append(
                msg.task_id, {"at": _now(), "source": "console", "kind": "message", "text": _text(msg.parts)}
            )

    def sent(self, message: pb.Message) -> None:
        """Records a message the console sent on an existing task."""
        if message.task_id:
            self._append(
                message.task_id,
                {
                    "at": _now(),
                    "source": "console",
                    "kind": "message",
                    "role": "user",
                    "text": _text(message.parts),
                },
            )

    def seen(self) -> list[str]:
        """Task ids, most recently seen first."""
        return list(reversed(self._tasks))

    def of(self, task: pb.Task) -> list[dict[str, Any]]:
        """The recorded timeline of ``task``, or the one its snapshot gives."""
        recorded = self._tasks.get(task.id)
        if recorded:
            return list(recorded)
        out: list[dict[str, Any]] = [
            {
                "at": "",
                "source": "snapshot",
                "kind": "message",
                "role": pb.Role.Name(m.role).removeprefix("ROLE_").lower(),
                "text": _text(m.parts),
            }
            for m in task.history
        ]
        out.extend(
            {
                "at": "",
                "source": "snapshot",
                "kind": "artifact",
                "artifactId": a.artifact_id,
                "name": a.name,
                "text": _text(a.parts),
            }
            for a in task.artifacts
        )
        out.append(_status(task.status, "snapshot"))
        return out
