"""Strict mode (on for the whole test session, see tests/conftest.py) and the
input rules the compiled decoder now holds itself: a hand-over to json_format
that is not by design raises; invalid input still answers InvalidParams;
unknown enum names are refused, unknown numbers kept for validation."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol.protojson import _decode as decode
from a2a_grpc.protocol.protojson import _encode as encode
from a2a_grpc.types import pb


def test_the_session_runs_strict() -> None:
    assert protojson.strict()


def _declining(*args: Any) -> Any:
    raise decode._Decline


def test_a_decoder_gap_raises_in_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode._DECODERS, "get", lambda desc: _declining)
    with pytest.raises(protojson.CompilerGap, match=r"lf\.a2a\.v1\.GetTaskRequest"):
        protojson.parse({"id": "t"}, pb.GetTaskRequest())
    monkeypatch.setattr(protojson._reference, "_strict", [False])
    assert protojson.parse({"id": "t"}, pb.GetTaskRequest()) == pb.GetTaskRequest(id="t")


def test_an_encoder_gap_raises_in_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    def declining(msg: Any) -> Any:
        raise encode._Decline

    monkeypatch.setattr(encode._ENCODERS, "get", lambda desc: declining)
    with pytest.raises(protojson.CompilerGap, match=r"lf\.a2a\.v1\.Task\b"):
        protojson.to_dict(pb.Task(id="t"))
    monkeypatch.setattr(protojson._reference, "_strict", [False])
    assert protojson.to_dict(pb.Task(id="t")) == {"id": "t"}


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"pageSize": "ten"}, "page_size"),
        ({"pageSize": 1.5}, "page_size"),
        ({"pageSize": 2**31}, "page_size"),
        ({"includeArtifacts": "yes"}, "include_artifacts"),
        ({"status": "TASK_STATE_RUNNING"}, "status"),
        ({"status": [1]}, "status"),
    ],
)
def test_invalid_input_is_invalid_params_in_strict_mode(obj: dict[str, Any], field: str) -> None:
    for parse in (protojson.parse, protojson.parse_reference):
        with pytest.raises(A2AError) as exc:
            parse(obj, pb.ListTasksRequest())
        assert exc.value.code is ErrorCode.INVALID_PARAMS
        assert [v.field for v in exc.value.field_violations] == [field]


def test_unknown_enum_names_are_refused_wherever_the_enum_is() -> None:
    with pytest.raises(A2AError) as exc:
        protojson.parse({"status": "TASK_STATE_RUNNING"}, pb.ListTasksRequest())
    assert exc.value.field_violations[0].description == "unknown TaskState value TASK_STATE_RUNNING"
    with pytest.raises(A2AError) as exc:
        protojson.parse({"message": {"role": "ROLE_ROBOT"}}, pb.SendMessageRequest(), prefix="params")
    assert [v.field for v in exc.value.field_violations] == ["params.message.role"]


def test_unknown_enum_numbers_are_kept_for_validation() -> None:
    # As on gRPC, where TaskState is an open enum: validation refuses the value.
    assert protojson.parse({"status": 99}, pb.ListTasksRequest()).status == 99
    assert protojson.parse({"status": "99"}, pb.ListTasksRequest()).status == 99


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        ({"pageSize": "7"}, pb.ListTasksRequest(page_size=7)),
        ({"pageSize": 7.0}, pb.ListTasksRequest(page_size=7)),
        ({"pageSize": "1e1"}, pb.ListTasksRequest(page_size=10)),
        ({"status": 3}, pb.ListTasksRequest(status=pb.TASK_STATE_COMPLETED)),
        ({"status": None, "contextId": None}, pb.ListTasksRequest()),
        ({"context_id": "a", "contextId": "b"}, pb.ListTasksRequest(context_id="b")),
    ],
)
def test_the_compiled_decoder_takes_every_spelling_itself(obj: dict[str, Any], want: Any) -> None:
    # Strict mode: a hand-over to json_format would raise CompilerGap here.
    assert protojson.parse(obj, pb.ListTasksRequest()) == want
