"""The one ProtoJSON codec: output rules and input errors."""

from __future__ import annotations

import json

import pytest
from google.protobuf import timestamp_pb2

from a2a_grpc.core._executor import data_part, file_part, text_part
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb


def _ts(seconds: int, nanos: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)


def test_list_tasks_response_fields_are_always_present():
    assert json.loads(protojson.to_json(pb.ListTasksResponse())) == {
        "tasks": [],
        "nextPageToken": "",
        "pageSize": 0,
        "totalSize": 0,
    }


def test_defaults_without_required_stay_omitted():
    # Not a global always-print: Task.artifacts / history (not REQUIRED) are absent.
    out = protojson.to_dict(pb.Task(id="t", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)))
    assert out == {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}
    # An optional field set to its default keeps its presence.
    req = protojson.to_dict(pb.ListTasksRequest(page_size=0, include_artifacts=False))
    assert req == {"pageSize": 0, "includeArtifacts": False}


def test_required_fields_inside_nested_messages():
    card = pb.AgentCard(name="n", capabilities=pb.AgentCapabilities())
    card.skills.add(id="s", name="S")
    out = protojson.to_dict(card)
    assert out["description"] == ""
    assert out["supportedInterfaces"] == []
    assert out["defaultInputModes"] == []
    assert out["skills"] == [{"id": "s", "name": "S", "description": "", "tags": []}]
    msg = protojson.to_dict(pb.StreamResponse(message=pb.Message(message_id="m")))
    assert msg == {"message": {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": []}}


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "2026-11-30T12:00:00.000Z"),
        (5_000_000, "2026-11-30T12:00:00.005Z"),
        (123_456_000, "2026-11-30T12:00:00.123Z"),
        (123_456_789, "2026-11-30T12:00:00.123Z"),
        (999_999_999, "2026-11-30T12:00:00.999Z"),
    ],
)
def test_timestamps_have_exactly_milliseconds(nanos, text):
    seconds = 1796040000  # 2026-11-30T12:00:00Z
    task = pb.Task(id="t", status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED, timestamp=_ts(seconds, nanos)))
    assert protojson.to_dict(task)["status"]["timestamp"] == text
    # Also inside lists and oneofs.
    page = pb.ListTasksResponse(tasks=[task, task])
    assert [t["status"]["timestamp"] for t in protojson.to_dict(page)["tasks"]] == [text, text]
    event = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(status=task.status))
    assert protojson.to_dict(event)["statusUpdate"]["status"]["timestamp"] == text


def test_timestamp_like_strings_in_free_form_json_are_untouched():
    part = data_part({"when": "2026-11-30T12:00:00Z"})
    assert protojson.to_dict(part)["data"] == {"when": "2026-11-30T12:00:00Z"}


def test_unicode_is_raw_utf8_and_line_separators_are_escaped():
    text = "中文 😀 é \u2028 \u2029 \n end"
    out = protojson.to_json(pb.Message(message_id="m", role=pb.ROLE_USER, parts=[text_part(text)]))
    assert "中文 😀 é" in out
    assert "\u2028" not in out and "\u2029" not in out
    assert "\\u2028" in out and "\\u2029" in out
    assert "\n" not in out and "\r" not in out  # one SSE data: line
    assert json.loads(out)["parts"][0]["text"] == text


def test_bytes_are_base64_and_enums_are_names():
    out = protojson.to_dict(pb.Part(raw=b"\x00\xff\x10", media_type="application/octet-stream"))
    assert out == {"raw": "AP8Q", "mediaType": "application/octet-stream"}
    assert protojson.to_dict(pb.Message(role=pb.ROLE_AGENT))["role"] == "ROLE_AGENT"


def test_roundtrip_of_a_full_task():
    task = pb.Task(
        id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING, timestamp=_ts(1, 0))
    )
    task.history.add(message_id="m", role=pb.ROLE_USER, parts=[text_part("x"), file_part(b"\x01" * 100)])
    task.artifacts.add(artifact_id="a", parts=[data_part([1, "two", None])])
    task.metadata.update({"k": {"nested": True}})
    back = protojson.parse(json.loads(protojson.to_json(task)), pb.Task())
    assert back == task


def test_parse_ignores_unknown_fields_and_accepts_proto_names():
    req = protojson.parse({"id": "t1", "historyLength": 3, "futureField": {"x": 1}}, pb.GetTaskRequest())
    assert req.id == "t1" and req.history_length == 3
    req = protojson.parse({"history_length": 2}, pb.GetTaskRequest())
    assert req.history_length == 2


def test_parse_error_names_the_field_in_proto_names():
    with pytest.raises(A2AError) as exc:
        protojson.parse({"message": {"messageId": "m", "parts": [{"text": 1}]}}, pb.SendMessageRequest())
    err = exc.value
    assert err.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in err.field_violations] == ["message.parts.text"]
    with pytest.raises(A2AError) as exc:
        protojson.parse({"historyLength": "many"}, pb.GetTaskRequest())
    assert exc.value.field_violations[0].field == "history_length"
    with pytest.raises(A2AError) as exc:
        protojson.parse(["not", "an", "object"], pb.GetTaskRequest())
    assert exc.value.code is ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("body", [b"{", b"", b"NaN", b'{"a": Infinity}', b"\xff\xfe\x00", b"[" * 100000])
def test_loads_rejects_what_is_not_json(body):
    with pytest.raises(A2AError) as exc:
        protojson.loads(body)
    assert exc.value.code is ErrorCode.PARSE_ERROR


def test_dumps_is_compact():
    assert protojson.dumps({"a": [1, 2], "b": "é"}) == '{"a":[1,2],"b":"é"}'


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"message": "hello"}, "message"),
        ({"message": {"parts": "abc"}}, "message.parts"),
        ({"message": {"parts": ["abc"]}}, "message.parts"),
        ({"message": {"extensions": "urn:x"}}, "message.extensions"),
        ({"message": {"metadata": [1]}}, "message.metadata"),
        ({"metadata": "x"}, "metadata"),
        ({"configuration": {"taskPushNotificationConfig": 1}}, "configuration.task_push_notification_config"),
    ],
)
def test_parse_refuses_wrong_json_shapes(obj, field):
    # json_format alone would iterate a string as an object or a list.
    with pytest.raises(A2AError) as exc:
        protojson.parse(obj, pb.SendMessageRequest())
    assert [v.field for v in exc.value.field_violations] == [field]


def test_parse_accepts_nulls_and_free_form_values():
    req = protojson.parse(
        {
            "message": {
                "messageId": "m",
                "parts": [{"data": "just a string"}, {"data": [1]}],
                "metadata": None,
            }
        },
        pb.SendMessageRequest(),
    )
    assert req.message.parts[0].data.string_value == "just a string"
