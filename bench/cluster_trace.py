"""Where the milliseconds of a cross-replica event go (``--trace`` of
:mod:`bench.cluster_latency`).

When ``$A2A_BENCH_TRACE`` names a directory, the replicas (which import
:mod:`bench.cluster_latency` for its agent) wrap a few cluster methods and
append ``stage task version time_ns`` lines to ``<dir>/<pid>.trace``:

- ``log``: the event row is written (inside the writer's transaction);
- ``commit``: the task write returned to the execution (after COMMIT);
- ``notify``: the relay got the task's notification;
- ``publish``: the event was handed to the local bus (its subscribers' queues);
  these lines end with the artifact chunk's stamp, which joins them to the
  bench's own ``yield`` and ``received`` times.

:func:`breakdown` reads them back into per-stage latencies. Instrumentation
only: the wrappers cost a few µs an event and nothing when the variable is unset.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from pathlib import Path
from typing import Any

_out: Any = None


def _line(*fields: object) -> None:
    _out.write(" ".join(map(str, fields)) + "\n")
    _out.flush()


def install() -> None:
    """Wraps the cluster methods of this process (once), if tracing is on."""
    global _out
    where = os.environ.get("A2A_BENCH_TRACE")
    if not where or _out is not None:
        return
    from a2a_grpc.cluster import _bus as bus
    from a2a_grpc.cluster import _store as store

    _out = (Path(where) / f"{os.getpid()}.trace").open("a")
    log_events, update, publish = (
        store.ClusterStore.log_events,
        store.ClusterStore.update,
        bus.ClusterBus.publish,
    )
    hook = "notified" if hasattr(bus.EventRelay, "notified") else "event"
    relayed = getattr(bus.EventRelay, hook)

    def traced_log(self: Any, conn: Any, task_id: str, first: int, events: Any) -> None:
        now = time.monotonic_ns()
        for version in range(first, first + len(events)):
            _line("log", task_id, version, now)
        log_events(self, conn, task_id, first, events)

    async def traced_update(self: Any, task: Any, *args: Any, **kw: Any) -> int:
        version = await update(self, task, *args, **kw)
        _line("commit", task.id, version, time.monotonic_ns())
        return version

    def traced_publish(self: Any, task_id: str, version: int, event: Any, *, last: bool = False) -> None:
        followed = bool(self.subscriber_count(task_id))
        publish(self, task_id, version, event, last=last)
        if not followed:
            return
        stamp = event.artifact_update.artifact.parts[0].text if event.HasField("artifact_update") else "-"
        _line("publish", task_id, version, time.monotonic_ns(), stamp)

    def traced_notified(self: Any, *args: Any) -> None:
        if hook == "event":  # the relay before issue 17: ``task:version``
            task_id, _, version = args[0].rpartition(":")
        else:
            task_id, version = args[0], args[1]
        if self.bus.subscriber_count(task_id):
            _line("notify", task_id, version, time.monotonic_ns())
        relayed(self, *args)

    store.ClusterStore.log_events = traced_log  # type: ignore[method-assign]
    store.ClusterStore.update = traced_update  # type: ignore[method-assign]
    bus.ClusterBus.publish = traced_publish  # type: ignore[method-assign]
    setattr(bus.EventRelay, hook, traced_notified)


def breakdown(where: Path, received: dict[str, int], *, relayed: bool) -> dict[str, list[float]]:
    """Per-stage milliseconds of the events whose stamps ``received`` maps to
    their arrival at the subscriber (ns): consecutive differences of yield,
    log, commit, notify (``relayed``: the subscriber is on another replica),
    publish and received, named ``a→b``. ``commit→notify`` is negative when
    the other replica heard of the commit before the writer's COMMIT returned."""
    times: dict[tuple[str, str], dict[str, int]] = {}
    for path in where.glob("*.trace"):
        for line in path.read_text().splitlines():
            stage, task, version, t, *rest = line.split()
            row = times.setdefault((task, version), {})
            row.setdefault(stage, int(t))
            if rest and rest[0] in received:
                row["yield"], row["received"] = int(rest[0]), received[rest[0]]
    out: dict[str, list[float]] = {}
    for row in times.values():
        if "received" not in row or "commit" not in row:
            continue
        if not relayed:
            row.pop("notify", None)
        order = [s for s in ("yield", "log", "commit", "notify", "publish", "received") if s in row]
        for a, b in itertools.pairwise(order):
            out.setdefault(f"{a}→{b}", []).append((row[b] - row[a]) / 1e6)
    return out


def summary(stages: dict[str, list[float]]) -> str:
    """One line per stage: p50/p90/p99/max in ms."""
    lines = []
    for name, values in stages.items():
        if len(values) < 2:
            continue
        q = statistics.quantiles(values, n=100, method="inclusive")
        lines.append(
            f"  {name:<18} n={len(values):<5} p50={q[49]:.2f}  p90={q[89]:.2f}  p99={q[98]:.2f}  max={max(values):.2f} ms"
        )
    return "\n".join(lines)
