"""The client's reading of A2A v0.3 cards and answers (``a2a_grpc.client._v03``):
pure conversions, no server (the live ones are tests/interop/test_sdk03_server.py)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_grpc.client import A2AError, ErrorCode, matching_interfaces, parse_card
from a2a_grpc.client._v03 import lenient_timestamp, params_down, trim_history, up_answer
from a2a_grpc.dialects._v03 import METHODS
from a2a_grpc.types import pb


def v03_card(**extra: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "Old",
        "description": "a v0.3 agent",
        "version": "2.1",
        "protocolVersion": "0.3.0",
        "url": "http://h/rpc",
        "capabilities": {"streaming": True, "stateTransitionHistory": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": [], "security": [{"key": []}]}],
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "bearer": {"type": "http", "scheme": "bearer"},
        },
        "security": [{"bearer": []}],
    }
    card.update(extra)
    return card


def test_v03_card_endpoints_become_interfaces() -> None:
    card = parse_card(
        v03_card(
            preferredTransport="JSONRPC",
            additionalInterfaces=[
                {"url": "http://h/rpc", "transport": "JSONRPC"},  # the main pair again (prose §5.6.2)
                {"url": "h:50051", "transport": "GRPC"},
            ],
            supportsAuthenticatedExtendedCard=True,
        )
    )
    assert [(i.protocol_binding, i.url, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", "http://h/rpc", "0.3"),
        ("GRPC", "h:50051", "0.3"),
    ]
    assert card.capabilities.extended_agent_card
    assert not matching_interfaces(card, ["jsonrpc"])  # not 1.0
    assert matching_interfaces(card, ["grpc"], version="0.3")[0].url == "h:50051"


def test_v03_card_security_is_read_in_the_v03_shape() -> None:
    card = parse_card(v03_card())
    assert card.security_schemes["key"].api_key_security_scheme.location == "header"
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "bearer"
    assert list(card.security_requirements[0].schemes) == ["bearer"]
    assert list(card.skills[0].security_requirements[0].schemes) == ["key"]


def test_v03_card_without_preferred_transport_is_jsonrpc() -> None:
    card = parse_card(v03_card())
    assert [(i.protocol_binding, i.url) for i in card.supported_interfaces] == [("JSONRPC", "http://h/rpc")]


def test_bad_v03_card_is_an_invalid_agent_response() -> None:
    with pytest.raises(A2AError) as info:
        parse_card(v03_card(securitySchemes={"x": {"type": "kerberos"}}))
    assert info.value.code is ErrorCode.INVALID_AGENT_RESPONSE
    with pytest.raises(A2AError) as info:
        parse_card({k: v for k, v in v03_card().items() if k != "name"})
    assert "name" in info.value.message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2025-07-31T10:00:00Z", "2025-07-31T10:00:00Z"),  # already RFC 3339: kept
        ("2025-07-31T10:00:00", "2025-07-31T10:00:00.000000Z"),  # no zone: UTC
        ("2025-07-31T12:00:00.25+02:00", "2025-07-31T12:00:00.25+02:00"),  # RFC 3339 with an offset: kept
        ("2025-07-31 12:00:00+02:00", "2025-07-31T10:00:00.000000Z"),
        ("yesterday", None),
    ],
)
def test_lenient_timestamps(raw: str, expected: str | None) -> None:
    assert lenient_timestamp(raw) == expected


def test_unreadable_timestamp_is_left_out_and_unknown_state_refused() -> None:
    task = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working", "timestamp": "soon"}}
    assert "timestamp" not in up_answer("Task", task, "tasks/get")["status"]
    task["status"] = {"state": "unknown"}
    with pytest.raises(A2AError) as info:
        up_answer("SendMessageResponse", task, "message/send")
    assert info.value.code is ErrorCode.INVALID_AGENT_RESPONSE
    assert info.value.metadata == {"taskId": "t"}


def test_final_is_dropped_and_kinds_unwrap() -> None:
    event = {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "final": True,
        "status": {"state": "input-required"},
    }
    assert up_answer("StreamResponse", event, "message/stream") == {
        "statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}
    }


def test_requests_go_down_without_history_zero_or_pages() -> None:
    req = pb.SendMessageRequest(
        message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="x")])
    )
    req.configuration.history_length = 0
    req.configuration.return_immediately = True
    params = params_down(METHODS["message/send"], req)
    assert params["configuration"] == {"blocking": False}  # C6, C7
    assert params["message"]["kind"] == "message"
    listing = pb.ListTaskPushNotificationConfigsRequest(task_id="t", page_size=5, page_token="p")
    assert params_down(METHODS["tasks/pushNotificationConfig/list"], listing) == {"id": "t"}


def test_history_is_trimmed_to_the_requested_length() -> None:
    task = pb.Task(id="t", history=[pb.Message(message_id=str(i)) for i in range(3)])
    req = pb.GetTaskRequest(id="t", history_length=1)
    assert [m.message_id for m in trim_history(req, task).history] == ["2"]  # type: ignore[attr-defined]
    untouched = pb.Task(id="t", history=[pb.Message(message_id="a")])
    assert len(trim_history(pb.GetTaskRequest(id="t"), untouched).history) == 1  # type: ignore[attr-defined]
