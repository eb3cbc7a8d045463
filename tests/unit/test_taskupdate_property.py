"""A property of the pure task update, over seeded random event sequences:
applying valid events never moves a terminal task, and never drops a field
another writer set between events — applying an event again on the task as
the other writer left it (what the drive loop does after a lost write race)
gives the same task plus that writer's change."""

from __future__ import annotations

import random

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol._taskupdate import TaskEvent, apply_event, open_task
from a2a_grpc.types import is_terminal, pb

T, C = "task-p", "ctx-p"
NOW = Timestamp(seconds=1_800_000_000)
STATES = [s for s in pb.TaskState.values() if s != pb.TASK_STATE_UNSPECIFIED]
ARTIFACT_IDS = ["a", "b", "c"]


def random_event(rng: random.Random, n: int) -> TaskEvent:
    roll = rng.random()
    if roll < 0.4:
        event = pb.TaskStatusUpdateEvent(task_id=rng.choice([T, ""]), context_id=C)
        event.status.state = rng.choice(STATES)  # type: ignore[assignment]
        if rng.random() < 0.5:
            event.status.message.message_id = f"s{n}"  # fixed ids: the two applications agree
            event.status.message.parts.add(text=f"status {n}")
        if rng.random() < 0.3:
            event.status.timestamp.FromSeconds(1_700_000_000 + n)
        return event
    if roll < 0.85:
        art = pb.Artifact(artifact_id=rng.choice(ARTIFACT_IDS))
        for i in range(rng.randint(1, 3)):
            art.parts.add(text=f"part {n}.{i}")
        if rng.random() < 0.3:
            art.metadata.update({f"am{n}": n})
        return pb.TaskArtifactUpdateEvent(task_id=T, artifact=art, append=rng.random() < 0.6)
    snap = pb.Task(id=rng.choice([T, ""]), context_id=C)
    snap.status.state = rng.choice(STATES)  # type: ignore[assignment]
    for aid in rng.sample(ARTIFACT_IDS, rng.randint(0, 2)):
        snap.artifacts.add(artifact_id=aid).parts.add(text=f"snap {n}")
    return snap  # no metadata: it would replace the task's (a documented rule)


def copy(task: pb.Task) -> pb.Task:
    out = pb.Task()
    out.CopyFrom(task)
    return out


def without_metadata(task: pb.Task) -> pb.Task:
    out = copy(task)
    out.ClearField("metadata")
    return out


@pytest.mark.parametrize("seed", range(300))
def test_random_sequences_keep_terminal_final_and_other_writers_fields(seed: int) -> None:
    rng = random.Random(seed)
    user = pb.Message(message_id="u", role=pb.ROLE_USER, task_id=T, context_id=C, parts=[pb.Part(text="go")])
    stored = open_task(user, None, random_event(rng, 0), now=NOW)
    other: dict[str, float] = {}  # what the other writer set
    for n in range(1, rng.randint(2, 40)):
        event = random_event(rng, n)
        before = copy(stored)
        try:
            stale, stale_out = apply_event(before, event, now=NOW)
        except A2AError as err:
            # Every generated event is valid, so only a terminal task refuses it.
            assert err.code is ErrorCode.INVALID_AGENT_RESPONSE
            assert is_terminal(before.status.state), err.message
            assert stored == before  # and it does not move
            continue
        assert not is_terminal(before.status.state)
        if rng.random() < 0.5:
            # Another writer changes the task before this write lands: the
            # write conflicts, and the event is applied again on top.
            key = f"w{n}"
            stored.metadata.update({key: n})
            other[key] = n
            fresh, out = apply_event(stored, event, now=NOW)
            assert without_metadata(fresh) == without_metadata(stale)
            assert dict(fresh.metadata) == {**dict(stale.metadata), key: n}
            if out.HasField("task"):
                assert without_metadata(out.task) == without_metadata(stale_out.task)
            else:
                assert out == stale_out
        else:
            fresh = stale
        assert {k: fresh.metadata[k] for k in other} == other
        assert list(fresh.history)[: len(before.history)] == list(before.history)
        if not isinstance(event, pb.Task):
            # Content is never dropped: every artifact stays, appends only grow.
            kept = {a.artifact_id: len(a.parts) for a in before.artifacts}
            now_ = {a.artifact_id: len(a.parts) for a in fresh.artifacts}
            assert set(kept) <= set(now_)
            if isinstance(event, pb.TaskArtifactUpdateEvent) and event.append:
                aid = event.artifact.artifact_id
                assert now_[aid] == kept.get(aid, 0) + len(event.artifact.parts)
        stored = fresh
