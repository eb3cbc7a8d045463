"""The v0.3 proto table (a2a_grpc/dialects/_v03proto.py) on its own: the round
trip over random v1.0 messages through the v0.3 proto (bytes included), one
test per structural difference S1–S18 of legacy digest §4.4, and the lossy
cases C4–C7, C10–C14 it touches (S19/C8 is the servicer's: test_v03_grpc.py)."""

from __future__ import annotations

import random
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from a2a_grpc.dialects._v03proto import DIALECT, RPCS, TYPES, down, error_message, error_of, up
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03
from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03_grpc
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb
from tests.randmsg import fill


def _lossless(msg: Any) -> Any:
    """``msg`` without what the v0.3 proto has no slot for (C4, C5, C12):
    part metadata and file names, media types of text/data parts, non-object
    data (kept as ``{"value": x}``), reference task ids, tenants, the task of
    an inline push config, a history length of 0 (C7)."""
    name = msg.DESCRIPTOR.name
    if name == "Part":
        msg.ClearField("metadata")
        msg.ClearField("filename")
        if msg.WhichOneof("content") in ("text", "data"):
            msg.ClearField("media_type")
        if msg.WhichOneof("content") == "data" and msg.data.WhichOneof("kind") != "struct_value":
            value = struct_pb2.Value()
            value.struct_value.fields["value"].CopyFrom(msg.data)
            msg.data.CopyFrom(value)
    if name == "Message":
        msg.ClearField("reference_task_ids")
    if name == "SendMessageConfiguration":
        msg.task_push_notification_config.ClearField("tenant")
        msg.task_push_notification_config.ClearField("task_id")
        if not msg.task_push_notification_config.ListFields():  # present but empty: absent
            msg.ClearField("task_push_notification_config")
        if msg.HasField("history_length") and msg.history_length == 0:
            msg.ClearField("history_length")
    if "tenant" in msg.DESCRIPTOR.fields_by_name:
        msg.ClearField("tenant")
    for fd, value in msg.ListFields():
        if fd.message_type is None or fd.message_type.GetOptions().map_entry:
            continue
        for item in value if fd.is_repeated else [value]:
            if item.DESCRIPTOR.full_name.startswith("lf.a2a.v1."):
                _lossless(item)
    return msg


def _valid(v1: Any) -> bool:
    """Random objects v0.3 has a slot for: named roles and states, parts with content."""
    if isinstance(v1, dict):
        for key, value in v1.items():
            if key in ("role", "state") and (not isinstance(value, str) or value.endswith("UNSPECIFIED")):
                return False
            if key == "parts" and not all({"text", "raw", "url", "data"} & set(p) for p in value):
                return False
            if not _valid(value):
                return False
    if isinstance(v1, list):
        return all(_valid(v) for v in v1)
    return True


@pytest.mark.parametrize(
    "rule",
    [
        "Message",
        "Task",
        "Artifact",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "StreamResponse",
        "SendMessageResponse",
        "SendMessageRequest",
    ],
)
def test_round_trip_through_v03_bytes_is_identity_where_lossless(rule: str) -> None:
    rng = random.Random(3)
    cls = getattr(pb, TYPES[rule][0])
    checked = 0
    for _ in range(300):
        msg = fill(cls(), rng)
        try:
            v1 = protojson.to_dict(msg)
        except Exception:  # an unencodable random object: skip it
            continue
        if not _valid(v1):
            continue
        legacy = down(rule, msg)
        assert legacy.DESCRIPTOR.full_name.startswith("a2a.v1.")
        wire = type(legacy).FromString(legacy.SerializeToString())  # v0.3 bytes, v0.3 descriptors
        back = up(rule, wire)
        assert protojson.to_dict(back) == protojson.to_dict(_lossless(msg)), protojson.to_dict(legacy)
        checked += 1
    assert checked > 50


def test_s1_rpc_names_and_every_rpc_has_a_rule() -> None:
    service = v03.DESCRIPTOR.services_by_name["A2AService"]
    assert service.full_name == "a2a.v1.A2AService"
    assert sorted(RPCS) == sorted(m.name for m in service.methods)
    assert (RPCS["TaskSubscription"].v1, RPCS["ListTaskPushNotificationConfig"].v1) == (
        "SubscribeToTask",
        "ListTaskPushNotificationConfigs",
    )
    assert RPCS["GetAgentCard"].v1 == "GetExtendedAgentCard"
    v1_rpcs = {m.name for m in pb.DESCRIPTOR.services_by_name["A2AService"].methods}
    for rpc in RPCS.values():
        method = service.methods_by_name[rpc.name]
        assert rpc.v1 in v1_rpcs
        assert TYPES[rpc.request][1] == method.input_type.name
        assert rpc.response == "" or TYPES[rpc.response][1] == method.output_type.name
        assert rpc.streaming == method.server_streaming
    assert hasattr(v03_grpc, "A2AServiceServicer")


