"""The event bus bounds a stalled subscriber in bytes as well as events (issue 10, item 8)."""

from __future__ import annotations

import pytest

from a2a_grpc.core._events import EventBus
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

#: A task of the bus tests: (tenant, user, task id).
KEY = ("", "", "t")


def _event(i: int, size: int) -> pb.StreamResponse:
    art = pb.Artifact(artifact_id="a", parts=[pb.Part(text=f"{i:08d}" + "x" * size)])
    return pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(task_id="t", artifact=art))


async def test_stalled_subscriber_pins_at_most_the_byte_limit() -> None:
    limit = 1024 * 1024
    bus = EventBus(buffer=1024, buffer_bytes=limit)
    stalled = bus.subscribe(KEY)
    for i in range(200):  # 200 × 64 KiB = 12.5 MiB published
        bus.publish(KEY, i + 1, _event(i, 64 * 1024))
        assert stalled.pending_bytes <= limit
    assert bus.subscriber_count(KEY) == 0  # closed at the overflow
    got = []
    with pytest.raises(A2AError) as info:
        async for _version, ev in stalled:
            got.append(int(ev.artifact_update.artifact.parts[0].text[:8]))
    assert info.value.code == ErrorCode.RESOURCE_EXHAUSTED
    assert f"{limit} bytes" in info.value.message
    assert got == list(range(len(got))) and 10 <= len(got) <= 16


async def test_one_event_larger_than_the_limit_still_reaches_an_empty_buffer() -> None:
    bus = EventBus(buffer_bytes=1024)
    sub = bus.subscribe(KEY)
    bus.publish(KEY, 1, _event(0, 4096), last=True)
    got = [v async for v, _ev in sub]
    assert got == [1]
