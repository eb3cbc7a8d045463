"""protobuf's ``json_format``: every setting the codec uses, in one place.

``json_format`` is the reference the compiled encoders and decoders are held
to (:func:`to_dict_reference`, :func:`parse_reference`), and it does three jobs
by design:

* it encodes and decodes the well-known types A2A does not use (Any, Duration,
  FieldMask, Empty, the wrappers; :func:`~a2a_grpc.protocol.protojson._plan.is_delegated`),
  and a top-level well-known type;
* it words the errors: a compiled path that meets a value it does not take
  (invalid input, a value ProtoJSON cannot write) hands the whole message to
  the reference, which raises the error;
* it supplies the scalar rules for the rare spellings of numbers (an integer
  written as ``"7"`` or ``7.0``, a float as ``"NaN"``).

Anything else a compiled path hands over is a gap in the compiler. In
**strict mode** (:func:`set_strict`, or ``A2A_PROTOJSON_STRICT=1`` in the
environment; the test suite runs in it) such a hand-over raises
:class:`CompilerGap` instead of quietly taking the reference's answer.
"""

from __future__ import annotations

import math
import os
import re
import sys
from typing import Any, TypeVar

from google.protobuf import json_format, message

from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.protocol._pbcompat import json_enum_option
from a2a_grpc.protocol._typecache import TypeCache
from a2a_grpc.protocol.protojson._plan import (
    FD,
    OPAQUE,
    Desc,
    Field,
    FixPlan,
    fields_by_any_name,
    fix_plan,
    is_map,
)

__all__ = [
    "CompilerGap",
    "EncodeError",
    "delegated_parse",
    "delegated_to_dict",
    "encode_fallback",
    "parse_fallback",
    "parse_reference",
    "set_strict",
    "strict",
    "to_dict_reference",
]

M = TypeVar("M", bound=message.Message)

#: What the encoders raise for a value ProtoJSON cannot write (json_format's
#: own error: a Timestamp outside years 1-9999, a Duration out of range).
EncodeError = json_format.SerializeToJsonError
#: json_format's own limit on nested messages (``max_recursion_depth``).
MAX_DEPTH = 100
_MAX_EXACT = 2**53


class CompilerGap(AssertionError):
    """Strict mode: a compiled path handed the reference a value it takes
    (a gap in the compiler, not an error in the input)."""


_strict = [os.environ.get("A2A_PROTOJSON_STRICT", "") == "1"]


def set_strict(on: bool) -> None:
    """Turns strict mode on or off for the process (see the module docstring)."""
    _strict[0] = on


def strict() -> bool:
    """Whether strict mode is on."""
    return _strict[0]


def enum_json_name(value: Any) -> str:
    """An enum value's ProtoJSON name: its ``pb.enumvalue.json`` custom name
    when the running protobuf knows that option (as json_format does), else
    its proto name."""
    option = json_enum_option(value)
    return option.string if option is not None else value.name


def _build_enum_numbers(enum: Any) -> dict[str, int]:
    numbers = {v.name: v.number for v in enum.values}
    for v in enum.values:
        numbers.setdefault(enum_json_name(v), v.number)
    return numbers


_ENUM_NUMBERS: TypeCache[dict[str, int]] = TypeCache(_build_enum_numbers)


def enum_numbers(enum: Any) -> dict[str, int]:
    """Every name json_format reads for a value of ``enum`` (an
    EnumDescriptor): proto names, then custom JSON names → the number."""
    return _ENUM_NUMBERS.get(enum)


# ------------------------------------------------------------------ encoding


def millis(value: str) -> str:
    """Rewrites a json_format timestamp (0, 3, 6 or 9 fractional digits) to
    exactly three."""
    if not value.endswith("Z"):
        return value
    dot = value.find(".", 19)
    if dot == -1:
        return value[:-1] + ".000Z"
    return value[: dot + 1] + (value[dot + 1 : -1] + "000")[:3] + "Z"