@pytest.mark.parametrize(
    ("rule", "message", "expected"),
    [
        (
            "GetTaskRequest",
            v03.GetTaskRequest(name="tasks/t-1", history_length=2),
            {"id": "t-1", "historyLength": 2},
        ),
        ("CancelTaskRequest", v03.CancelTaskRequest(name="tasks/t-1"), {"id": "t-1"}),
        ("SubscribeToTaskRequest", v03.TaskSubscriptionRequest(name="tasks/t-1"), {"id": "t-1"}),
        (
            "GetTaskPushNotificationConfigRequest",
            v03.GetTaskPushNotificationConfigRequest(name="tasks/t/pushNotificationConfigs/c"),
            {"taskId": "t", "id": "c"},
        ),
        (
            "DeleteTaskPushNotificationConfigRequest",
            v03.DeleteTaskPushNotificationConfigRequest(name="tasks/t/pushNotificationConfigs/c"),
            {"taskId": "t", "id": "c"},
        ),
        (
            "ListTaskPushNotificationConfigsRequest",
            v03.ListTaskPushNotificationConfigRequest(parent="tasks/t", page_size=3),
            {"taskId": "t", "pageSize": 3},
        ),
    ],
)
def test_s2_resource_names_both_ways(rule: str, message: Any, expected: dict[str, Any]) -> None:
    v1 = up(rule, message)
    assert protojson.to_dict(v1) == expected
    assert protojson.to_dict(down(rule, v1)) == protojson.to_dict(message)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("GetTaskRequest", v03.GetTaskRequest(name="task/t")),
        ("GetTaskRequest", v03.GetTaskRequest(name="tasks/")),
        ("GetTaskRequest", v03.GetTaskRequest(name="tasks/a/b")),
        ("GetTaskRequest", v03.GetTaskRequest()),
        ("CancelTaskRequest", v03.CancelTaskRequest(name="t-1")),
        ("GetTaskPushNotificationConfigRequest", v03.GetTaskPushNotificationConfigRequest(name="tasks/t")),
        (
            "DeleteTaskPushNotificationConfigRequest",
            v03.DeleteTaskPushNotificationConfigRequest(name="x/y/z/w"),
        ),
        ("ListTaskPushNotificationConfigsRequest", v03.ListTaskPushNotificationConfigRequest(parent="tasks")),
        (
            "CreateTaskPushNotificationConfigRequest",
            v03.CreateTaskPushNotificationConfigRequest(parent="t/1"),
        ),
    ],
)
def test_s2_malformed_names_are_invalid_params(rule: str, message: Any) -> None:
    with pytest.raises(A2AError) as err:
        up(rule, message)
    assert err.value.code is ErrorCode.INVALID_PARAMS
    assert "tasks/" in err.value.message


def test_s3_s4_parts_each_shape() -> None:
    m = pb.Message(message_id="m", role=pb.ROLE_USER)
    m.parts.add(text="t", media_type="text/plain", metadata={"k": "v"})  # C5: all but text dropped
    m.parts.add(raw=b"\xfb\xff", media_type="application/octet-stream", filename="b.bin")
    m.parts.add(url="https://e/f", media_type="text/plain")
    m.parts.add(raw=b"x")  # no media type: no mimeType
    m.parts.add().data.struct_value.update({"a": [1, 2]})
    m.parts.add().data.list_value.values.add().number_value = 1  # C4: wrapped, no flag
    legacy = DIALECT.down("Message", protojson.to_dict(m))
    assert "parts" not in legacy
    assert legacy["content"] == [
        {"text": "t"},
        {"file": {"fileWithBytes": "+/8=", "mimeType": "application/octet-stream"}},
        {"file": {"fileWithUri": "https://e/f", "mimeType": "text/plain"}},
        {"file": {"fileWithBytes": "eA=="}},
        {"data": {"data": {"a": [1, 2]}}},
        {"data": {"data": {"value": [1]}}},
    ]
    back = DIALECT.up("Message", legacy)
    assert back["parts"][1] == {"raw": "+/8=", "mediaType": "application/octet-stream"}  # C5: filename lost
    assert back["parts"][5] == {"data": {"value": [1]}}  # C4: stays wrapped over the proto


