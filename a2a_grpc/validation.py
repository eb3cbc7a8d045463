"""Request validation derived from the proto itself.

REQUIRED fields are found through their ``google.api.field_behavior``
annotation, so a field added to the proto is validated with no code change
(spec §5.7: REQUIRED fields must be present, REQUIRED repeated fields need at
least one element). On top of that: a Part must carry content, enum values must
be known, ids must be routable over REST (no ``/``, ``:`` or control
characters, spec §2 notes), and history lengths must not be negative.
Failures are INVALID_PARAMS with one ``google.rpc.BadRequest`` field violation
per problem, using proto field paths such as ``message.parts[0]``.
"""

from __future__ import annotations

from functools import cache

from google.api import field_behavior_pb2
from google.protobuf import descriptor
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.errors import A2AError, FieldViolation

__all__ = ["ID_FIELDS", "check_id", "validate_request"]

_FD = descriptor.FieldDescriptor
_REQUIRED = field_behavior_pb2.REQUIRED
#: Fields holding ids that travel in REST paths or identify resources.
ID_FIELDS = frozenset({"id", "task_id", "context_id", "tenant"})
_WELL_KNOWN = ("google.protobuf.",)
_MAX_VIOLATIONS = 20


@cache
def _required(desc: descriptor.Descriptor) -> tuple[descriptor.FieldDescriptor, ...]:
    out = []
    for field in desc.fields:
        behaviors = field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        if _REQUIRED in behaviors:
            out.append(field)
    return tuple(out)


def check_id(value: str) -> str | None:
    """Why ``value`` cannot be used as an id in a REST path, or None."""
    if "/" in value or ":" in value:
        return "must not contain '/' or ':' (it could not be routed over HTTP+JSON)"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return "must not contain control characters"
    if len(value) > 256:
        return "must be at most 256 characters"
    return None


def _walk(msg: ProtoMessage, path: str, out: list[FieldViolation]) -> None:
    desc = msg.DESCRIPTOR
    if desc.full_name.startswith(_WELL_KNOWN):
        return
    prefix = f"{path}." if path else ""
    for field in _required(desc):
        name = prefix + field.name
        if field.is_repeated:
            if len(getattr(msg, field.name)) == 0:
                out.append(FieldViolation(name, "is required and must not be empty"))
        elif field.type == _FD.TYPE_MESSAGE:
            if not msg.HasField(field.name):
                out.append(FieldViolation(name, "is required"))
        elif field.type == _FD.TYPE_ENUM:
            if getattr(msg, field.name) == 0:
                out.append(FieldViolation(name, "is required (UNSPECIFIED is not a value)"))
        elif not getattr(msg, field.name):
            out.append(FieldViolation(name, "is required"))
    if desc.name == "Part" and desc.full_name == "lf.a2a.v1.Part" and msg.WhichOneof("content") is None:
        out.append(FieldViolation(path or "part", "must have content: one of text, raw, url or data"))
    for field, value in msg.ListFields():
        name = prefix + field.name
        if field.type == _FD.TYPE_ENUM:
            enum = field.enum_type
            assert enum is not None
            values = list(value) if field.is_repeated else [value]
            out.extend(
                FieldViolation(name, f"unknown {enum.name} value {v}")
                for v in values
                if enum.values_by_number.get(v) is None
            )
        elif field.type == _FD.TYPE_STRING and field.name in ID_FIELDS and not field.is_repeated:
            reason = check_id(value)
            if reason:
                out.append(FieldViolation(name, reason))
        elif field.type in (_FD.TYPE_INT32, _FD.TYPE_INT64) and field.name in ("history_length", "page_size"):
            if value < 0:
                out.append(FieldViolation(name, "must not be negative"))
        elif field.type == _FD.TYPE_MESSAGE:
            if field.message_type is None or field.message_type.GetOptions().map_entry:
                continue
            if field.is_repeated:
                for i, item in enumerate(value):
                    _walk(item, f"{name}[{i}]", out)
            else:
                _walk(value, name, out)
        if len(out) >= _MAX_VIOLATIONS:
            return


def validate_request(request: ProtoMessage) -> None:
    """Raises INVALID_PARAMS with field violations if ``request`` breaks a
    REQUIRED annotation or one of the rules in the module docstring."""
    out: list[FieldViolation] = []
    _walk(request, "", out)
    if out:
        raise A2AError.invalid_params(*out)
