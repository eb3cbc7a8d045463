"""Freed memory is handed back after large tasks, at most once a second."""

from __future__ import annotations

import asyncio

from a2a_grpc.core import _memtrim as memtrim


async def test_release_after_large_tasks_only_and_rate_limited() -> None:
    memtrim._last[0] = 0.0
    assert not memtrim.release_after(memtrim.LARGE_TASK_BYTES - 1)
    if memtrim._TRIM is None:  # not glibc: nothing to trim
        assert not memtrim.release_after(memtrim.LARGE_TASK_BYTES)
        return
    assert memtrim.release_after(memtrim.LARGE_TASK_BYTES)
    assert not memtrim.release_after(memtrim.LARGE_TASK_BYTES)  # within a second of the last
    await asyncio.sleep(0.05)