def test_s5_s10_s11_status_message_cancelled_and_final() -> None:
    event = pb.TaskStatusUpdateEvent(task_id="t", context_id="c")
    event.status.state = pb.TASK_STATE_CANCELED
    event.status.message.message_id = "m"
    event.status.message.parts.add(text="bye")
    legacy = down("TaskStatusUpdateEvent", event)
    assert legacy.status.state == v03.TASK_STATE_CANCELLED == pb.TASK_STATE_CANCELED  # same number 5
    assert legacy.status.update.content[0].text == "bye"  # S5: proto field `update`, JSON `message`
    assert protojson.to_dict(legacy)["status"]["message"]["content"] == [{"text": "bye"}]
    legacy.final = True  # set by the adapter (C2); dropped going up
    assert "final" not in protojson.to_dict(up("TaskStatusUpdateEvent", legacy))


def test_s6_send_request_fields_are_renumbered() -> None:
    request = pb.SendMessageRequest(tenant="acme")
    request.message.message_id = "m"
    request.message.parts.add(text="x")
    legacy = down("SendMessageRequest", request)
    fields = {fd.number: fd.name for fd, _ in legacy.ListFields()}
    assert fields == {1: "request"}  # tenant (v1.0 #1) dropped; message is v0.3 #1 (C12)
    assert v03.SendMessageRequest.FromString(legacy.SerializeToString()).request.message_id == "m"


def test_s7_c6_blocking_and_return_immediately() -> None:
    def config(**kw: Any) -> dict[str, Any]:
        return DIALECT.up("SendMessageConfiguration", kw)

    assert config(blocking=True) == {"returnImmediately": False}
    assert config(blocking=False) == {"returnImmediately": True}
    assert config() == {"returnImmediately": True}  # the proto path: no presence, absent is false
    assert DIALECT.down("SendMessageConfiguration", {})["blocking"] is True
    assert DIALECT.down("SendMessageConfiguration", {"returnImmediately": True})["blocking"] is False
    request = v03.SendMessageRequest()
    request.request.message_id = "m"
    assert not up("SendMessageRequest", request).HasField(
        "configuration"
    )  # no config: blocking (v1.0 default)


def test_s7_inline_push_config() -> None:
    v1 = {"taskPushNotificationConfig": {"url": "http://u", "token": "t", "tenant": "x", "taskId": "t"}}
    legacy = DIALECT.down("SendMessageConfiguration", v1)
    assert legacy["pushNotification"] == {"url": "http://u", "token": "t"}
    assert DIALECT.up("SendMessageConfiguration", legacy)["taskPushNotificationConfig"] == {
        "url": "http://u",
        "token": "t",
    }


def test_s8_c11_push_config_nesting_name_and_config_id() -> None:
    v1 = pb.TaskPushNotificationConfig(task_id="t", id="c", url="http://u", token="tok", tenant="x")
    v1.authentication.scheme = "Bearer"
    legacy = down("TaskPushNotificationConfig", v1)
    assert protojson.to_dict(legacy) == {
        "name": "tasks/t/pushNotificationConfigs/c",
        "pushNotificationConfig": {
            "id": "c",
            "url": "http://u",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"]},
        },
    }
    v1.ClearField("tenant")
    assert up("TaskPushNotificationConfig", legacy) == v1
    create = down("CreateTaskPushNotificationConfigRequest", v1)
    assert (create.parent, create.config_id) == ("tasks/t", "c")
    assert up("CreateTaskPushNotificationConfigRequest", create) == v1
    # C11: configId first, then the nested id, else none (the v1.0 handler mints one)
    request = v03.CreateTaskPushNotificationConfigRequest(parent="tasks/t", config_id="first")
    request.config.push_notification_config.id = "second"
    request.config.push_notification_config.url = "http://u"
    assert up("CreateTaskPushNotificationConfigRequest", request).id == "first"
    request.ClearField("config_id")
    assert up("CreateTaskPushNotificationConfigRequest", request).id == "second"
    request.config.push_notification_config.ClearField("id")
    assert up("CreateTaskPushNotificationConfigRequest", request).id == ""
    # the task from the config's name when there is no parent; a disagreement is refused
    request.ClearField("parent")
    request.config.name = "tasks/other/pushNotificationConfigs/z"
    converted = up("CreateTaskPushNotificationConfigRequest", request)
    assert (converted.task_id, converted.id) == ("other", "z")
    request.parent = "tasks/t"
    with pytest.raises(A2AError, match="parent"):
        up("CreateTaskPushNotificationConfigRequest", request)


