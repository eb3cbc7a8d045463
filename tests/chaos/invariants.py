"""What a chaos run recorded, the invariants checked on it, and its summary line.

A run (:mod:`tests.chaos.harness`) fills a :class:`RunRecord`: the
acknowledgements the clients got, the tasks as the store holds them at the
end, the task-event log, the agent-side execution log, what every
subscriber saw, every cancel, the push configs with what their webhooks got,
and the faults injected. :func:`check` turns it into :class:`Violation`\\ s,
one kind per invariant:

- ``lost``: an acknowledged task the store does not have;
- ``ack_changed``: an acknowledged terminal state (a blocking SendMessage's
  answer) that the store no longer has;
- ``stuck``: a task still SUBMITTED or WORKING once the run has settled;
- ``slow_takeover``: a task whose replica was killed, paused or cut off, taken
  over (FAILED "execution lost") later than the takeover bound;
- ``double_execution``: one (task, message, step) executed twice (agent log),
  or one message begun by two executions;
- ``step_after_end``: a step executed after its task had ended (elsewhere);
- ``stale_write``: an event written after the task's terminal event, or a
  stored chunk whose step ran after the task ended (a fenced-off writer);
- ``version_gap``: task-event log versions that are not 1, 2, … N;
- ``push_out_of_order``: a webhook got a version below one it already had;
- ``push_after_terminal``: a webhook got a non-terminal event after a terminal one;
- ``push_missing``: a notification never accepted by the webhook (for a config
  given with SendMessage every version from its first to the terminal one;
  for a config set later, the terminal one);
- ``subscriber_stuck``: a subscriber (with its resubscriptions) never saw the
  task terminal;
- ``stream_order``: a subscriber saw chunks repeat or go backwards;
- ``cancel_lost``: a CancelTask answered CANCELED (or the terminal state the
  task reached first) and the store has another, or it answered an active task;
- ``cancel_failed``: no attempt of a cancel was answered, and the task did not end CANCELED.

:func:`spurious_takeovers` lists the tasks taken over from a replica that had
no fault while it ran them (the execution began after the replica's last
fault ended): the replica served, yet could not keep its lease. That is
fault 1's wedge after a black hole, but also what a replica starved of CPU
for over a lease TTL gets (a loaded machine), so it is counted in the summary
line, not a violation. :func:`summary` prints one line with the counts.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from a2a_grpc.types import pb
from tests.chaos.agent import ExecEntry
from tests.chaos.receiver import Delivery

__all__ = [
    "KINDS",
    "Ack",
    "CancelRecord",
    "Fault",
    "FinalTask",
    "LoggedEvent",
    "PushExpectation",
    "RunRecord",
    "SubscriberRecord",
    "Violation",
    "check",
    "spurious_takeovers",
    "state_name",
    "summary",
    "takeover_times",
]

KINDS = (
    "lost",
    "ack_changed",
    "stuck",
    "slow_takeover",
    "double_execution",
    "step_after_end",
    "stale_write",
    "version_gap",
    "push_out_of_order",
    "push_after_terminal",
    "push_missing",
    "subscriber_stuck",
    "stream_order",
    "cancel_lost",
    "cancel_failed",
)
TERMINAL = {pb.TASK_STATE_COMPLETED, pb.TASK_STATE_FAILED, pb.TASK_STATE_CANCELED, pb.TASK_STATE_REJECTED}
ACTIVE = {pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING}
#: Seconds a step may be logged after its task's end timestamp without
#: counting (the timestamp is taken just before the terminal write).
CLOCK_SLACK = 0.02
_TERMINAL_NAMES = {"COMPLETED", "FAILED", "CANCELED", "REJECTED"}
_LOST = re.compile(r"^execution lost: replica (\S+) stopped")
_CHUNK = re.compile(r"^(\d+)@")


@dataclass(frozen=True, slots=True)
class Ack:
    """A client was answered about ``task_id``: by ``op`` (the workload
    operation), at ``t``, with the task in ``state``."""

    task_id: str
    op: str
    t: float
    state: int
    replica: str = ""


@dataclass(frozen=True, slots=True)
class FinalTask:
    """A task as the store holds it at the end of the run (``state`` 0: not
    found): its status message text, its status timestamp (seconds) and the
    texts of its ``out`` artifact chunks."""

    task_id: str
    state: int
    text: str = ""
    ended_at: float = 0.0
    chunks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One row of the task-event log."""

    task_id: str
    version: int
    final: bool


