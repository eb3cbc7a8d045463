"""The invariant checker on fabricated runs: a clean run has no violation,
and one fabricated fault of each kind is caught as that kind (and only it);
the summary line counts them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from a2a_grpc.types import pb
from tests.chaos.agent import ExecEntry
from tests.chaos.invariants import (
    KINDS,
    Ack,
    CancelRecord,
    Fault,
    FinalTask,
    LoggedEvent,
    PushExpectation,
    RunRecord,
    SubscriberRecord,
    check,
    spurious_takeovers,
    summary,
    takeover_times,
)
from tests.chaos.receiver import Delivery

pytestmark = pytest.mark.chaos

A, B, C, D = "task-a", "task-b", "task-c", "task-d"
COMPLETED, FAILED, CANCELED, WORKING = (
    pb.TASK_STATE_COMPLETED,
    pb.TASK_STATE_FAILED,
    pb.TASK_STATE_CANCELED,
    pb.TASK_STATE_WORKING,
)


def _delivery(task: str, tag: str, version: int, state: str, t: float, status: int = 200) -> Delivery:
    kind = "artifactUpdate" if not state else "task" if state == "TASK_STATE_SUBMITTED" else "statusUpdate"
    return Delivery(t, task, tag, version, kind, state, status, {}, {})


def clean() -> RunRecord:
    """A run where nothing went wrong: A done on r1 (pushed to i1), B lost by
    the kill of r2 and taken over in 2 s, C canceled (and followed)."""
    run = RunRecord(seed=3, bus="postgresql", seconds=10, bound=4.2)
    run.acks = [Ack(A, "blocking", 101, COMPLETED, "r1"), Ack(B, "immediate", 200, WORKING, "r2")]
    run.finals = {
        A: FinalTask(A, COMPLETED, "", 101.0, ("0@r1/11", "1@r1/11")),
        B: FinalTask(
            B, FAILED, "execution lost: replica r2 stopped while running the task", 203.0, ("0@r2/22",)
        ),
        C: FinalTask(C, CANCELED, "canceled at the client's request", 301.0, ()),
    }
    run.states = {A: COMPLETED, B: FAILED, C: CANCELED}
    run.events = [LoggedEvent(A, v, v == 4) for v in (1, 2, 3, 4)]
    run.events += [LoggedEvent(B, v, v == 3) for v in (1, 2, 3)]
    run.events += [LoggedEvent(C, v, v == 3) for v in (1, 2, 3)]
    run.exec_log = [
        ExecEntry(100.0, "begin", A, "m-a", "r1", 11),
        ExecEntry(100.2, "step", A, "m-a", "r1", 11, 0),
        ExecEntry(100.4, "step", A, "m-a", "r1", 11, 1),
        ExecEntry(100.5, "end", A, "m-a", "r1", 11, how="done"),
        ExecEntry(200.0, "begin", B, "m-b", "r2", 22),
        ExecEntry(200.5, "step", B, "m-b", "r2", 22, 0),
        ExecEntry(300.0, "begin", C, "m-c", "r3", 33),
        ExecEntry(300.9, "end", C, "m-c", "r3", 33, how="CancelledError"),
    ]
    run.subscribers = [SubscriberRecord(C, "r1", [[0, 1, 2]], terminal=True)]
    run.cancels = [CancelRecord(C, 300.8, [("r1", "CANCELED")])]
    run.pushes = [PushExpectation(A, "i1", inline=True)]
    run.deliveries = [
        _delivery(A, "i1", 2, "TASK_STATE_SUBMITTED", 100.1),
        _delivery(A, "i1", 3, "TASK_STATE_WORKING", 100.15),
        _delivery(A, "i1", 4, "TASK_STATE_COMPLETED", 101.1),
    ]
    run.faults = [Fault("kill", "r2", 201.0, 202.0)]
    run.ops.update(blocking=1, immediate=1, cancel=1)
    return run


def _final(run: RunRecord, task: str, **changes: object) -> None:
    old = run.finals[task]
    fields = {"task_id": old.task_id, "state": old.state, "text": old.text, "ended_at": old.ended_at}
    run.finals[task] = FinalTask(**{**fields, "chunks": old.chunks, **changes})  # type: ignore[arg-type]


def _lost(run: RunRecord) -> None:
    _final(run, A, state=0, text="", ended_at=0.0, chunks=())


def _ack_changed(run: RunRecord) -> None:
    _final(run, A, state=FAILED)


def _stuck(run: RunRecord) -> None:
    run.states[D] = WORKING


def _slow_takeover(run: RunRecord) -> None:
    _final(run, B, ended_at=201.0 + run.bound + 1.0)


def _double_execution(run: RunRecord) -> None:
    run.exec_log.append(ExecEntry(100.45, "step", A, "m-a", "r3", 12, 1))


def _step_after_end(run: RunRecord) -> None:
    run.exec_log.append(ExecEntry(203.5, "step", B, "m-b", "r2", 22, 1))


def _stale_write(run: RunRecord) -> None:
    run.events.append(LoggedEvent(B, 4, False))


def _version_gap(run: RunRecord) -> None:
    run.events = [e for e in run.events if (e.task_id, e.version) != (C, 2)]


def _push_out_of_order(run: RunRecord) -> None:
    run.deliveries.insert(2, _delivery(A, "i1", 2, "TASK_STATE_SUBMITTED", 100.2))


def _push_after_terminal(run: RunRecord) -> None:
    run.deliveries.append(_delivery(A, "i1", 5, "", 101.2))


def _push_missing(run: RunRecord) -> None:
    run.deliveries[1] = _delivery(A, "i1", 3, "TASK_STATE_WORKING", 100.15, status=500)


def _subscriber_stuck(run: RunRecord) -> None:
    run.subscribers[0].terminal = False


def _stream_order(run: RunRecord) -> None:
    run.subscribers[0].attempts = [[0, 1, 1, 2]]


def _cancel_lost(run: RunRecord) -> None:
    _final(run, C, state=COMPLETED)


def _cancel_answered_active(run: RunRecord) -> None:
    run.cancels[0].attempts = [("r1", "WORKING")]


def _cancel_failed(run: RunRecord) -> None:
    _final(run, C, state=COMPLETED)
    run.cancels[0].attempts = [("r1", "error:UNAVAILABLE"), ("r2", "error:DEADLINE_EXCEEDED")]


CASES: dict[str, Callable[[RunRecord], None]] = {
    "lost": _lost,
    "ack_changed": _ack_changed,
    "stuck": _stuck,
    "slow_takeover": _slow_takeover,
    "double_execution": _double_execution,
    "step_after_end": _step_after_end,
    "stale_write": _stale_write,
    "version_gap": _version_gap,
    "push_out_of_order": _push_out_of_order,
    "push_after_terminal": _push_after_terminal,
    "push_missing": _push_missing,
    "subscriber_stuck": _subscriber_stuck,
    "stream_order": _stream_order,
    "cancel_lost": _cancel_lost,
    "cancel_failed": _cancel_failed,
}


def test_a_clean_run_has_no_violation() -> None:
    run = clean()
    assert check(run) == []
    assert takeover_times(run) == [2.0]


def test_every_kind_has_a_fabricated_case() -> None:
    assert set(CASES) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_caught(kind: str) -> None:
    run = clean()
    CASES[kind](run)
    found = check(run)
    assert {v.kind for v in found} == {kind}, [str(v) for v in found]
    assert all(v.task_id for v in found)


def test_stored_chunk_of_a_step_run_after_the_end_is_a_stale_write() -> None:
    """A fenced-off writer whose chunk landed: its step ran after the task ended."""
    run = clean()
    run.exec_log.append(ExecEntry(203.5, "step", B, "m-b", "r2", 22, 1))
    _final(run, B, chunks=("0@r2/22", "1@r2/22"))
    assert {v.kind for v in check(run)} == {"stale_write", "step_after_end"}


@pytest.mark.parametrize("faults", [[], [Fault("kill", "r2", 190.0, 191.0)]], ids=["no fault", "over before"])
def test_a_takeover_without_a_fault_is_spurious(faults: list[Fault]) -> None:
    """Counted, not a violation (a replica starved of CPU gets it too)."""
    run = clean()
    run.faults = faults
    assert takeover_times(run) == [] and check(run) == []
    assert [(v.kind, v.task_id) for v in spurious_takeovers(run)] == [("spurious_takeover", B)]
    assert summary(run, []).endswith(" spurious_takeovers=1")


def test_a_takeover_by_a_reaper_that_stalled_in_turn_is_the_executions() -> None:
    """r2 ran B and was killed; r3 took the lease over and stalled; r1 wrote
    FAILED naming r3: timed from r2's kill."""
    run = clean()
    _final(run, B, text="execution lost: replica r3 stopped while running the task", ended_at=204.0)
    assert takeover_times(run) == [3.0] and check(run) == [] and spurious_takeovers(run) == []


