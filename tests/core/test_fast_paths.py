"""The request path's fast paths give the same answers as the plain ones they replaced."""

from __future__ import annotations

import time

from a2a_grpc.types import now_timestamp


def test_now_timestamp_is_the_current_whole_millisecond() -> None:
    for _ in range(200):
        before = time.time_ns() // 1_000_000
        ts = now_timestamp()
        after = time.time_ns() // 1_000_000
        millis = ts.seconds * 1000 + ts.nanos // 1_000_000
        assert ts.nanos % 1_000_000 == 0
        assert before <= millis <= after
        assert ts.ToJsonString().endswith("Z")