def test_s9_c1_schemes() -> None:
    legacy = v03.PushNotificationConfig(url="http://u")
    legacy.authentication.schemes.extend(["Bearer", "Basic"])
    assert up("PushNotificationConfig", legacy).authentication.scheme == "Bearer"  # C1: the first
    del legacy.authentication.schemes[:]
    assert not up("PushNotificationConfig", legacy).authentication.scheme


def _card() -> pb.AgentCard:
    card = pb.AgentCard(name="n", description="d", version="1", icon_url="https://i")
    card.supported_interfaces.add(url="http://h/", protocol_binding="JSONRPC", protocol_version="1.0")
    card.supported_interfaces.add(url="h:50051", protocol_binding="GRPC", protocol_version="1.0")
    card.supported_interfaces.add(url="http://h", protocol_binding="HTTP+JSON", protocol_version="1.0")
    card.supported_interfaces.add(
        url="http://h/t", protocol_binding="JSONRPC", protocol_version="1.0", tenant="t"
    )
    card.capabilities.streaming = True
    card.capabilities.extended_agent_card = True
    card.security_requirements.add().schemes["key"].list.append("read")
    card.security_schemes["key"].api_key_security_scheme.location = "header"
    oauth = card.security_schemes["oauth"].oauth2_security_scheme.flows
    oauth.authorization_code.authorization_url = "https://a"
    oauth.authorization_code.pkce_required = True
    card.skills.add(id="s", name="s", description="d").security_requirements.add().schemes[
        "key"
    ].SetInParent()
    card.signatures.add(protected="p", signature="s")
    return card


def test_s13_s17_card() -> None:
    legacy = down("AgentCard", _card())
    assert (legacy.url, legacy.preferred_transport, legacy.protocol_version) == (
        "http://h/",
        "JSONRPC",
        "0.3.0",
    )
    assert [(i.url, i.transport) for i in legacy.additional_interfaces] == [
        ("http://h/", "JSONRPC"),
        ("h:50051", "GRPC"),
        ("http://h", "HTTP+JSON"),
    ]  # C10: the tenanted interface cannot be told to v0.3
    assert legacy.supports_authenticated_extended_card  # S15
    assert legacy.security[0].schemes["key"].list == ["read"]  # S14
    assert "key" in legacy.skills[0].security[0].schemes
    assert legacy.signatures[0].signature == "s"  # S16
    flow = protojson.to_dict(legacy)["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"]
    assert flow == {"authorizationCode": {"authorizationUrl": "https://a"}}  # C12: pkceRequired dropped
    back = up("AgentCard", legacy)
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in back.supported_interfaces] == [
        ("http://h/", "JSONRPC", "0.3"),
        ("h:50051", "GRPC", "0.3"),
        ("http://h", "HTTP+JSON", "0.3"),
    ]
    assert back.capabilities.extended_agent_card and not back.icon_url  # S15; C12
    assert back.security_requirements[0].schemes["key"].list == ["read"]


def test_s13_card_listing_v03_interfaces_uses_them() -> None:
    card = _card()
    del card.supported_interfaces[:]
    card.supported_interfaces.add(url="g:1", protocol_binding="GRPC", protocol_version="0.3")
    card.supported_interfaces.add(url="http://r", protocol_binding="HTTP+JSON", protocol_version="1.0")
    legacy = down("AgentCard", card)
    assert (legacy.url, legacy.preferred_transport) == ("g:1", "GRPC")
    assert [i.transport for i in legacy.additional_interfaces] == ["GRPC"]


def test_s18_c7_history_length() -> None:
    assert not up("GetTaskRequest", v03.GetTaskRequest(name="tasks/t", history_length=0)).HasField(
        "history_length"
    )
    assert up("GetTaskRequest", v03.GetTaskRequest(name="tasks/t", history_length=3)).history_length == 3
    assert "historyLength" not in protojson.to_dict(down("GetTaskRequest", pb.GetTaskRequest(id="t")))


def test_c13_lenient_input_jsonrpc_shapes() -> None:
    body = {
        "kind": "message",
        "messageId": "m",
        "role": "user",
        "parts": [
            {"kind": "text", "text": "a", "metadata": {"k": 1}},
            {"kind": "file", "file": {"uri": "https://f", "name": "f.txt"}},
            {"file": {"bytes": "eA==", "mimeType": "x/y"}},
            {"data": {"a": 1}},
        ],
    }
    v1 = DIALECT.up("Message", body)
    assert v1["role"] == "ROLE_USER" and "kind" not in v1
    assert v1["parts"] == [
        {"text": "a", "metadata": {"k": 1}},
        {"url": "https://f", "filename": "f.txt"},
        {"raw": "eA==", "mediaType": "x/y"},
        {"data": {"a": 1}},
    ]
    for spelling in ("canceled", "TASK_STATE_CANCELED", "TASK_STATE_CANCELLED"):
        assert DIALECT.up("TaskStatus", {"state": spelling}) == {"state": "TASK_STATE_CANCELED"}
    config = DIALECT.up(
        "SendMessageConfiguration", {"blocking": True, "pushNotificationConfig": {"url": "u"}}
    )
    assert config == {"returnImmediately": False, "taskPushNotificationConfig": {"url": "u"}}


