"""The v0.3 table (a2a_grpc/dialects/_v03.py) on its own: one test per lossy
case of legacy digest §7 (the choices are documented in docs/dialects.md).
The round trip over random v1.0 objects is tests/dialects/test_roundtrip_v03.py."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from a2a_grpc.dialects._v03 import (
    DIALECT,
    METHODS,
    WRAPPED_KEY,
    error_object,
    final_of,
    hybrid_card,
    legacy_card,
)
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb


def test_states_and_roles_are_the_v03_strings() -> None:
    task = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_INPUT_REQUIRED))
    msg = task.history.add(message_id="m", role=pb.ROLE_AGENT)
    msg.parts.add(text="x")
    out = DIALECT.down("Task", protojson.to_dict(task))
    assert out["kind"] == "task" and out["status"] == {"state": "input-required"}
    assert out["history"][0]["role"] == "agent" and out["history"][0]["kind"] == "message"
    assert (
        DIALECT.down("Task", protojson.to_dict(pb.Task(status=pb.TaskStatus(state=pb.TASK_STATE_CANCELED))))[
            "status"
        ]["state"]
        == "canceled"
    )


def test_c1_several_schemes_keep_the_first_and_an_empty_list_drops_it() -> None:
    up = DIALECT.up("AuthenticationInfo", {"schemes": ["Bearer", "Basic"], "credentials": "x"})
    assert up == {"scheme": "Bearer", "credentials": "x"}
    assert DIALECT.up("AuthenticationInfo", {"schemes": []}) == {}
    assert DIALECT.down("AuthenticationInfo", {"scheme": "Bearer"}) == {"schemes": ["Bearer"]}


def test_c2_final_is_computed() -> None:
    def ev(state: str) -> dict[str, Any]:
        return {"status": {"state": state}}

    assert final_of(ev("completed"), closes_on_interrupt=False)
    assert final_of(ev("input-required"), closes_on_interrupt=True)
    assert not final_of(ev("input-required"), closes_on_interrupt=False)
    assert not final_of(ev("working"), closes_on_interrupt=True)
    # inbound ``final`` is ignored (no v1.0 field)
    assert "final" not in DIALECT.up(
        "TaskStatusUpdateEvent",
        {"kind": "status-update", "taskId": "t", "final": True, "status": {"state": "working"}},
    )


@pytest.mark.parametrize("value", [[1, 2], "s", 3.5, True, None])
def test_c4_non_object_data_is_wrapped_and_unwrapped(value: Any) -> None:
    part = pb.Part()
    json_format.ParseDict({"data": value}, part)
    legacy = DIALECT.down("Part", protojson.to_dict(part))
    assert legacy["data"] == {"value": value} and legacy["metadata"] == {WRAPPED_KEY: False}
    assert protojson.parse(DIALECT.up("Part", legacy), pb.Part()) == part


def test_c5_media_type_of_a_text_part_is_dropped_and_file_fields_kept() -> None:
    assert DIALECT.down("Part", {"text": "a", "mediaType": "text/plain"}) == {"kind": "text", "text": "a"}
    raw = {"raw": "AAE=", "mediaType": "application/octet-stream", "filename": "b.bin"}
    legacy = DIALECT.down("Part", raw)
    assert legacy == {
        "kind": "file",
        "file": {"bytes": "AAE=", "mimeType": "application/octet-stream", "name": "b.bin"},
    }
    assert DIALECT.up("Part", legacy) == raw
    assert DIALECT.down("Part", {"url": "https://x"}) == {"kind": "file", "file": {"uri": "https://x"}}


def test_c6_blocking_is_the_inverse_of_return_immediately() -> None:
    assert DIALECT.up("SendMessageConfiguration", {"blocking": False}) == {"returnImmediately": True}
    assert DIALECT.up("SendMessageConfiguration", {"blocking": True}) == {"returnImmediately": False}
    assert DIALECT.up("SendMessageConfiguration", {}) == {}  # absent: blocking (v1.0 default)
    assert DIALECT.down("SendMessageConfiguration", {})["blocking"] is True
    assert DIALECT.down("SendMessageConfiguration", {"returnImmediately": True})["blocking"] is False


def test_c7_history_length_zero_means_unset() -> None:
    assert DIALECT.up("GetTaskRequest", {"id": "t", "historyLength": 0}) == {"id": "t"}
    assert DIALECT.up("GetTaskRequest", {"id": "t", "historyLength": 2}) == {"id": "t", "historyLength": 2}
    assert DIALECT.up("SendMessageConfiguration", {"historyLength": 0}) == {}


def test_c9_unknown_state_is_refused_on_ingest() -> None:
    with pytest.raises(A2AError) as err:
        DIALECT.up("TaskStatus", {"state": "unknown"})
    assert err.value.code is ErrorCode.INVALID_PARAMS


def test_c10_c12_c15_card_endpoints_tenant_and_flags() -> None:
    card = pb.AgentCard(name="n", description="d", version="1")
    card.supported_interfaces.add(url="http://h/", protocol_binding="JSONRPC", protocol_version="1.0")
    card.supported_interfaces.add(
        url="http://h/t", protocol_binding="JSONRPC", protocol_version="1.0", tenant="t"
    )
    card.capabilities.streaming = True
    card.capabilities.extended_agent_card = True
    scheme = card.security_schemes["key"]
    scheme.api_key_security_scheme.location = "header"
    scheme.api_key_security_scheme.name = "X-Key"
    card.security_requirements.add().schemes["key"].list.append("read")
    flow = card.security_schemes["oauth"].oauth2_security_scheme.flows.device_code
    flow.device_authorization_url = "https://d"
    legacy = legacy_card(protojson.to_dict(card), "http://h/")
    assert legacy["url"] == "http://h/" and legacy["preferredTransport"] == "JSONRPC"
    assert legacy["additionalInterfaces"] == [{"url": "http://h/", "transport": "JSONRPC"}]
    assert legacy["protocolVersion"] == "0.3.0" and legacy["supportsAuthenticatedExtendedCard"] is True
    assert legacy["securitySchemes"]["key"] == {"type": "apiKey", "in": "header", "name": "X-Key"}
    assert legacy["securitySchemes"]["oauth"] == {"type": "oauth2", "flows": {}}  # deviceCode: v1.0 only
    assert legacy["security"] == [{"key": ["read"]}]
    assert legacy["capabilities"] == {"streaming": True, "stateTransitionHistory": False}
    assert "supportedInterfaces" not in legacy
    hybrid = hybrid_card(protojson.to_dict(card))
    assert hybrid["url"] == "http://h/" and hybrid["supportedInterfaces"]  # both dialects' fields
    assert "apiKeySecurityScheme" in hybrid["securitySchemes"]["key"]  # the v1.0 shape is kept


def test_c11_push_config_nesting_and_ids() -> None:
    up = DIALECT.up(
        "TaskPushNotificationConfig",
        {"taskId": "t", "pushNotificationConfig": {"url": "http://u", "id": "c"}},
    )
    assert up == {"taskId": "t", "url": "http://u", "id": "c"}
    get = DIALECT.up("GetTaskPushNotificationConfigRequest", {"id": "t", "pushNotificationConfigId": "c"})
    assert get == {"taskId": "t", "id": "c"}
    assert DIALECT.up("GetTaskPushNotificationConfigRequest", {"id": "t"}) == {"taskId": "t"}


def test_c14_v1_only_error_codes_become_unsupported_operation() -> None:
    err = A2AError(ErrorCode.EXTENSION_SUPPORT_REQUIRED, "needs x", metadata={"requiredExtensions": "x"})
    assert error_object(err) == {
        "code": -32004,
        "message": "needs x",
        "data": {"reason": "EXTENSION_SUPPORT_REQUIRED", "requiredExtensions": "x"},
    }
    assert error_object(A2AError(ErrorCode.TASK_NOT_FOUND))["code"] == -32001


def test_wrong_kind_and_shapes_are_invalid_params() -> None:
    for bad in ({"kind": "task"}, {"kind": "message", "parts": [{"kind": "video"}]}, "x"):
        with pytest.raises(A2AError) as err:
            DIALECT.up("Message", bad)
        assert err.value.code is ErrorCode.INVALID_PARAMS


def test_every_method_maps_to_a_v1_rpc() -> None:
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    for method in METHODS.values():
        rpc = service.methods_by_name[method.rpc]
        assert rpc.input_type.name == method.request, method
