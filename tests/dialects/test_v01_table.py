"""The v0.1 table (a2a_grpc/dialects/_v01.py) on its own: the object shapes of legacy digest §5 and
one test per lossy case it touches (C3, C7, C9, C14, C15, C16, C17, C19; choices in docs/dialects.md)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_grpc.dialects import _v01 as v01
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb


def up_send(params: dict[str, Any]) -> pb.SendMessageRequest:
    return protojson.parse(v01.DIALECT.up("SendMessageRequest", params), pb.SendMessageRequest())


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def test_task_send_params_go_up_onto_the_message() -> None:
    req = up_send(
        {
            "id": "task-1",
            "sessionId": "session-1",
            "message": user({"type": "text", "text": "hi"}, {"data": {"a": 1}}),
            "historyLength": 0,
            "pushNotification": {"url": "https://example.com/h", "authentication": {"schemes": ["Bearer"]}},
            "metadata": {"k": "v"},
        }
    )
    assert (req.message.task_id, req.message.context_id) == ("task-1", "session-1")
    assert req.message.message_id  # C17: minted
    assert req.message.metadata.fields[v01.DIALECT_KEY].string_value == "0.1"
    assert [p.WhichOneof("content") for p in req.message.parts] == ["text", "data"]  # "type" may be omitted
    assert not req.configuration.HasField("history_length")  # C7: 0 is "none asked", i.e. unset
    assert req.configuration.task_push_notification_config.url == "https://example.com/h"
    assert req.configuration.task_push_notification_config.authentication.scheme == "Bearer"
    assert req.metadata.fields["k"].string_value == "v"


@pytest.mark.parametrize("task_id", ["", "a/b", "a:b", "a b", "é", "x" * 257, None, 3])
def test_client_task_ids_must_be_url_safe(task_id: Any) -> None:
    with pytest.raises(A2AError) as info:
        up_send({"id": task_id, "message": user({"type": "text", "text": "x"})})
    assert info.value.code is ErrorCode.INVALID_PARAMS
    assert info.value.field_violations[0].field == "params.id"


def test_task_goes_down_in_the_v01_shape() -> None:
    message = up_send({"id": "t", "message": user({"type": "text", "text": "hi"})}).message
    task = pb.Task(
        id="t",
        context_id="c",
        status=pb.TaskStatus(state=pb.TASK_STATE_AUTH_REQUIRED),
        artifacts=[
            pb.Artifact(
                artifact_id="x", parts=[pb.Part(raw=b"\x00", media_type="image/png", filename="a.png")]
            ),
            pb.Artifact(artifact_id="y", name="second", parts=[pb.Part(url="https://example.com/f")]),
        ],
        history=[message],
    )
    out = v01.task(protojson.to_dict(task))
    assert out["id"] == "t" and out["sessionId"] == "c" and "contextId" not in out
    assert out["status"] == {"state": "input-required"}  # C19
    assert out["artifacts"] == [
        {
            "parts": [{"type": "file", "file": {"bytes": "AA==", "mimeType": "image/png", "name": "a.png"}}],
            "index": 0,
        },
        {"name": "second", "parts": [{"type": "file", "file": {"uri": "https://example.com/f"}}], "index": 1},
    ]  # C16: index = position, no artifactId
    assert out["history"] == [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]  # C17, marker off
    assert v01.is_v01_task(protojson.to_dict(task))
    assert "history" not in v01.task(protojson.to_dict(task), history=False)


@pytest.mark.parametrize(
    ("state", "legacy"),
    [
        (pb.TASK_STATE_REJECTED, "failed"),
        (pb.TASK_STATE_AUTH_REQUIRED, "input-required"),
        (pb.TASK_STATE_CANCELED, "canceled"),
        (pb.TASK_STATE_SUBMITTED, "submitted"),
    ],
)
def test_states_v01_has_and_has_not(state: int, legacy: str) -> None:
    status = protojson.to_dict(pb.TaskStatus(state=state))  # type: ignore[arg-type]
    assert v01.DIALECT.down("TaskStatus", status)["state"] == legacy


def test_unknown_state_is_refused_going_up() -> None:  # C9
    with pytest.raises(A2AError) as info:
        v01.DIALECT.up("TaskStatus", {"state": "unknown"})
    assert info.value.code is ErrorCode.INVALID_PARAMS
    assert v01.DIALECT.up("TaskStatus", {"state": "failed"}) == {"state": "TASK_STATE_FAILED"}
    assert v01.DIALECT.up("TaskStatus", {"state": "input-required"}) == {"state": "TASK_STATE_INPUT_REQUIRED"}


def test_events_index_artifacts_by_first_appearance_and_end_final() -> None:  # C16, C2
    events = v01.Events()
    task = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED))
    out = events.down(protojson.to_dict(pb.StreamResponse(task=task)))
    assert out == [{"id": "t", "status": {"state": "submitted"}, "final": False}]
    seen = []
    for artifact_id, append, last in (("b", False, False), ("a", False, True), ("b", True, True)):
        update = pb.TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=pb.Artifact(artifact_id=artifact_id, parts=[pb.Part(text=artifact_id)]),
            append=append,
            last_chunk=last,
        )
        (event,) = events.down(protojson.to_dict(pb.StreamResponse(artifact_update=update)))
        assert set(event) == {"id", "artifact"}
        seen.append((event["artifact"]["index"], event["artifact"].get("append", False)))
    assert seen == [(0, False), (1, False), (0, True)]
    assert events.closing() == {"id": "t", "status": {"state": "submitted"}, "final": True}
    done = pb.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED)
    )
    (final,) = events.down(protojson.to_dict(pb.StreamResponse(status_update=done)))
    assert final == {"id": "t", "status": {"state": "completed"}, "final": True}
    assert events.closing() is None


@pytest.mark.parametrize(
    ("code", "legacy"),
    [
        (ErrorCode.TASK_NOT_FOUND, -32001),
        (ErrorCode.TASK_NOT_CANCELABLE, -32002),
        (ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED, -32003),
        (ErrorCode.UNSUPPORTED_OPERATION, -32004),
        (ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, -32004),
        (ErrorCode.INVALID_AGENT_RESPONSE, -32603),
        (ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED, -32004),
        (ErrorCode.EXTENSION_SUPPORT_REQUIRED, -32004),
        (ErrorCode.VERSION_NOT_SUPPORTED, -32004),
        (ErrorCode.INVALID_PARAMS, -32602),
    ],
)
def test_error_codes_stay_within_the_v01_schema(code: ErrorCode, legacy: int) -> None:  # C14
    out = v01.error_object(A2AError(code, "why", metadata={"taskId": "t"}))
    assert out == {"code": legacy, "message": "why", "data": {"reason": code.reason, "taskId": "t"}}


def test_card_names_the_schemes_and_keeps_the_v1_fields() -> None:  # §5.7, C15
    card = pb.AgentCard(name="A", version="1", capabilities=pb.AgentCapabilities(streaming=True))
    card.supported_interfaces.add(url="http://h/rpc", protocol_binding="JSONRPC", protocol_version="1.0")
    card.security_schemes["basic"].http_auth_security_scheme.scheme = "basic"
    card.security_schemes[
        "jwt"
    ].open_id_connect_security_scheme.open_id_connect_url = "https://i/.well-known/o"
    card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
    card.security_schemes["oauth"].oauth2_security_scheme.SetInParent()
    card.security_schemes["key"].api_key_security_scheme.name = "X-API-Key"
    out = v01.card(protojson.to_dict(card), "http://fallback/")
    assert out["authentication"] == {"schemes": ["ApiKey", "Basic", "Bearer", "OAuth2"]}
    assert out["url"] == "http://h/rpc"  # the JSON-RPC interface: the v0.1 methods are served there
    assert out["capabilities"] == {"streaming": True, "stateTransitionHistory": False}
    assert out["supportedInterfaces"] and out["name"] == "A" and out["version"] == "1"
    del card.supported_interfaces[:]
    assert v01.card(protojson.to_dict(card), "http://fallback/")["url"] == "http://fallback/"


def test_push_body_is_the_v01_task_snapshot() -> None:  # C21 (the hook)
    task = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    task.history.add(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="x")])
    assert v01.push_body(protojson.to_dict(task)) == {
        "id": "t",
        "sessionId": "c",
        "status": {"state": "working"},
    }