@pytest.mark.parametrize(
    "part",
    [{}, {"file": "x"}, {"file": {"mimeType": "a/b"}}, {"kind": "video"}, "text"],
)
def test_bad_parts_are_invalid_params(part: Any) -> None:
    with pytest.raises(A2AError) as err:
        DIALECT.up("Message", {"content": [part]})
    assert err.value.code is ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize(
    ("code", "name", "grpc_code"),
    [
        (ErrorCode.TASK_NOT_FOUND, "TaskNotFoundError", grpc.StatusCode.NOT_FOUND),
        (ErrorCode.TASK_NOT_CANCELABLE, "TaskNotCancelableError", grpc.StatusCode.FAILED_PRECONDITION),
        (ErrorCode.INVALID_PARAMS, "InvalidParamsError", grpc.StatusCode.INVALID_ARGUMENT),
        (ErrorCode.UNSUPPORTED_OPERATION, "UnsupportedOperationError", grpc.StatusCode.FAILED_PRECONDITION),
        (ErrorCode.UNAUTHENTICATED, "UnauthenticatedError", grpc.StatusCode.UNAUTHENTICATED),
    ],
)
def test_c14_error_names_and_back(code: ErrorCode, name: str, grpc_code: grpc.StatusCode) -> None:
    status, details = error_message(A2AError(code, "why"))
    assert (status, details) == (grpc_code, f"{name}: why")
    back = error_of(status, details)
    assert (back.code, back.message) == (code, "why")


def test_c14_v1_only_errors_are_told_as_unsupported_operation() -> None:
    _, details = error_message(A2AError(ErrorCode.EXTENSION_SUPPORT_REQUIRED, "needs x"))
    assert details == "UnsupportedOperationError: needs x"
    assert error_of(grpc.StatusCode.NOT_FOUND, "no prefix").code is ErrorCode.TASK_NOT_FOUND


def test_s17_c12_v1_only_fields_are_dropped() -> None:
    cancel = pb.CancelTaskRequest(id="t", tenant="x")
    cancel.metadata.update({"k": "v"})
    assert protojson.to_dict(down("CancelTaskRequest", cancel)) == {"name": "tasks/t"}
    m = pb.Message(message_id="m", reference_task_ids=["r"])
    assert "referenceTaskIds" not in protojson.to_dict(down("Message", m))
    assert protojson.to_dict(down("AgentCard", _card()))["capabilities"] == {"streaming": True}  # S15: moved
    assert "iconUrl" not in protojson.to_dict(down("AgentCard", _card()))


def test_http_routes_from_the_proto_with_l_a3_and_l_a7() -> None:
    from a2a_grpc.dialects._v03proto import http_routes
    from a2a_grpc.protocol._httprule import RouteNotFound

    table = http_routes()
    assert sorted({r.method.name for r in table.routes}) == sorted(RPCS)
    found = table.match("POST", "/v1/tasks/t-1/pushNotificationConfigs")
    assert (found.route.method.name, found.path_params, found.route.body) == (
        "CreateTaskPushNotificationConfig",
        {"parent": "tasks/t-1"},
        "config",
    )
    assert table.match("GET", "/v1/tasks/t-1/pushNotificationConfigs").route.method.name == (
        "ListTaskPushNotificationConfig"
    )
    with pytest.raises(RouteNotFound):
        table.match("POST", "/v1/task/t-1/pushNotificationConfigs")  # the proto's typo is not served
    for verb in ("GET", "POST"):
        assert table.match(verb, "/v1/tasks/t-1:subscribe").route.method.name == "TaskSubscription"
    # a client expands the same routes
    request = v03.CreateTaskPushNotificationConfigRequest(parent="tasks/t-1", config_id="c")
    request.config.push_notification_config.url = "http://u"
    create = next(r for r in table.routes if r.method.name == "CreateTaskPushNotificationConfig")
    expansion = create.expand(request, protojson.to_dict)
    assert expansion is not None
    assert (expansion.path, expansion.body, expansion.query) == (
        "/v1/tasks/t-1/pushNotificationConfigs",
        {"pushNotificationConfig": {"url": "http://u"}},
        (("configId", "c"),),
    )
