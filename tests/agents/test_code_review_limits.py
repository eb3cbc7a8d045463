"""The code-review agent's limits (issue 10, item 13): a working status at
least every PROGRESS_SECONDS while a step runs, and a per-review time limit."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest

from a2a_grpc.agents import _code_review as code_review
from a2a_grpc.agents._code_review import CodeReviewAgent, build_card
from a2a_grpc.core._executor import text_part
from a2a_grpc.types import pb
from tests.agents.helpers import diff_text, make_ctx, user_message


@pytest.fixture
def slow_ruff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """ruff takes ``delay[0]`` seconds longer than it does."""
    delay = [0.0]
    real = code_review.run_ruff

    async def slow(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(delay[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(code_review, "run_ruff", slow)
    return delay


async def _timed_events(ctx: Any) -> list[tuple[float, Any]]:
    start = time.monotonic()
    return [(time.monotonic() - start, ev) async for ev in CodeReviewAgent().execute(ctx)]


async def test_a_slow_step_sends_working_statuses_every_few_seconds(monkeypatch, slow_ruff) -> None:
    monkeypatch.setattr(code_review, "PROGRESS_SECONDS", 0.1)
    slow_ruff[0] = 0.65
    events = await _timed_events(make_ctx(user_message(text_part(diff_text("sql_injection.diff")))))
    statuses = [ev for _, ev in events if isinstance(ev, pb.TaskStatusUpdateEvent)]
    beats = [s for s in statuses if "with ruff," in s.status.message.parts[0].text]
    assert len(beats) >= 4, [s.status.message.parts[0].text for s in statuses]
    assert all(s.status.state == pb.TASK_STATE_WORKING for s in beats)
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(events)]
    assert max(gaps) < 0.4, gaps
    assert statuses[-1].status.state == pb.TASK_STATE_COMPLETED


async def test_a_review_past_its_time_limit_fails_saying_so(monkeypatch, slow_ruff) -> None:
    monkeypatch.setattr(code_review, "REVIEW_SECONDS", 0.3)
    slow_ruff[0] = 5.0
    start = time.monotonic()
    events = await _timed_events(make_ctx(user_message(text_part(diff_text("sql_injection.diff")))))
    assert time.monotonic() - start < 2
    last = events[-1][1]
    assert last.status.state == pb.TASK_STATE_FAILED
    assert "longer than its limit of 0.3 s" in last.status.message.parts[0].text


def test_the_card_states_the_limits() -> None:
    text = build_card().skills[0].description
    assert "4,194,304 characters" in text and "5,000 hunks" in text and "120 s per review" in text
    assert code_review.MAX_DIFF_BYTES == 4_194_304 and code_review.MAX_HUNKS == 5000
