"""Request fields from query parameters and path variables (spec §11.5)."""

from __future__ import annotations

import pytest
from multidict import MultiDict
from yarl import URL

from a2a_grpc.bindings._http.query import apply_query, set_field
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb


def _query(qs: str) -> MultiDict[str]:
    # Decoded exactly as aiohttp decodes request.query.
    return MultiDict(URL("/x?" + qs).query)


def test_list_tasks_from_camel_case_names():
    req = pb.ListTasksRequest()
    apply_query(
        req,
        _query(
            "contextId=c%201&status=TASK_STATE_WORKING&pageSize=50&pageToken=abc%3D&historyLength=0"
            "&statusTimestampAfter=2025-11-09T10%3A30%3A00Z&includeArtifacts=true"
        ),
    )
    assert req.context_id == "c 1"
    assert req.status == pb.TASK_STATE_WORKING
    assert req.page_size == 50
    assert req.page_token == "abc="
    assert req.HasField("history_length") and req.history_length == 0
    assert req.status_timestamp_after.ToJsonString() == "2025-11-09T10:30:00Z"
    assert req.HasField("include_artifacts") and req.include_artifacts is True


def test_proto_names_enum_numbers_and_offsets():
    req = pb.ListTasksRequest()
    apply_query(
        req,
        _query(
            "context_id=c&status=3&include_artifacts=false&status_timestamp_after=2025-11-09T12:30:00%2B02:00"
        ),
    )
    assert req.context_id == "c"
    assert req.status == 3
    assert req.HasField("include_artifacts") and req.include_artifacts is False
    assert req.status_timestamp_after.ToJsonString() == "2025-11-09T10:30:00Z"


def test_repeated_fields_as_repeated_keys_or_comma_lists():
    req = pb.SendMessageRequest()
    apply_query(
        req,
        _query(
            "configuration.acceptedOutputModes=text/plain,application/json&configuration.acceptedOutputModes=image/png"
        ),
    )
    assert list(req.configuration.accepted_output_modes) == ["text/plain", "application/json", "image/png"]


def test_unknown_parameters_and_the_version_parameter_are_ignored():
    req = pb.GetTaskRequest(id="t")
    apply_query(req, _query("A2A-Version=1.0&somethingElse=1&historyLength=2"))
    assert req == pb.GetTaskRequest(id="t", history_length=2)


def test_path_bound_fields_are_not_overridden_by_the_query():
    req = pb.GetTaskRequest()
    set_field(req, "id", "from-path")
    apply_query(req, _query("id=from-query"), bound=["id"])
    assert req.id == "from-path"


@pytest.mark.parametrize(
    ("qs", "field"),
    [
        ("pageSize=ten", "page_size"),
        ("pageSize=99999999999", "page_size"),
        ("historyLength=1.5", "history_length"),
        ("status=TASK_STATE_BORED", "status"),
        ("status=42", "status"),
        ("includeArtifacts=yes", "include_artifacts"),
        ("statusTimestampAfter=yesterday", "status_timestamp_after"),
        ("pageSize=1&pageSize=2", "page_size"),
    ],
)
def test_bad_values_are_invalid_params_with_a_field_violation(qs, field):
    with pytest.raises(A2AError) as exc:
        apply_query(pb.ListTasksRequest(), _query(qs))
    assert exc.value.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in exc.value.field_violations] == [field]
    status = exc.value.to_status()
    assert any(d.type_url.endswith("google.rpc.BadRequest") for d in status.details)


def test_nested_objects_cannot_come_from_the_query():
    with pytest.raises(A2AError) as exc:
        apply_query(pb.SendMessageRequest(), _query("message=x"))
    assert exc.value.field_violations[0].field == "message"
    with pytest.raises(A2AError):
        apply_query(pb.SendMessageRequest(), _query("metadata=x"))


def test_set_field_for_path_variables():
    req = pb.GetTaskPushNotificationConfigRequest()
    set_field(req, "task_id", "t/1")
    set_field(req, "tenant", "acme")
    assert (req.task_id, req.tenant) == ("t/1", "acme")
    with pytest.raises(A2AError) as exc:
        set_field(req, "nope", "x")
    assert exc.value.code is ErrorCode.INTERNAL