def test_an_execution_begun_during_the_fault_is_timed_from_its_begin() -> None:
    run = clean()
    run.faults = [Fault("partition", "r2", 199.0, 202.0)]
    assert takeover_times(run) == [3.0] and check(run) == []


def test_a_cancel_answered_with_an_active_task_is_lost() -> None:
    run = clean()
    _cancel_answered_active(run)
    assert [v.kind for v in check(run)] == ["cancel_lost"]


def test_a_cancel_that_lost_the_race_to_the_end_takes() -> None:
    """The task completed first and CancelTask answered it so: no violation."""
    run = clean()
    _final(run, C, state=COMPLETED)
    run.cancels[0].attempts = [("r2", "error:UNAVAILABLE"), ("r1", "COMPLETED")]
    assert check(run) == []


def test_summary_counts() -> None:
    run = clean()
    run.deliveries.append(run.deliveries[-1])  # the terminal notification accepted twice
    for kind in ("stuck", "push_after_terminal", "stream_order"):
        CASES[kind](run)
    line = summary(run, check(run))
    assert line.startswith(
        "CHAOS seed=3 bus=postgresql seconds=10 tasks=4 acked=2 ops=3 errors=0 faults=kill:1 "
    )
    assert "violations=3[push_after_terminal:1,stream_order:1,stuck:1]" in line
    assert line.endswith(
        "deliveries=5 duplicates=1 takeover_p50=2.00s takeover_max=2.00s (n=1) spurious_takeovers=0"
    )
    assert "violations=0 " in summary(clean(), [])