@dataclass(slots=True)
class SubscriberRecord:
    """One follower of a task (a stream, then resubscriptions after a
    broken one): the chunk indices each attempt saw (its snapshot's, then
    the updates'), whether one of them saw the task terminal, the last error."""

    task_id: str
    replica: str
    attempts: list[list[int]] = field(default_factory=list)
    terminal: bool = False
    error: str = ""


@dataclass(slots=True)
class CancelRecord:
    """A cancel of ``task_id`` and its attempts: (replica, outcome), the
    outcome being a state name the call answered, ``not_cancelable`` or
    ``error:<what>``."""

    task_id: str
    t: float
    attempts: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PushExpectation:
    """A push config of a task (its receiver tag): given with SendMessage
    (``inline``: every version is owed) or set later; ``expect_terminal``:
    the task was not terminal yet once the config was stored."""

    task_id: str
    tag: str
    inline: bool
    expect_terminal: bool = True


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault injected (:data:`tests.chaos.faults.KINDS`: kill, pause,
    partition, stall, delay) of ``replica`` from ``start`` to ``end``
    (``time.time()``)."""

    kind: str
    replica: str
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str
    task_id: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} task={self.task_id}: {self.detail}"


@dataclass(slots=True)
class RunRecord:
    """Everything a run recorded (see the module docstring). ``bound`` is
    the takeover bound, seconds (lease TTL + reaper interval + slack);
    ``states`` the state of every task the store holds at the end."""

    seed: int = 0
    bus: str = ""
    seconds: float = 0.0
    bound: float = 0.0
    ops: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    acks: list[Ack] = field(default_factory=list)
    finals: dict[str, FinalTask] = field(default_factory=dict)
    states: dict[str, int] = field(default_factory=dict)
    events: list[LoggedEvent] = field(default_factory=list)
    exec_log: list[ExecEntry] = field(default_factory=list)
    subscribers: list[SubscriberRecord] = field(default_factory=list)
    cancels: list[CancelRecord] = field(default_factory=list)
    pushes: list[PushExpectation] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    #: Seconds each phase of the run took (start, load, settle, collect).
    timings: dict[str, float] = field(default_factory=dict)


def check(run: RunRecord) -> list[Violation]:
    """Every invariant of the module docstring, checked on ``run``."""
    out: list[Violation] = []
    out += _acks(run)
    out += _stuck(run)
    out += [v for took, v in _takeovers(run) if took is not None and v is not None]
    out += _executions(run)
    out += _event_log(run)
    out += _pushes(run)
    out += _subscribers(run)
    out += _cancels(run)
    return out


def _acks(run: RunRecord) -> Iterable[Violation]:
    for ack in run.acks:
        final = run.finals.get(ack.task_id)
        if final is None or final.state == 0:
            yield Violation(
                "lost", ack.task_id, f"acknowledged by {ack.op} on {ack.replica}, not in the store"
            )
        elif ack.state in TERMINAL and final.state != ack.state:
            yield Violation(
                "ack_changed",
                ack.task_id,
                f"{ack.op} answered {state_name(ack.state)}, the store has {state_name(final.state)}",
            )


def _stuck(run: RunRecord) -> Iterable[Violation]:
    for task_id, state in sorted(run.states.items()):
        if state in ACTIVE:
            yield Violation("stuck", task_id, f"still {state_name(state)} after the run settled")


def takeover_times(run: RunRecord) -> list[float]:
    """Seconds from each fault (but a delay; or from the execution's begin,
    when it began during the fault) to the FAILED write of every task the
    faulted replica lost by it."""
    return [took for took, _v in _takeovers(run) if took is not None]


def spurious_takeovers(run: RunRecord) -> list[Violation]:
    """The tasks taken over from a replica that had no fault while it ran
    them (see the module docstring)."""
    return [v for took, v in _takeovers(run) if took is None and v is not None]


def _takeovers(run: RunRecord) -> Iterable[tuple[float | None, Violation | None]]:
    """(seconds, a slow_takeover or None) per timed takeover; (None, a
    spurious_takeover) per takeover without a fault."""
    faults = sorted((f for f in run.faults if f.kind != "delay"), key=lambda f: f.start)
    began: dict[str, list[ExecEntry]] = defaultdict(list)
    for e in run.exec_log:
        if e.what == "begin":
            began[e.task].append(e)
    for final in run.finals.values():
        lost = _LOST.match(final.text) if final.state == pb.TASK_STATE_FAILED else None
        if lost is None:
            continue
        # The execution lost: the last one begun before the task ended (the
        # text names the last holder: a reaper that stalled in turn, maybe).
        execution = max(
            (e for e in began.get(final.task_id, ()) if e.t <= final.ended_at),
            key=lambda e: e.t,
            default=None,
        )
        replica = execution.replica if execution is not None else lost.group(1)
        start = execution.t if execution is not None else 0.0
        before = [f for f in faults if f.replica in (replica, lost.group(1)) and f.start <= final.ended_at]
        if not before or before[-1].end < start:
            detail = f"FAILED by another replica while {replica} ran it with no fault since {start:.3f}"
            yield None, Violation("spurious_takeover", final.task_id, detail)
            continue
        fault = before[-1]
        took = final.ended_at - max(fault.start, start)
        slow = None
        if took > run.bound:
            detail = (
                f"FAILED {took:.2f} s after the {fault.kind} of {fault.replica} (bound {run.bound:.2f} s)"
            )
            slow = Violation("slow_takeover", final.task_id, detail)
        yield took, slow


def _executions(run: RunRecord) -> Iterable[Violation]:
    steps: dict[tuple[str, str, int], set[int]] = defaultdict(set)
    begins: dict[tuple[str, str], set[int]] = defaultdict(set)
    for e in run.exec_log:
        if e.what == "step":
            steps[(e.task, e.msg, e.step)].add(e.pid)
        elif e.what == "begin":
            begins[(e.task, e.msg)].add(e.pid)
    for (task, msg, step), pids in sorted(steps.items()):
        if len(pids) > 1:
            yield Violation(
                "double_execution", task, f"message {msg} step {step} ran in processes {sorted(pids)}"
            )
    for (task, msg), pids in sorted(begins.items()):
        if len(pids) > 1:
            yield Violation("double_execution", task, f"message {msg} begun in processes {sorted(pids)}")
    for e in run.exec_log:
        final = run.finals.get(e.task)
        if e.what != "step" or final is None or final.state not in TERMINAL or not final.ended_at:
            continue
        late = e.t - final.ended_at
        if late > CLOCK_SLACK:
            detail = f"step {e.step} ran on {e.replica}/{e.pid} {late:.3f} s after the task ended {state_name(final.state)}"
            yield Violation("step_after_end", e.task, detail)


def _event_log(run: RunRecord) -> Iterable[Violation]:
    per_task: dict[str, list[LoggedEvent]] = defaultdict(list)
    for event in run.events:
        per_task[event.task_id].append(event)
    for task_id, events in sorted(per_task.items()):
        events.sort(key=lambda e: e.version)
        versions = [e.version for e in events]
        if versions != list(range(1, len(versions) + 1)):
            yield Violation("version_gap", task_id, f"event versions {_short(versions)}")
        finals = [e.version for e in events if e.final]
        if finals and finals[0] != versions[-1]:
            after = [v for v in versions if v > finals[0]]
            yield Violation(
                "stale_write", task_id, f"versions {after} written after terminal version {finals[0]}"
            )
    ran = {(e.task, e.step, e.replica, e.pid): e.t for e in run.exec_log if e.what == "step"}
    for final in run.finals.values():
        if final.state not in TERMINAL or not final.ended_at:
            continue
        for chunk in final.chunks:
            index, _, who = chunk.partition("@")
            replica, _, pid = who.rpartition("/")
            if not index.isdigit() or not pid.isdigit():
                continue
            t = ran.get((final.task_id, int(index), replica, int(pid)))
            if t is not None and t - final.ended_at > CLOCK_SLACK:
                detail = f"stored chunk {chunk!r} ran {t - final.ended_at:.3f} s after the task ended"
                yield Violation("stale_write", final.task_id, detail)


def _pushes(run: RunRecord) -> Iterable[Violation]:
    got: dict[tuple[str, str], list[Delivery]] = defaultdict(list)
    for d in run.deliveries:
        got[(d.task_id, d.tag)].append(d)
    for (task_id, tag), seen in sorted(got.items()):
        top, ended_at = 0, 0
        for d in seen:
            if d.version < top:
                yield Violation(
                    "push_out_of_order", task_id, f"config {tag}: version {d.version} after {top}"
                )
            top = max(top, d.version)
            if ended_at and not d.terminal:
                detail = f"config {tag}: {d.kind} {d.state or ''} v{d.version} after terminal v{ended_at}"
                yield Violation("push_after_terminal", task_id, detail.replace("  ", " "))
            if d.terminal and not ended_at:
                ended_at = d.version
    for want in run.pushes:
        yield from _owed(run, want, got.get((want.task_id, want.tag), []))


def _owed(run: RunRecord, want: PushExpectation, seen: list[Delivery]) -> Iterable[Violation]:
    final = run.finals.get(want.task_id)
    if final is None or final.state not in TERMINAL:
        return  # stuck or lost: said so once already
    accepted = {d.version for d in seen if 200 <= d.status < 300}
    terminal = [d.version for d in seen if d.terminal]
    if not want.expect_terminal:
        return
    if not terminal or not accepted & set(terminal):
        yield Violation("push_missing", want.task_id, f"config {want.tag}: no terminal notification accepted")
        return
    if want.inline:
        first = min(d.version for d in seen)
        missing = sorted(set(range(first, min(terminal) + 1)) - accepted)
        if missing:
            yield Violation(
                "push_missing", want.task_id, f"config {want.tag}: versions {missing} never accepted"
            )


def _subscribers(run: RunRecord) -> Iterable[Violation]:
    for sub in run.subscribers:
        final = run.finals.get(sub.task_id)
        if not sub.terminal and final is not None and final.state in TERMINAL:
            detail = f"on {sub.replica}: {len(sub.attempts)} attempts, none saw it terminal ({sub.error})"
            yield Violation("subscriber_stuck", sub.task_id, detail)
        for attempt in sub.attempts:
            if any(b <= a for a, b in itertools.pairwise(attempt)):
                yield Violation("stream_order", sub.task_id, f"on {sub.replica}: chunks {_short(attempt)}")


def _cancels(run: RunRecord) -> Iterable[Violation]:
    for c in run.cancels:
        final = run.finals.get(c.task_id)
        state = state_name(final.state if final is not None else 0)
        answered = [o for _r, o in c.attempts if not o.startswith("error:")]
        for outcome in answered:
            if outcome == "not_cancelable":
                continue
            if outcome not in _TERMINAL_NAMES:  # a cancel's answer is the task ended
                yield Violation("cancel_lost", c.task_id, f"CancelTask answered a {outcome} task")
            elif outcome != state:  # CANCELED; or the state the task reached first
                yield Violation(
                    "cancel_lost", c.task_id, f"CancelTask answered {outcome}, the store has {state}"
                )
        if not answered and state != "CANCELED":
            yield Violation("cancel_failed", c.task_id, f"attempts {c.attempts}; the store has {state}")


def summary(run: RunRecord, violations: list[Violation]) -> str:
    """The run's one summary line: counts of tasks, operations, faults by
    kind, violations by kind, webhook deliveries and duplicates, and the
    takeover times (p50, max)."""
    faults = Counter(f.kind for f in run.faults)
    kinds = Counter(v.kind for v in violations)
    times = takeover_times(run)
    ids = Counter(f"{d.task_id}:{d.tag}:{d.version}" for d in run.deliveries if 200 <= d.status < 300)
    duplicates = sum(n - 1 for n in ids.values())
    take = (
        f"takeover_p50={statistics.median(times):.2f}s takeover_max={max(times):.2f}s (n={len(times)})"
        if times
        else "takeover_p50=- takeover_max=- (n=0)"
    )
    return (
        f"CHAOS seed={run.seed} bus={run.bus} seconds={run.seconds:g} tasks={len(run.states)} "
        f"acked={len({a.task_id for a in run.acks})} ops={sum(run.ops.values())} "
        f"errors={sum(run.errors.values())} faults={_counts(faults)} "
        f"violations={len(violations)}{'[' + _counts(kinds) + ']' if violations else ''} "
        f"deliveries={len(run.deliveries)} duplicates={duplicates} {take} "
        f"spurious_takeovers={len(spurious_takeovers(run))}"
    )


def _counts(counter: Counter[str]) -> str:
    return ",".join(f"{k}:{n}" for k, n in sorted(counter.items())) or "none"


def state_name(state: int) -> str:
    return pb.TaskState.Name(state).removeprefix("TASK_STATE_") if state else "NOT_FOUND"


def _short(values: list[int]) -> str:
    return str(values) if len(values) <= 12 else f"{values[:6]}…{values[-6:]}"
