"""Our proto against the A2A v1.0.1 field tables (spec digest §3), field by field.

``spec_fields.json`` is ``scripts/spec_fields.py`` run over the digest: every
message and enum with each field's number and proto name and, where the digest
states them, its JSON name, label and REQUIRED flag. A drift in either the
proto or the digest fails here. When the digest itself is at hand (the
``shared/`` folder beside the repository), the fixture must also still be what
the script extracts from it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from google.api import annotations_pb2, field_behavior_pb2
from google.protobuf import descriptor

from a2a_grpc.types import pb

HERE = Path(__file__).parent
REPO = HERE.parents[1]
SPEC = json.loads((HERE / "spec_fields.json").read_text())
DIGEST = REPO.parent / "shared" / "spec" / "spec-digest.md"


def _label(fd: Any) -> str:
    if fd.is_repeated:
        entry = fd.message_type
        return "map" if entry is not None and entry.GetOptions().map_entry else "repeated"
    oneof = fd.containing_oneof
    if oneof is not None:
        # proto3 `optional` is a synthetic oneof named after the field.
        return "optional" if oneof.name == f"_{fd.name}" else "oneof"
    return ""


def _required(fd: Any) -> bool:
    return field_behavior_pb2.REQUIRED in fd.GetOptions().Extensions[field_behavior_pb2.field_behavior]


def test_every_message_and_enum_is_covered() -> None:
    assert set(pb.DESCRIPTOR.message_types_by_name) == set(SPEC["messages"])
    assert set(pb.DESCRIPTOR.enum_types_by_name) == set(SPEC["enums"])
    assert len(SPEC["messages"]) == 44


@pytest.mark.parametrize("name", sorted(SPEC["messages"]))
def test_message_fields(name: str) -> None:
    desc: descriptor.Descriptor = pb.DESCRIPTOR.message_types_by_name[name]
    expected = SPEC["messages"][name]
    assert {str(f.number) for f in desc.fields} == set(expected), "field numbers differ"
    for number, spec in expected.items():
        fd = desc.fields_by_number[int(number)]
        assert fd.name == spec["name"], f"{name}.{number}"
        if "json_name" in spec:
            assert fd.json_name == spec["json_name"], f"{name}.{fd.name} JSON name"
        if "label" in spec:
            assert _label(fd) == spec["label"], f"{name}.{fd.name} label"
        if "required" in spec:
            assert _required(fd) == spec["required"], f"{name}.{fd.name} REQUIRED"


@pytest.mark.parametrize("name", sorted(SPEC["enums"]))
def test_enum_values(name: str) -> None:
    enum = pb.DESCRIPTOR.enum_types_by_name[name]
    assert {v.name: v.number for v in enum.values} == SPEC["enums"][name]


def test_service_rpcs_and_package() -> None:
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    assert service.full_name == "lf.a2a.v1.A2AService"
    assert [m.name for m in service.methods] == [
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "GetExtendedAgentCard",
        "DeleteTaskPushNotificationConfig",
    ]
    streaming = {m.name for m in service.methods if m.server_streaming}
    assert streaming == {"SendStreamingMessage", "SubscribeToTask"}


def _http_rules(method: Any) -> list[list[str]]:
    rule = method.GetOptions().Extensions[annotations_pb2.http]
    out = []
    for r in [rule, *rule.additional_bindings]:
        verb = r.WhichOneof("pattern")
        out.append([verb, getattr(r, verb), r.body])
    return out


@pytest.mark.parametrize("rpc", sorted(SPEC["http"]))
def test_http_rules(rpc: str) -> None:
    """The google.api.http rules are the published ones; SubscribeToTask also
    has the POST forms the spec's prose uses (design.md, digest A1)."""
    method = pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[rpc]
    rules = _http_rules(method)
    if rpc == "SubscribeToTask":
        assert rules[2:] == [
            ["post", "/tasks/{id=*}:subscribe", "*"],
            ["post", "/{tenant}/tasks/{id=*}:subscribe", "*"],
        ]
        rules = rules[:2]
    assert rules == SPEC["http"][rpc]


@pytest.mark.skipif(not DIGEST.exists(), reason=f"the spec digest is not at {DIGEST}")
def test_fixture_is_what_the_digest_says() -> None:
    spec = importlib.util.spec_from_file_location("spec_fields", REPO / "scripts" / "spec_fields.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = DIGEST.read_text()
    assert {**module.parse(text), "http": module.parse_http(text)} == SPEC
