"""Request fields from path variables and query parameters (spec §11.5).

Names are the camelCase JSON names (proto names are accepted too; dotted
paths reach singular sub-messages). Values: strings as-is, booleans
``true``/``false``, integers in decimal, enums by name or number, RFC 3339
timestamps, ``bytes`` in base64; repeated fields as repeated keys or comma
lists. The query string is percent-decoded by the caller (aiohttp). Unknown
parameters are ignored, like unknown JSON fields. A value that does not fit
raises A2AError(INVALID_PARAMS) with a ``google.rpc.BadRequest`` violation.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import descriptor, message, timestamp_pb2

from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.protocol import protojson

__all__ = ["apply_query", "set_field"]

_FD = descriptor.FieldDescriptor
# Descriptor stubs type many attributes as Optional; walk them untyped.
_Field = Any
_Desc = Any
_INT_RANGES = {
    _FD.TYPE_INT32: (-(2**31), 2**31 - 1),
    _FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
    _FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    _FD.TYPE_UINT32: (0, 2**32 - 1),
    _FD.TYPE_FIXED32: (0, 2**32 - 1),
    _FD.TYPE_INT64: (-(2**63), 2**63 - 1),
    _FD.TYPE_SINT64: (-(2**63), 2**63 - 1),
    _FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    _FD.TYPE_UINT64: (0, 2**64 - 1),
    _FD.TYPE_FIXED64: (0, 2**64 - 1),
}
_TIMESTAMP = "google.protobuf.Timestamp"
#: Query parameters that are service parameters, not request fields.
_RESERVED = frozenset({"a2a-version"})


def _is_map(fd: _Field) -> bool:
    return (
        fd.type == _FD.TYPE_MESSAGE
        and fd.is_repeated
        and fd.message_type.has_options
        and fd.message_type.GetOptions().map_entry
    )


def _convert(fd: _Field, text: str) -> Any:
    """One query/path value for a scalar field; raises ValueError."""
    t = fd.type
    if t == _FD.TYPE_STRING:
        return text
    if t == _FD.TYPE_BOOL:
        low = text.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError(f"expected true or false, got {text!r}")
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        try:
            value = int(text, 10)
        except ValueError:
            raise ValueError(f"expected a decimal integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise ValueError(f"{value} is out of range")
        return value
    if t in (_FD.TYPE_DOUBLE, _FD.TYPE_FLOAT):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None
    if t == _FD.TYPE_ENUM:
        named = fd.enum_type.values_by_name.get(text)
        if named is not None:
            return named.number
        try:
            number = int(text, 10)
        except ValueError:
            names = ", ".join(v.name for v in fd.enum_type.values)
            raise ValueError(f"unknown value {text!r}; expected one of {names}") from None
        if number not in fd.enum_type.values_by_number:
            raise ValueError(f"unknown enum number {number}")
        return number
    if t == _FD.TYPE_BYTES:
        try:
            padded = text + "=" * (-len(text) % 4)
            alt = "-_" if ("-" in text or "_" in text) else None
            return base64.b64decode(padded, altchars=alt.encode() if alt else None, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("expected base64") from None
    raise ValueError("this field cannot be set from the URL")


def _assign(msg: message.Message, fd: _Field, values: list[str], path: str) -> None:
    if _is_map(fd):
        raise A2AError.invalid_params(FieldViolation(path, "map fields cannot be set from the URL"))
    if fd.is_repeated:
        pieces = [p for v in values for p in v.split(",")]
        target = getattr(msg, fd.name)
        try:
            if fd.type == _FD.TYPE_MESSAGE:
                raise ValueError("nested objects cannot be set from the URL; send them in a POST body")
            target.extend(_convert(fd, p) for p in pieces)
        except ValueError as exc:
            raise A2AError.invalid_params(FieldViolation(path, str(exc))) from None
        return
    if len(values) > 1:
        raise A2AError.invalid_params(FieldViolation(path, "given more than once"))
    text = values[0]
    try:
        if fd.type == _FD.TYPE_MESSAGE:
            if fd.message_type.full_name != _TIMESTAMP:
                raise ValueError("nested objects cannot be set from the URL; send them in a POST body")
            ts = timestamp_pb2.Timestamp()
            try:
                ts.FromJsonString(text)
            except ValueError:
                raise ValueError(f"expected an RFC 3339 timestamp, got {text!r}") from None
            getattr(msg, fd.name).CopyFrom(ts)
        else:
            setattr(msg, fd.name, _convert(fd, text))
    except ValueError as exc:
        raise A2AError.invalid_params(FieldViolation(path, str(exc))) from None


def _resolve(msg: message.Message, dotted: str) -> tuple[message.Message, _Field, str] | None:
    """(parent message, leaf field, proto field path) for a dotted name, or
    None when a name is unknown."""
    current = msg
    proto_names: list[str] = []
    names = dotted.split(".")
    for i, name in enumerate(names):
        fd = protojson.fields_by_any_name(current.DESCRIPTOR).get(name)
        if fd is None:
            return None
        proto_names.append(fd.name)
        if i == len(names) - 1:
            return current, fd, ".".join(proto_names)
        if fd.type != _FD.TYPE_MESSAGE or fd.is_repeated or fd.message_type.full_name == _TIMESTAMP:
            raise A2AError.invalid_params(
                FieldViolation(".".join(proto_names), "not a message field; cannot select a sub-field")
            )
        current = getattr(current, fd.name)
    return None


def set_field(msg: message.Message, field_path: str, value: str) -> None:
    """Sets a path variable (``task_id``, ``tenant``) on ``msg``. Raises
    A2AError(INVALID_PARAMS) when the value does not fit the field, or
    A2AError(INTERNAL) when the proto names a field that does not exist."""
    fd = protojson.fields_by_any_name(msg.DESCRIPTOR).get(field_path)
    if fd is not None and fd.type == _FD.TYPE_STRING and not fd.is_repeated:
        setattr(msg, fd.name, value)  # the usual ``id``/``tenant``: what _assign would do
        return
    found = _resolve(msg, field_path)
    if found is None:
        from a2a_grpc.errors import ErrorCode

        raise A2AError(ErrorCode.INTERNAL, f"route names unknown field {field_path!r}")
    parent, fd, path = found
    _assign(parent, fd, [value], path)


def apply_query(
    msg: message.Message, query: Mapping[str, str] | Iterable[tuple[str, str]], *, bound: Iterable[str] = ()
) -> None:
    """Fills ``msg`` from decoded query parameters (a multidict or pairs),
    skipping fields in ``bound`` (proto field paths already set by the path)."""
    if not query:
        return
    items = query.items() if isinstance(query, Mapping) else query
    grouped: dict[str, list[str]] = {}
    for key, value in items:
        if key.lower() in _RESERVED:
            continue
        grouped.setdefault(key, []).append(value)
    skip = set(bound)
    for key, values in grouped.items():
        found = _resolve(msg, key)
        if found is None:
            continue  # unknown parameters are ignored (spec §5.7)
        parent, fd, path = found
        if path in skip:
            continue
        _assign(parent, fd, values, path)
