"""The general mixed chaos run, once per bus (PostgreSQL LISTEN/NOTIFY and
Redis Streams): three replicas, the mixed workload, kill -9 / SIGSTOP /
partition / delay faults, then every invariant checked; it prints its
summary line. ``$CHAOS_SECONDS`` (default 40) is the budget of the two runs
together (CI gives it 300 or more); ``$CHAOS_SEED`` the seed; ``$CHAOS_KEEP`` a
directory to keep the replica logs, the execution log and faults.log in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.chaos.conftest import redis_skip_reason
from tests.chaos.invariants import summary
from tests.chaos.run import run_chaos

SECONDS = float(os.environ.get("CHAOS_SECONDS") or 40)
BUSES = ("postgresql", "redis")

pytestmark = [pytest.mark.chaos, pytest.mark.postgres, pytest.mark.timeout(SECONDS / len(BUSES) + 300)]


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="faults 2 and 8 (and 1) show up in the mixed run today: webhooks set on another replica never "
    "fire (push_missing), a paused or cut-off replica's agent steps after its task ended elsewhere "
    "(step_after_end), a replica that served after a black hole lost its tasks' leases (slow takeovers; "
    "spurious_takeovers in the summary)",
)
@pytest.mark.parametrize("bus", BUSES)
async def test_mixed_chaos(bus: str, seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if bus == "redis" and (reason := redis_skip_reason()):
        pytest.skip(reason)
    logs = Path(os.environ["CHAOS_KEEP"]) / bus if os.environ.get("CHAOS_KEEP") else tmp_path
    run, violations = await run_chaos(logs, seed=seed, seconds=SECONDS / len(BUSES), bus=bus)
    line = summary(run, violations)
    with capsys.disabled():
        print(f"\n{line}")
    assert run.acks, "the workload was never answered"
    assert not violations, "\n".join([line, *map(str, violations[:30])])
