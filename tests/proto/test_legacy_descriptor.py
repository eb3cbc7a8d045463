"""Our v0.3 schema (``proto/a2a/v1/a2a.proto``) against the legacy digest's tables (§4.2, §4.3).

``legacy_fields.json`` is ``scripts/legacy_fields.py`` run over the digest: every message with
each field's number, proto name, JSON name, type, label and REQUIRED flag, both enums, and the
RPC table with its HTTP rules. A drift in the proto or the digest fails here; when the digest
itself is at hand (``shared/`` beside the repository), the fixture must still be what the
script extracts from it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from google.api import annotations_pb2, client_pb2, field_behavior_pb2
from google.protobuf import descriptor

from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03

HERE = Path(__file__).parent
REPO = HERE.parents[1]
SPEC = json.loads((HERE / "legacy_fields.json").read_text())
DIGEST = REPO.parent / "shared" / "spec" / "legacy-digest.md"
FD = descriptor.FieldDescriptor
SCALARS = {
    FD.TYPE_STRING: "string",
    FD.TYPE_BYTES: "bytes",
    FD.TYPE_BOOL: "bool",
    FD.TYPE_INT32: "int32",
}


def _type(fd: Any) -> str:
    if fd.message_type is not None:
        entry = fd.message_type
        if entry.GetOptions().map_entry:
            key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
            return f"map<{_type(key)}, {_type(value)}>"
        name = entry.full_name
        return name.removeprefix("a2a.v1.")
    if fd.enum_type is not None:
        return fd.enum_type.full_name.removeprefix("a2a.v1.")
    return SCALARS[fd.type]


def _label(fd: Any) -> str:
    if fd.is_repeated:
        return "map" if fd.message_type is not None and fd.message_type.GetOptions().map_entry else "repeated"
    return "oneof" if fd.containing_oneof is not None else ""


def _required(fd: Any) -> bool:
    return field_behavior_pb2.REQUIRED in fd.GetOptions().Extensions[field_behavior_pb2.field_behavior]


def test_package_and_file_name() -> None:
    assert v03.DESCRIPTOR.package == "a2a.v1"
    # Another name than the v1.0 file's, so both live in one descriptor pool.
    assert v03.DESCRIPTOR.name == "a2a/v1/a2a.proto"
    assert set(v03.DESCRIPTOR.message_types_by_name) == set(SPEC["messages"])
    assert len(SPEC["messages"]) == 45


@pytest.mark.parametrize("name", sorted(SPEC["messages"]))
def test_message_fields(name: str) -> None:
    desc = v03.DESCRIPTOR.message_types_by_name[name]
    expected = SPEC["messages"][name]
    assert {str(f.number) for f in desc.fields} == set(expected), "field numbers differ"
    for number, spec in expected.items():
        fd = desc.fields_by_number[int(number)]
        got = {
            "name": fd.name,
            "json_name": fd.json_name,
            "type": _type(fd),
            "label": _label(fd),
            "required": _required(fd),
        }
        assert got == spec, f"{name}.{number}"


@pytest.mark.parametrize("name", sorted(SPEC["enums"]))
def test_enum_values(name: str) -> None:
    enum = v03.DESCRIPTOR.enum_types_by_name[name]
    assert {v.name: v.number for v in enum.values} == SPEC["enums"][name]


def test_rpcs_and_http_rules() -> None:
    service = v03.DESCRIPTOR.services_by_name["A2AService"]
    assert service.full_name == "a2a.v1.A2AService"
    got = {}
    for m in service.methods:
        options = m.GetOptions()
        rule = options.Extensions[annotations_pb2.http]
        verb = rule.WhichOneof("pattern")
        assert not rule.additional_bindings
        got[m.name] = {
            "request": m.input_type.name,
            "response": m.output_type.full_name.removeprefix("a2a.v1."),
            "streaming": m.server_streaming,
            "http": [verb, getattr(rule, verb), rule.body],
            "signature": ",".join(options.Extensions[client_pb2.method_signature]),
        }
    assert got == SPEC["rpcs"]


@pytest.mark.skipif(not DIGEST.exists(), reason=f"the legacy digest is not at {DIGEST}")
def test_fixture_is_what_the_digest_says() -> None:
    spec = importlib.util.spec_from_file_location("legacy_fields", REPO / "scripts" / "legacy_fields.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.parse(DIGEST.read_text()) == SPEC