def whole(value: Any) -> Any:
    """``value`` with integral floats written as integers (protobuf keeps every
    JSON number of a Struct/Value as a double, which json would print as
    ``18.0`` — a client sent ``18`` and should get ``18`` back) and object keys
    in sorted order."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and -_MAX_EXACT <= value <= _MAX_EXACT else value
    if isinstance(value, dict):
        # A Struct is a map: protobuf keeps no key order, so write a stable one.
        return {k: whole(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [whole(v) for v in value]
    return value


def _fix_children(obj: dict[str, Any], plan: FixPlan) -> None:
    for name, kind, child in plan.children:
        value = obj.get(name)
        if value is None:
            continue
        if kind == "one":
            _fix(value, child)
        else:
            for item in value if kind == "list" else value.values():
                _fix(item, child)


def _fix(obj: dict[str, Any], plan: FixPlan) -> None:
    for name in plan.json_values:
        if name in obj:
            obj[name] = whole(obj[name])
    for name, default in plan.required:
        if name not in obj:
            obj[name] = [] if isinstance(default, list) else {} if isinstance(default, dict) else default
    for name, repeated in plan.timestamps:
        ts = obj.get(name)
        if ts is not None:
            obj[name] = [millis(t) for t in ts] if repeated else millis(ts)
    _fix_children(obj, plan)


def _non_finite_values(msg: message.Message) -> list[Any]:
    """Every ``Value`` in ``msg`` whose number is NaN or infinite."""
    found = []
    stack: list[Any] = [msg]
    while stack:
        m = stack.pop()
        if m.DESCRIPTOR.full_name == "google.protobuf.Value" and m.WhichOneof("kind") == "number_value":
            if not math.isfinite(m.number_value):
                found.append(m)
            continue
        for fd, value in m.ListFields():
            if fd.type != FD.TYPE_MESSAGE:
                continue
            if is_map(fd):
                if fd.message_type.fields_by_name["value"].type == FD.TYPE_MESSAGE:
                    stack.extend(value.values())
            elif fd.is_repeated:
                stack.extend(value)
            else:
                stack.append(value)
    return found


def _message_to_dict(msg: message.Message) -> Any:
    """``json_format.MessageToDict``, with NaN and infinite numbers of a
    ``Value`` written as ``null``: json_format refuses them, and JSON has no
    form for them. Requests may not carry them (:mod:`a2a_grpc.protocol._validation`),
    but a task stored by an older version or written by an agent may, and it
    must stay readable (docs/decisions.md). Those Values are set to null for
    the call and restored (a copy would not keep the order of map entries)."""
    try:
        return json_format.MessageToDict(msg)
    except (json_format.SerializeToJsonError, ValueError):  # ValueError: NaN, in some versions
        values = _non_finite_values(msg)
        if not values:
            raise
    numbers = [v.number_value for v in values]
    try:
        for v in values:
            v.null_value = 0
        return json_format.MessageToDict(msg)
    finally:
        for v, number in zip(values, numbers, strict=True):
            v.number_value = number


def delegated_to_dict(msg: message.Message) -> Any:
    """The ProtoJSON value of a well-known type, by json_format itself (NaN
    and infinities in a ``Value`` as ``null``)."""
    return _message_to_dict(msg)


def to_dict_reference(msg: message.Message) -> dict[str, Any]:
    """:func:`~a2a_grpc.protocol.protojson.to_dict` the slow way:
    ``json_format.MessageToDict`` and then the codec's fix-ups (REQUIRED
    defaults, millisecond timestamps, whole numbers in Struct/Value; NaN and
    infinities in a Value as ``null``). Raises :data:`EncodeError` for values
    ProtoJSON cannot write (a Timestamp outside years 1-9999)."""
    out = _message_to_dict(msg)
    desc = msg.DESCRIPTOR
    if desc.full_name in OPAQUE:
        return out
    _fix(out, fix_plan(desc))
    return out


def encode_fallback(msg: message.Message, cause: BaseException) -> dict[str, Any]:
    """The reference's answer for a message the compiled encoder declined
    (``cause``): its error, or — outside strict mode — its dict."""
    out = to_dict_reference(msg)
    if _strict[0]:
        raise CompilerGap(
            f"the compiled encoder of {msg.DESCRIPTOR.full_name} declined: {cause!r}"
        ) from cause
    return out


# ------------------------------------------------------------------ decoding

_WKT_SHAPES: dict[str, tuple[type, ...] | None] = {
    "google.protobuf.Struct": (dict,),
    "google.protobuf.ListValue": (list,),
    "google.protobuf.Any": (dict,),
    "google.protobuf.Empty": (dict,),
    "google.protobuf.Timestamp": (str,),
    "google.protobuf.Duration": (str,),
    "google.protobuf.FieldMask": (str,),
    "google.protobuf.Value": None,  # any JSON value
}


_JSON_VALUES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})
_DOUBLE_MAX = sys.float_info.max


def _check_doubles(value: Any, path: list[str]) -> None:
    """Every number in a Struct/Value/ListValue's JSON is a double: refuse an
    integer beyond the double range (json_format raises a bare OverflowError
    for it, with no field)."""
    stack = [value]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is int and not -_DOUBLE_MAX <= item <= _DOUBLE_MAX:
            raise _shape_error(path, "a number within the range of a double (about ±1.8e308)")
        if t is dict:
            stack.extend(item.values())
        elif t is list or t is tuple:
            stack.extend(item)


def _shape_error(path: list[str], want: str) -> A2AError:
    return A2AError.invalid_params(FieldViolation(".".join(path), f"must be {want}"))


def _check_enum(fd: Field, value: Any, path: list[str]) -> None:
    """An enum given by a name ``fd``'s enum does not have. json_format drops
    such a value silently when it ignores unknown fields, which would turn a
    filter like ``status`` into no filter at all; unknown *numbers* are kept
    (open enums) and refused by request validation, as on gRPC."""
    if type(value) is not str:
        return
    if value in enum_numbers(fd.enum_type):
        return
    try:
        int(value)
    except ValueError:
        raise A2AError.invalid_params(
            FieldViolation(".".join(path), f"unknown {fd.enum_type.name} value {value}")
        ) from None


def _check_value(fd: Field, value: Any, path: list[str]) -> None:
    """``value`` (one element for repeated fields) has the JSON shape of ``fd``."""
    if fd.type == FD.TYPE_ENUM:
        _check_enum(fd, value, path)
    if fd.type != FD.TYPE_MESSAGE:
        return  # json_format checks scalars
    full = fd.message_type.full_name
    if full in _WKT_SHAPES:
        shape = _WKT_SHAPES[full]
        if shape is not None and not isinstance(value, shape):
            raise _shape_error(path, f"a JSON {'object' if shape == (dict,) else shape[0].__name__}")
        if full in _JSON_VALUES:
            _check_doubles(value, path)
        return
    if full.startswith("google.protobuf.") and full.endswith("Value"):
        return  # wrapper types take scalars
    if not isinstance(value, dict):
        raise _shape_error(path, "a JSON object")
    _check_shape(value, fd.message_type, path)


def _check_shape(obj: dict[str, Any], desc: Desc, path: list[str]) -> None:
    """json_format iterates a string given for a message or a list field as if
    it were an object or a list, and drops unknown enum names; refuse both
    before parsing."""
    fields = fields_by_any_name(desc)
    for key, value in obj.items():
        fd = fields.get(key)
        if fd is None or value is None:
            continue
        here = [*path, fd.name]
        if is_map(fd):
            if not isinstance(value, dict):
                raise _shape_error(here, "a JSON object")
            value_fd = fd.message_type.fields_by_name["value"]
            for item in value.values():
                _check_value(value_fd, item, here)
        elif fd.is_repeated:
            if not isinstance(value, list):
                raise _shape_error(here, "a JSON array")
            for item in value:
                _check_value(fd, item, here)
        else:
            _check_value(fd, value, here)


_FIELD_RE = re.compile(r"Failed to parse (\w+) field")
_AT_PATH_RE = re.compile(r" at ([\w.\[\]]+)\.?$")


def _field_path(desc: Desc, names: list[str]) -> str:
    """json_format's field names (as the client wrote them) → proto names."""
    out: list[str] = []
    current: Desc | None = desc
    for name in names:
        fd = None
        if current is not None:
            fd = current.fields_by_name.get(name) or next(
                (f for f in current.fields if f.json_name == name), None
            )
        out.append(fd.name if fd is not None else name)
        current = fd.message_type if fd is not None and fd.type == FD.TYPE_MESSAGE else None
    return ".".join(out)


