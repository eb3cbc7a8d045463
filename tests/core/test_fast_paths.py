"""The request path's fast paths give the same answers as the plain ones they replaced."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from google.protobuf import message_factory

from a2a_grpc import validation
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import now_timestamp, pb
from tests.randmsg import fill


def test_now_timestamp_is_the_current_whole_millisecond() -> None:
    for _ in range(200):
        before = time.time_ns() // 1_000_000
        ts = now_timestamp()
        after = time.time_ns() // 1_000_000
        millis = ts.seconds * 1000 + ts.nanos // 1_000_000
        assert ts.nanos % 1_000_000 == 0
        assert before <= millis <= after
        assert ts.ToJsonString().endswith("Z")


# ---------------------------------------------------------------- validation plans


def _a2a_types() -> list[Any]:
    out: list[Any] = []

    def walk(desc: Any) -> None:
        if not desc.GetOptions().map_entry:
            out.append(desc)
            for nested in desc.nested_types:
                walk(nested)

    for desc in pb.DESCRIPTOR.message_types_by_name.values():
        walk(desc)
    return out


A2A_TYPES = _a2a_types()


def _violations(walk: Any, msg: Any) -> list[tuple[str, str]]:
    out: list[validation.FieldViolation] = []
    walk(msg, "", out)
    return [(v.field, v.description) for v in out]


@pytest.mark.parametrize("desc", A2A_TYPES, ids=[d.name for d in A2A_TYPES])
def test_validation_plans_find_the_same_violations_in_the_same_order(desc: Any) -> None:
    cls = message_factory.GetMessageClass(desc)
    rng = random.Random(desc.full_name)
    assert _violations(validation._walk, cls()) == _violations(validation._walk_reference, cls())
    for i in range(80):
        msg = fill(cls(), rng, depth=1 + i % 5)
        assert _violations(validation._walk, msg) == _violations(validation._walk_reference, msg), msg


def test_validation_plans_stop_at_the_violation_cap_like_the_walk() -> None:
    # Many empty parts and bad roles: the cap (20) is reached in the middle of a field.
    for n in (5, 9, 10, 11, 19, 20, 21, 30):
        msg = pb.Message(role=77, task_id="a/b", parts=[pb.Part() for _ in range(n)])
        req = pb.SendMessageRequest(message=msg, tenant="t:1")
        req.configuration.history_length = -1
        got = _violations(validation._walk, req)
        assert got == _violations(validation._walk_reference, req)
        assert len(got) >= min(n, 20)
    task = pb.Task(history=[pb.Message(parts=[pb.Part()] * 3) for _ in range(8)])
    assert _violations(validation._walk, task) == _violations(validation._walk_reference, task)


def test_validate_request_still_raises_invalid_params() -> None:
    with pytest.raises(A2AError) as err:
        validation.validate_request(pb.SendMessageRequest(message=pb.Message(parts=[pb.Part()])))
    assert err.value.code == ErrorCode.INVALID_PARAMS
    assert [v.field for v in err.value.field_violations] == [
        "message.message_id",
        "message.role",
        "message.parts[0]",
    ]
