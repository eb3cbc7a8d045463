"""What the codec knows about each message type, computed once per type.

* the kinds of types: the well-known types ProtoJSON writes as scalars or
  free-form JSON (never walked field by field), and map entries;
* each field's JSON default, written for REQUIRED fields without presence;
* :class:`FixPlan`: what :func:`~a2a_grpc.protocol.protojson._reference.to_dict_reference`
  fixes in ``json_format``'s dict of one type;
* the generated class of a type and its fields by either name.

Every per-type value lives in a :class:`~a2a_grpc.protocol._typecache.TypeCache`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor, message, message_factory

from a2a_grpc.protocol._typecache import TypeCache
from a2a_grpc.types import is_required

__all__ = [
    "INT64",
    "JSON_VALUES",
    "OPAQUE",
    "TIMESTAMP",
    "FixPlan",
    "default_json",
    "fields_by_any_name",
    "fix_plan",
    "is_delegated",
    "is_map",
    "message_class",
]

FD = descriptor.FieldDescriptor
# Descriptor stubs type many attributes as Optional; walk them untyped.
Field = Any
Desc = Any

TIMESTAMP = "google.protobuf.Timestamp"
JSON_VALUES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})
# Well-known types json_format renders as scalars or free-form JSON: never walked.
OPAQUE = frozenset(
    {
        "google.protobuf.Any",
        "google.protobuf.Duration",
        "google.protobuf.Empty",
        "google.protobuf.FieldMask",
        *JSON_VALUES,
        TIMESTAMP,
        *(
            f"google.protobuf.{w}Value"
            for w in ("Bool", "Bytes", "Double", "Float", "Int32", "Int64", "String", "UInt32", "UInt64")
        ),
    }
)
INT64 = frozenset({FD.TYPE_INT64, FD.TYPE_UINT64, FD.TYPE_SINT64, FD.TYPE_FIXED64, FD.TYPE_SFIXED64})


def is_map(fd: Field) -> bool:
    """Whether ``fd`` is a map field (a repeated map-entry message)."""
    return (
        fd.type == FD.TYPE_MESSAGE
        and fd.is_repeated
        and fd.message_type.has_options
        and fd.message_type.GetOptions().map_entry
    )


def is_delegated(desc: Desc) -> bool:
    """Whether values of type ``desc`` are always encoded and decoded by
    ``json_format`` itself, by design: the well-known types A2A does not use
    (Any, Duration, FieldMask, Empty, the wrappers). Timestamp, Struct, Value
    and ListValue have compiled forms."""
    full = desc.full_name
    return full in OPAQUE and full != TIMESTAMP and full not in JSON_VALUES


def default_json(fd: Field) -> Any:
    """The ProtoJSON value of ``fd`` holding its default."""
    if is_map(fd):
        return {}
    if fd.is_repeated:
        return []
    if fd.type == FD.TYPE_ENUM:
        return fd.enum_type.values_by_number[0].name if 0 in fd.enum_type.values_by_number else 0
    if fd.type in (FD.TYPE_STRING, FD.TYPE_BYTES):
        return ""
    if fd.type == FD.TYPE_BOOL:
        return False
    if fd.type in INT64:
        return "0"  # ProtoJSON writes 64-bit integers as strings
    return 0


def required_defaults(desc: Desc) -> list[tuple[str, Any]]:
    """(json name, default) of the REQUIRED fields of ``desc`` that have no
    presence, in declaration order: they are written even when unset."""
    return [(fd.json_name, default_json(fd)) for fd in desc.fields if is_required(fd) and not fd.has_presence]


@dataclass(slots=True)
class FixPlan:
    """What to fix in ``MessageToDict``'s dict of one message type."""

    required: list[tuple[str, Any]] = field(default_factory=list)  # (json name, default)
    timestamps: list[tuple[str, bool]] = field(default_factory=list)  # (json name, repeated)
    json_values: list[str] = field(default_factory=list)  # Struct/Value/ListValue fields (json names)
    children: list[tuple[str, str, FixPlan]] = field(
        default_factory=list
    )  # (json name, "one"|"list"|"map", plan)
    building: bool = True

    def empty(self) -> bool:
        return not (self.building or self.required or self.timestamps or self.json_values or self.children)


def _child_plan(fd: Field) -> tuple[str, FixPlan] | None:
    """(kind, plan) of a message field that may need fixing inside, or None."""
    if is_map(fd):
        value_fd = fd.message_type.fields_by_name["value"]
        if value_fd.type != FD.TYPE_MESSAGE or value_fd.message_type.full_name in OPAQUE:
            return None
        return "map", fix_plan(value_fd.message_type)
    return ("list" if fd.is_repeated else "one"), fix_plan(fd.message_type)


def _build_fix_plan(desc: Desc) -> FixPlan:
    plan = _FIX_PLANS.building(desc, FixPlan(required=required_defaults(desc)))
    for fd in desc.fields:
        if fd.type != FD.TYPE_MESSAGE:
            continue
        full = fd.message_type.full_name
        if full == TIMESTAMP:
            if not is_map(fd):
                plan.timestamps.append((fd.json_name, fd.is_repeated))
        elif full in JSON_VALUES:
            plan.json_values.append(fd.json_name)
        elif full not in OPAQUE:
            child = _child_plan(fd)
            if child is not None and not child[1].empty():
                plan.children.append((fd.json_name, child[0], child[1]))
    plan.building = False
    return plan


_FIX_PLANS: TypeCache[FixPlan] = TypeCache(_build_fix_plan)


def fix_plan(desc: Desc) -> FixPlan:
    """The :class:`FixPlan` of message type ``desc`` (built once)."""
    return _FIX_PLANS.get(desc)


def _build_by_name(desc: Desc) -> dict[str, Field]:
    table = {}
    for fd in desc.fields:
        table[fd.name] = fd
        table[fd.json_name] = fd
    return table


_BY_NAME: TypeCache[dict[str, Field]] = TypeCache(_build_by_name)


def fields_by_any_name(desc: Desc) -> dict[str, Field]:
    """A message type's fields by proto name and by JSON name (ProtoJSON
    parsers accept both; built once per type)."""
    return _BY_NAME.get(desc)


_CLASSES: TypeCache[type[message.Message]] = TypeCache(message_factory.GetMessageClass)


def message_class(desc: Desc) -> type[message.Message]:
    """The generated class of a message descriptor (built once per type)."""
    return _CLASSES.get(desc)