def _error_names(text: str) -> list[str]:
    """The field names in a json_format error: from its "Failed to parse X
    field" parts, else (a member of a oneof, whose errors lack them) from the
    ``at Type.field[0].sub`` path at its end."""
    names = _FIELD_RE.findall(text)
    if names:
        return names
    at = _AT_PATH_RE.search(text)
    if at is None:
        return []
    return [re.sub(r"\[.*?\]", "", part) for part in at.group(1).split(".")[1:] if part]


def parse_reference(obj: Any, msg: M, *, prefix: str = "") -> M:
    """:func:`~a2a_grpc.protocol.protojson.parse` the slow way: a shape check, then
    ``json_format.ParseDict`` (unknown fields ignored, spec §5.7). Raises
    A2AError(INVALID_PARAMS) with a BadRequest field violation naming the
    offending field (proto names, dotted, under ``prefix``)."""
    if not isinstance(obj, dict):
        raise A2AError.invalid_params(
            FieldViolation(prefix, f"must be a JSON object ({msg.DESCRIPTOR.full_name})")
        )
    try:
        _check_shape(obj, msg.DESCRIPTOR, [prefix] if prefix else [])
        json_format.ParseDict(obj, msg, ignore_unknown_fields=True)
    except A2AError:
        raise
    except (json_format.ParseError, ValueError, TypeError, RecursionError, OverflowError) as exc:
        text = str(exc)
        path = _field_path(msg.DESCRIPTOR, _error_names(text))
        full = ".".join(p for p in (prefix, path) if p)
        reason = text.rsplit("field: ", 1)[-1].rstrip(".") if "field: " in text else text
        raise A2AError.invalid_params(FieldViolation(full, reason)) from None
    return msg


def parse_fallback(obj: Any, msg: M, prefix: str, cause: BaseException) -> M:
    """The reference's answer for a document the compiled decoder declined
    (``cause``; ``msg`` cleared): its error, or — outside strict mode — the
    message."""
    parse_reference(obj, msg, prefix=prefix)
    if _strict[0]:
        raise CompilerGap(
            f"the compiled decoder of {msg.DESCRIPTOR.full_name} declined: {cause!r}"
        ) from cause
    return msg


def delegated_parse(value: Any, msg: message.Message, depth: int) -> None:
    """Fills ``msg``, a well-known type A2A does not use, from ``value`` by
    json_format itself; ``depth``: the number of messages around it (for
    json_format's nesting limit). Raises ValueError for a value of the wrong
    JSON shape (see :func:`parse_reference`), and json_format's errors."""
    shape = _WKT_SHAPES.get(msg.DESCRIPTOR.full_name)
    if shape is not None and not isinstance(value, shape):
        raise ValueError(f"{msg.DESCRIPTOR.full_name} must be a JSON {shape[0].__name__}")
    json_format.ParseDict(value, msg, ignore_unknown_fields=True, max_recursion_depth=MAX_DEPTH - depth)
