"""Every ProtoJSON setting of a2a-grpc, in one place.

The gateway (JSON-RPC, HTTP+JSON, the Agent Card), the client, the CLI and push
delivery all encode and decode A2A messages through this module.

Output (spec §5.5, §5.6.1, §5.7; design.md "empty-but-required JSON"):

* lowerCamelCase ``json_name`` keys, enum values by name, ``bytes`` as base64;
* ``google.protobuf.Timestamp`` as UTC ``Z`` with exactly three fractional
  digits (``2026-11-30T12:00:00.000Z``);
* fields marked ``(google.api.field_behavior) = REQUIRED`` that have no
  presence (strings, numbers, repeated, maps) are always written, even when they
  hold their default — so ``ListTasksResponse`` always carries ``tasks: []``,
  ``nextPageToken: ""``, ``pageSize`` and ``totalSize``. Other default-valued
  fields stay omitted (no global ``always_print_fields_with_no_presence``);
* raw UTF-8 (non-ASCII is not escaped) except U+2028/U+2029, which are escaped
  so that a document is always safe inside one SSE ``data:`` line.

Input: strict JSON (no NaN/Infinity), unknown fields ignored (spec §5.7).
Failures raise :class:`~a2a_grpc.errors.A2AError`: PARSE_ERROR for bytes that
are not JSON, INVALID_PARAMS (with a ``google.rpc.BadRequest`` field violation)
for JSON that does not fit the message.

Speed: both directions are compiled once per message type from its
descriptors (see "compiled encoders" and "compiled decoders" below);
protobuf's pure-Python ``json_format`` stays the reference they are tested
against (:func:`to_dict_reference`, :func:`parse_reference`) and the fallback
for whatever they do not handle themselves.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from google.protobuf import descriptor, json_format, message, message_factory
from google.protobuf.internal import type_checkers

from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.typecache import TypeCache
from a2a_grpc.types import is_required

__all__ = [
    "dumps",
    "json_value",
    "loads",
    "message_class",
    "parse",
    "parse_reference",
    "to_dict",
    "to_dict_reference",
    "to_json",
]

M = TypeVar("M", bound=message.Message)

_FD = descriptor.FieldDescriptor
# Descriptor stubs type many attributes as Optional; walk them untyped.
_Field = Any
_Desc = Any
_TIMESTAMP = "google.protobuf.Timestamp"
# Well-known types json_format renders as scalars or free-form JSON: never walked.
_OPAQUE = frozenset(
    {
        "google.protobuf.Any",
        "google.protobuf.Duration",
        "google.protobuf.Empty",
        "google.protobuf.FieldMask",
        "google.protobuf.ListValue",
        "google.protobuf.Struct",
        "google.protobuf.Value",
        _TIMESTAMP,
        *(
            f"google.protobuf.{w}Value"
            for w in ("Bool", "Bytes", "Double", "Float", "Int32", "Int64", "String", "UInt32", "UInt64")
        ),
    }
)


@dataclass(slots=True)
class _Plan:
    """What to fix in the dict of one message type after MessageToDict."""

    required: list[tuple[str, Any]] = field(default_factory=list)  # (json name, default)
    timestamps: list[tuple[str, bool]] = field(default_factory=list)  # (json name, repeated)
    json_values: list[str] = field(default_factory=list)  # Struct/Value/ListValue fields (json names)
    children: list[tuple[str, str, _Plan]] = field(
        default_factory=list
    )  # (json name, "one"|"list"|"map", plan)
    building: bool = True

    def empty(self) -> bool:
        return not (self.building or self.required or self.timestamps or self.json_values or self.children)


_PLANS: dict[str, _Plan] = {}


def _is_map(fd: _Field) -> bool:
    return (
        fd.type == _FD.TYPE_MESSAGE
        and fd.is_repeated
        and fd.message_type.has_options
        and fd.message_type.GetOptions().map_entry
    )


def _default_json(fd: _Field) -> Any:
    if _is_map(fd):
        return {}
    if fd.is_repeated:
        return []
    if fd.type == _FD.TYPE_ENUM:
        return fd.enum_type.values_by_number[0].name if 0 in fd.enum_type.values_by_number else 0
    if fd.type in (_FD.TYPE_STRING, _FD.TYPE_BYTES):
        return ""
    if fd.type == _FD.TYPE_BOOL:
        return False
    if fd.type in (_FD.TYPE_INT64, _FD.TYPE_UINT64, _FD.TYPE_SINT64, _FD.TYPE_FIXED64, _FD.TYPE_SFIXED64):
        return "0"  # ProtoJSON writes 64-bit integers as strings
    return 0


def _plan(desc: _Desc) -> _Plan:
    plan = _PLANS.get(desc.full_name)
    if plan is not None:
        return plan
    plan = _PLANS[desc.full_name] = _Plan()
    for fd in desc.fields:
        if is_required(fd) and not fd.has_presence:
            plan.required.append((fd.json_name, _default_json(fd)))
        if fd.type != _FD.TYPE_MESSAGE:
            continue
        if fd.message_type.full_name == _TIMESTAMP:
            if not _is_map(fd):
                plan.timestamps.append((fd.json_name, fd.is_repeated))
            continue
        if fd.message_type.full_name in _JSON_VALUES:
            plan.json_values.append(fd.json_name)
            continue
        if fd.message_type.full_name in _OPAQUE:
            continue
        if _is_map(fd):
            value_fd = fd.message_type.fields_by_name["value"]
            if value_fd.type != _FD.TYPE_MESSAGE or value_fd.message_type.full_name in _OPAQUE:
                continue
            child = _plan(value_fd.message_type)
            kind = "map"
        else:
            child = _plan(fd.message_type)
            kind = "list" if fd.is_repeated else "one"
        if not child.empty():
            plan.children.append((fd.json_name, kind, child))
    plan.building = False
    return plan


def _millis(value: str) -> str:
    """Rewrites a json_format timestamp (0, 3, 6 or 9 fractional digits) to
    exactly three."""
    if not value.endswith("Z"):
        return value
    dot = value.find(".", 19)
    if dot == -1:
        return value[:-1] + ".000Z"
    return value[: dot + 1] + (value[dot + 1 : -1] + "000")[:3] + "Z"


_JSON_VALUES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})
_MAX_EXACT = 2**53


def _whole(value: Any) -> Any:
    """``value`` with integral floats written as integers (protobuf keeps every
    JSON number of a Struct/Value as a double, which json would print as
    ``18.0`` — a client sent ``18`` and should get ``18`` back) and object keys
    in sorted order."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and -_MAX_EXACT <= value <= _MAX_EXACT else value
    if isinstance(value, dict):
        # A Struct is a map: protobuf keeps no key order, so write a stable one.
        return {k: _whole(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def _fix(obj: dict[str, Any], plan: _Plan) -> None:
    for name in plan.json_values:
        if name in obj:
            obj[name] = _whole(obj[name])
    for name, default in plan.required:
        if name not in obj:
            obj[name] = [] if isinstance(default, list) else {} if isinstance(default, dict) else default
    for name, repeated in plan.timestamps:
        ts = obj.get(name)
        if ts is not None:
            obj[name] = [_millis(t) for t in ts] if repeated else _millis(ts)
    for name, kind, child in plan.children:
        value = obj.get(name)
        if value is None:
            continue
        if kind == "one":
            _fix(value, child)
        elif kind == "list":
            for item in value:
                _fix(item, child)
        else:
            for item in value.values():
                _fix(item, child)


def to_dict_reference(msg: message.Message) -> dict[str, Any]:
    """:func:`to_dict` the slow way: ``json_format.MessageToDict`` and then the
    fix-ups above. The compiled encoders fall back to it for anything they do
    not handle, and the tests hold them to it."""
    out = json_format.MessageToDict(msg)
    desc = msg.DESCRIPTOR
    if desc.full_name in _OPAQUE:
        return out
    _fix(out, _plan(desc))
    return out


# ------------------------------------------------------------------ compiled encoders
#
# json_format dispatches on every field's descriptor at every call. Instead, each
# message type gets, once, a table from its field descriptors to a converter for
# the value ``ListFields`` returns, so one message costs one ``ListFields`` and one
# dict lookup per set field. The output is exactly :func:`to_dict_reference`'s,
# key order included: set fields in ``ListFields`` order, then the missing
# REQUIRED no-presence fields in declaration order. Anything unusual (an
# extension, a Timestamp out of range, NaN in a Value, ...) raises inside the
# encoder, and :func:`to_dict` then takes the reference path, which gives the
# same value or raises the same error.

_Conv = Any  # Callable[[Any], Any] | None (None: the value is already its JSON form)
_Encoder = Any  # Callable[[message.Message], dict[str, Any]]
_ENCODERS: dict[str, _Encoder] = {}
_INT64 = frozenset({_FD.TYPE_INT64, _FD.TYPE_UINT64, _FD.TYPE_SINT64, _FD.TYPE_FIXED64, _FD.TYPE_SFIXED64})
_TS_MIN = -62135596800  # 0001-01-01T00:00:00Z, json_format's bounds
_TS_MAX = 253402300799  # 9999-12-31T23:59:59Z
_EPOCH = datetime.datetime(1970, 1, 1)
_TS_SECONDS: dict[int, str] = {}


class _Fallback(Exception):
    """The compiled encoder does not handle this value: use the reference path."""


def _timestamp(ts: Any) -> str:
    """A Timestamp as UTC ``Z`` with exactly three fractional digits (what
    ``ToJsonString`` followed by :func:`_millis` gives)."""
    seconds, nanos = ts.seconds, ts.nanos
    head = _TS_SECONDS.get(seconds)
    if head is None:
        if not _TS_MIN <= seconds <= _TS_MAX:
            raise _Fallback
        head = (_EPOCH + datetime.timedelta(seconds=seconds)).isoformat()
        if len(_TS_SECONDS) >= 4096:
            _TS_SECONDS.clear()
        _TS_SECONDS[seconds] = head
    if not 0 <= nanos < 1_000_000_000:
        raise _Fallback
    return f"{head}.{nanos // 1_000_000:03d}Z"


def _json_number(value: float) -> Any:
    if value != value or value in (_INF, _NEG_INF):
        raise _Fallback  # json_format refuses NaN and Infinity in a Value
    return int(value) if value.is_integer() and -_MAX_EXACT <= value <= _MAX_EXACT else value


_INF = float("inf")
_NEG_INF = float("-inf")


def _value(v: Any) -> Any:
    """``_whole(MessageToDict(v))`` for a ``google.protobuf.Value``."""
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        return _json_number(v.number_value)
    if kind == "struct_value":
        return _struct(v.struct_value)
    if kind == "bool_value":
        return v.bool_value
    if kind == "list_value":
        return [_value(item) for item in v.list_value.values]
    return None  # null_value or unset


def _struct(s: Any) -> dict[str, Any]:
    """``_whole(MessageToDict(s))`` for a ``google.protobuf.Struct``."""
    fields = s.fields
    return {k: _value(fields[k]) for k in sorted(fields)}


def _list_value(lv: Any) -> list[Any]:
    return [_value(item) for item in lv.values]


_WHOLE_JSON = {
    "google.protobuf.Struct": _struct,
    "google.protobuf.Value": _value,
    "google.protobuf.ListValue": _list_value,
}


def _float_conv(fd: _Field) -> _Conv:
    single = fd.cpp_type == _FD.CPPTYPE_FLOAT

    def conv(value: float) -> Any:
        if value != value:
            return "NaN"
        if value == _INF:
            return "Infinity"
        if value == _NEG_INF:
            return "-Infinity"
        return type_checkers.ToShortestFloat(value) if single else value

    return conv


def _bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("utf-8")


def _scalar_conv(fd: _Field) -> _Conv:
    """The converter of one (non-repeated) scalar or enum value of ``fd``."""
    if fd.type == _FD.TYPE_ENUM:
        enum = fd.enum_type
        if enum.full_name == "google.protobuf.NullValue":
            return lambda value: None
        # Unknown numbers of an open enum are written as numbers; a closed enum
        # never holds one (protobuf keeps it among the unknown fields).
        names = {v.number: _enum_json_name(v) for v in enum.values}
        return lambda value: names.get(value, value)
    if fd.type == _FD.TYPE_BYTES:
        return _bytes
    if fd.type in _INT64:
        return str
    if fd.cpp_type in (_FD.CPPTYPE_FLOAT, _FD.CPPTYPE_DOUBLE):
        return _float_conv(fd)
    return None  # string, bool, 32-bit integers: already their JSON value


def _message_conv(desc: _Desc, *, in_map: bool) -> _Conv:
    """The converter of one message value of type ``desc``. The reference path
    fixes up Timestamps and Struct/Value/ListValue in singular and repeated
    fields but not as map values, which json_format alone renders."""
    full = desc.full_name
    if full == _TIMESTAMP:
        return _reference_wkt if in_map else _timestamp
    if full in _WHOLE_JSON:
        return _reference_wkt if in_map else _WHOLE_JSON[full]
    if full in _OPAQUE or desc.file.name == "google/protobuf/wrappers.proto":
        return _reference_wkt
    return _encoder(desc)


def _reference_wkt(value: message.Message) -> Any:
    return json_format.MessageToDict(value)


def _map_conv(fd: _Field) -> _Conv:
    key_fd = fd.message_type.fields_by_name["key"]
    value_fd = fd.message_type.fields_by_name["value"]
    if value_fd.type == _FD.TYPE_MESSAGE:
        vconv = _message_conv(value_fd.message_type, in_map=True)
    else:
        vconv = _scalar_conv(value_fd)
    key: Callable[[Any], str]
    if key_fd.type == _FD.TYPE_BOOL:

        def key(k: Any) -> str:
            return "true" if k else "false"

    elif key_fd.type == _FD.TYPE_STRING:
        if vconv is None:
            return lambda value: {k: value[k] for k in value}
        return lambda value: {k: vconv(value[k]) for k in value}
    else:
        key = str
    if vconv is None:
        return lambda value: {key(k): value[k] for k in value}
    return lambda value: {key(k): vconv(value[k]) for k in value}


def _field_conv(fd: _Field) -> _Conv:
    if _is_map(fd):
        return _map_conv(fd)
    conv = _message_conv(fd.message_type, in_map=False) if fd.type == _FD.TYPE_MESSAGE else _scalar_conv(fd)
    if not fd.is_repeated:
        return conv
    if conv is None:
        return list
    return lambda value: [conv(item) for item in value]


def _enum_json_name(value: Any) -> str:
    """An enum value's ProtoJSON name: its ``pb.enumvalue.json`` custom name
    when the running protobuf knows that option (as json_format does), else
    its proto name."""
    custom = getattr(_PRINTER, "_GetJsonEnumValueOption", None)
    option = custom(value) if custom is not None else None
    return option.string if option is not None else value.name


# json_format's printer, only to read custom enum names the way it does.
_PRINTER = json_format._Printer()  # type: ignore[attr-defined]


def _encoder(desc: _Desc) -> _Encoder:
    """The compiled encoder of ``desc``. It is registered before its field
    table is filled, so types that contain themselves link to it directly."""
    known = _ENCODERS.get(desc.full_name)
    if known is not None:
        return known
    table: dict[Any, tuple[str, _Conv]] = {}
    required: list[tuple[str, Any]] = _plan(desc).required

    def encode(msg: message.Message) -> dict[str, Any]:
        js: dict[str, Any] = {}
        for fd, value in msg.ListFields():
            name, conv = table[fd]  # KeyError for extensions: the reference path handles them
            js[name] = value if conv is None else conv(value)
        for name, default in required:
            if name not in js:
                # A fresh [] or {} each time: callers may change the dict they get.
                js[name] = default.copy() if isinstance(default, list | dict) else default
        return js

    _ENCODERS[desc.full_name] = encode
    for fd in desc.fields:
        table[fd] = (fd.json_name, _field_conv(fd))
    return encode


def to_dict(msg: message.Message) -> dict[str, Any]:
    """The ProtoJSON object of ``msg`` (a dict ready for :func:`dumps`), as
    described in the module docstring. Raises json_format's
    ``SerializeToJsonError`` for values ProtoJSON cannot write (NaN in a
    ``Value``, a Timestamp outside years 1–9999)."""
    desc = msg.DESCRIPTOR
    if desc.full_name in _OPAQUE:
        return json_format.MessageToDict(msg)
    try:
        return _encoder(desc)(msg)
    except Exception:  # _Fallback, or anything the reference path reports its own way
        return to_dict_reference(msg)


def json_value(value: message.Message) -> Any:
    """The plain Python value of a ``google.protobuf.Value``/``Struct``/
    ``ListValue`` (whole numbers as ``int``), e.g. a data part's content."""
    fast = _WHOLE_JSON.get(value.DESCRIPTOR.full_name)
    if fast is not None:
        try:
            return fast(value)
        except _Fallback:
            pass
    return _whole(json_format.MessageToDict(value))


# json.dumps with these settings, without building an encoder per call.
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(obj: Any) -> str:
    """Compact JSON text of a dict/list built from :func:`to_dict` output:
    raw UTF-8, with U+2028 and U+2029 escaped (SSE-safe, one line)."""
    text = _JSON_ENCODER.encode(obj)
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text


def to_json(msg: message.Message) -> str:
    """``dumps(to_dict(msg))``."""
    return dumps(to_dict(msg))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(body: bytes | str) -> Any:
    """Parses a request body as strict JSON (UTF-8; NaN and Infinity are
    rejected). Raises A2AError(PARSE_ERROR)."""
    try:
        return json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise A2AError(ErrorCode.PARSE_ERROR, f"invalid JSON: {exc}") from None


_FIELD_RE = re.compile(r"Failed to parse (\w+) field")


def _field_path(desc: _Desc, names: list[str]) -> str:
    """json_format's field names (as the client wrote them) → proto names."""
    out: list[str] = []
    current: _Desc | None = desc
    for name in names:
        fd = None
        if current is not None:
            fd = current.fields_by_name.get(name) or next(
                (f for f in current.fields if f.json_name == name), None
            )
        out.append(fd.name if fd is not None else name)
        current = fd.message_type if fd is not None and fd.type == _FD.TYPE_MESSAGE else None
    return ".".join(out)


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


def _shape_error(path: list[str], want: str) -> A2AError:
    return A2AError.invalid_params(FieldViolation(".".join(path), f"must be {want}"))


def _check_value(fd: _Field, value: Any, path: list[str]) -> None:
    """``value`` (one element for repeated fields) has the JSON shape of ``fd``."""
    if fd.type != _FD.TYPE_MESSAGE:
        return  # json_format checks scalars
    full = fd.message_type.full_name
    if full in _WKT_SHAPES:
        shape = _WKT_SHAPES[full]
        if shape is not None and not isinstance(value, shape):
            raise _shape_error(path, f"a JSON {'object' if shape == (dict,) else shape[0].__name__}")
        return
    if full.startswith("google.protobuf.") and full.endswith("Value"):
        return  # wrapper types take scalars
    if not isinstance(value, dict):
        raise _shape_error(path, "a JSON object")
    _check_shape(value, fd.message_type, path)


def _check_shape(obj: dict[str, Any], desc: _Desc, path: list[str]) -> None:
    """json_format iterates a string given for a message or a list field as if
    it were an object or a list; refuse such shapes before parsing."""
    fields = fields_by_any_name(desc)
    for key, value in obj.items():
        fd = fields.get(key)
        if fd is None or value is None:
            continue
        here = [*path, fd.name]
        if _is_map(fd):
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


_BY_NAME: dict[str, dict[str, _Field]] = {}


def fields_by_any_name(desc: _Desc) -> dict[str, _Field]:
    """A message type's fields by proto name and by JSON name (ProtoJSON
    parsers accept both; cached per type)."""
    table = _BY_NAME.get(desc.full_name)
    if table is None:
        table = {}
        for fd in desc.fields:
            table[fd.name] = fd
            table[fd.json_name] = fd
        _BY_NAME[desc.full_name] = table
    return table


def parse(obj: Any, msg: M, *, prefix: str = "") -> M:
    """Merges the ProtoJSON value ``obj`` into ``msg`` (unknown fields are
    ignored; fields by json name or proto name; enums by name or number) and
    returns ``msg``. Raises A2AError(INVALID_PARAMS) with a BadRequest field
    violation naming the offending field (proto names, dotted, under
    ``prefix``).

    An empty ``msg`` of a regular type is filled by its compiled decoder;
    anything that decoder does not take as it is (an error, a number given as
    a string, an enum by number, null, ...) makes it clear ``msg`` and take
    :func:`parse_reference`, which gives the same message or the same error."""
    if isinstance(obj, dict) and msg.DESCRIPTOR.full_name not in _OPAQUE and msg.ByteSize() == 0:
        try:
            _decoder(msg.DESCRIPTOR)(obj, msg, 1)
            return msg
        except Exception:  # _Fallback, or an error the reference path reports its own way
            msg.Clear()
    return parse_reference(obj, msg, prefix=prefix)


def parse_reference(obj: Any, msg: M, *, prefix: str = "") -> M:
    """:func:`parse` the slow way: a shape check, then
    ``json_format.ParseDict``."""
    if not isinstance(obj, dict):
        raise A2AError.invalid_params(
            FieldViolation(prefix, f"must be a JSON object ({msg.DESCRIPTOR.full_name})")
        )
    try:
        _check_shape(obj, msg.DESCRIPTOR, [prefix] if prefix else [])
        json_format.ParseDict(obj, msg, ignore_unknown_fields=True)
    except A2AError:
        raise
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        text = str(exc)
        path = _field_path(msg.DESCRIPTOR, _FIELD_RE.findall(text))
        full = ".".join(p for p in (prefix, path) if p)
        reason = text.rsplit("field: ", 1)[-1].rstrip(".") if "field: " in text else text
        raise A2AError.invalid_params(FieldViolation(full, reason)) from None
    return msg


# ------------------------------------------------------------------ compiled decoders
#
# The mirror of the encoders: per message type, once, a table from each field's
# json name and proto name to a setter that takes the JSON value only in its
# plain form (a str for strings, enum names and bytes, an int for integers, a
# dict for messages, ...) and raises _Fallback for anything else. The setters do
# what json_format does with such values, in the same order.

_Decoder = Any  # Callable[[dict[str, Any], message.Message, int], None]
_Setter = Any  # Callable[[message.Message, Any, int], None]
_MAX_DEPTH = 90  # json_format refuses more than 100 nested messages
_SURROGATE = json_format._UNPAIRED_SURROGATE_PATTERN  # type: ignore[attr-defined]


def _text(value: Any) -> str:
    if type(value) is not str or (not value.isascii() and _SURROGATE.search(value)):
        raise _Fallback
    return value


def _integer(value: Any) -> int:
    if type(value) is not int:
        raise _Fallback
    return value


def _boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _Fallback
    return value


def _double(value: Any) -> float:
    if type(value) is int:
        return float(value)
    if type(value) is not float or value != value or value in (_INF, _NEG_INF):
        raise _Fallback  # json_format refuses NaN and Infinity unless quoted
    return value


def _base64(value: Any) -> bytes:
    if type(value) is not str:
        raise _Fallback
    encoded = value.encode("utf-8")
    return base64.urlsafe_b64decode(encoded + b"=" * (4 - len(encoded) % 4))


def _item_conv(fd: _Field) -> Any:
    """JSON value → field value for one scalar or enum value of ``fd``, or None
    when json_format's own handling is needed for every value."""
    t = fd.type
    if t == _FD.TYPE_STRING:
        return _text
    if t == _FD.TYPE_BOOL:
        return _boolean
    if t == _FD.TYPE_BYTES:
        return _base64
    if t == _FD.TYPE_DOUBLE:
        return _double
    if t == _FD.TYPE_ENUM:
        if fd.enum_type.full_name == "google.protobuf.NullValue":
            return None
        numbers = {v.name: v.number for v in fd.enum_type.values}

        def enum(value: Any) -> int:
            number = numbers.get(value) if type(value) is str else None
            if number is None:
                raise _Fallback  # numbers, custom JSON names, unknown names
            return number

        return enum
    if t == _FD.TYPE_FLOAT:
        return None  # range checks
    return _integer  # the integer types


def _parse_value(value: Any, msg: Any, depth: int) -> None:
    """``json_format`` for a ``google.protobuf.Value``."""
    if depth > _MAX_DEPTH:
        raise _Fallback
    t = type(value)
    if t is str:
        msg.string_value = _text(value)
    elif t is dict:
        _parse_struct(value, msg.struct_value, depth + 1)
    elif t is bool:
        msg.bool_value = value
    elif t is int or t is float:
        msg.number_value = value
    elif t is list:
        _parse_list(value, msg.list_value, depth + 1)
    elif value is None:
        msg.null_value = 0
    else:
        raise _Fallback


def _parse_struct(value: Any, msg: Any, depth: int) -> None:
    if type(value) is not dict or depth > _MAX_DEPTH:
        raise _Fallback
    msg.Clear()  # marks it present even when empty, as json_format does
    fields = msg.fields
    for key in value:
        _parse_value(value[key], fields[key], depth + 1)


def _parse_list(value: Any, msg: Any, depth: int) -> None:
    if type(value) is not list or depth > _MAX_DEPTH:
        raise _Fallback
    msg.ClearField("values")
    add = msg.values.add
    for item in value:
        _parse_value(item, add(), depth + 1)


def _parse_timestamp(value: Any, msg: Any, depth: int) -> None:
    if type(value) is not str:
        raise _Fallback
    msg.FromJsonString(value)


_WKT_PARSERS = {
    "google.protobuf.Struct": _parse_struct,
    "google.protobuf.Value": _parse_value,
    "google.protobuf.ListValue": _parse_list,
    _TIMESTAMP: _parse_timestamp,
}


def _message_parser(desc: _Desc) -> Any:
    """(JSON value, message of type ``desc``, depth) → None, filling the message."""
    full = desc.full_name
    if full in _WKT_PARSERS:
        return _WKT_PARSERS[full]
    if full in _OPAQUE or desc.file.name == "google/protobuf/wrappers.proto":
        return None
    decode = _decoder(desc)

    def message_value(value: Any, msg: Any, depth: int) -> None:
        if type(value) is not dict:
            raise _Fallback
        decode(value, msg, depth + 1)

    return message_value


def _setter(fd: _Field) -> _Setter:
    """(message, JSON value, depth) → None for ``fd``, or None when every
    value goes to json_format."""
    name = fd.name
    if _is_map(fd):
        key_fd = fd.message_type.fields_by_name["key"]
        value_fd = fd.message_type.fields_by_name["value"]
        if key_fd.type != _FD.TYPE_STRING:
            return None
        if value_fd.type == _FD.TYPE_MESSAGE:
            if value_fd.message_type.full_name in _OPAQUE:
                return None
            parse_value = _message_parser(value_fd.message_type)
            if parse_value is None:
                return None

            def set_message_map(msg: Any, value: Any, depth: int) -> None:
                if type(value) is not dict:
                    raise _Fallback
                target = getattr(msg, name)
                for key in value:
                    item = value[key]
                    if type(item) is not dict:
                        raise _Fallback
                    parse_value(item, target[_text(key)], depth)

            return set_message_map
        conv = _item_conv(value_fd)
        if conv is None:
            return None

        def set_scalar_map(msg: Any, value: Any, depth: int) -> None:
            if type(value) is not dict:
                raise _Fallback
            target = getattr(msg, name)
            for key in value:
                target[_text(key)] = conv(value[key])

        return set_scalar_map
    if fd.type == _FD.TYPE_MESSAGE:
        parse_message = _message_parser(fd.message_type)
        if parse_message is None:
            return None
        if fd.is_repeated:

            def set_messages(msg: Any, value: Any, depth: int) -> None:
                if type(value) is not list:
                    raise _Fallback
                add = getattr(msg, name).add
                for item in value:
                    if item is None:
                        raise _Fallback
                    parse_message(item, add(), depth)

            return set_messages

        def set_message(msg: Any, value: Any, depth: int) -> None:
            sub = getattr(msg, name)
            sub.SetInParent()
            parse_message(value, sub, depth)

        return set_message
    conv = _item_conv(fd)
    if conv is None:
        return None
    if fd.is_repeated:

        def set_scalars(msg: Any, value: Any, depth: int) -> None:
            if type(value) is not list:
                raise _Fallback
            getattr(msg, name).extend([conv(item) for item in value])

        return set_scalars

    def set_scalar(msg: Any, value: Any, depth: int) -> None:
        setattr(msg, name, conv(value))

    return set_scalar


def _needs_reference(value: Any, msg: Any, depth: int) -> None:
    raise _Fallback


def _decoder(desc: _Desc) -> _Decoder:
    """The compiled decoder of ``desc``: (JSON object, empty message, depth) →
    None, built once per type (see :mod:`a2a_grpc.typecache`)."""
    return _DECODERS.get(desc)


def _compile_decoder(desc: _Desc) -> _Decoder:
    """Builds the decoder of ``desc``, registered with the cache before its
    table is filled (types may contain themselves)."""
    # key → (field number, oneof name or None, setter)
    table: dict[str, tuple[int, str | None, _Setter]] = {}

    def decode(obj: dict[str, Any], msg: Any, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Fallback
        seen: set[int | str] = set()
        for key in obj:
            entry = table.get(key)
            if entry is None:
                if key[:1] == "[":
                    raise _Fallback  # extension syntax: json_format may refuse it
                continue  # unknown fields are ignored (spec §5.7)
            number, oneof, set_value = entry
            value = obj[key]
            if value is None or number in seen:
                raise _Fallback  # null clears or sets null_value; one field under both names
            seen.add(number)
            if oneof is not None:
                if oneof in seen:
                    raise _Fallback  # json_format refuses two members of a oneof
                seen.add(oneof)
            set_value(msg, value, depth)

    names = {n for fd in desc.fields for n in (fd.name, fd.json_name)}
    if any(o.name in names for o in desc.oneofs):
        # json_format tracks oneof names among the keys it has seen: leave such
        # a type entirely to it.
        _DECODERS.building(desc, _needs_reference)
        return _needs_reference
    _DECODERS.building(desc, decode)
    entries = []
    for fd in desc.fields:
        oneof = fd.containing_oneof
        entries.append(
            (fd, (fd.number, oneof.name if oneof is not None else None, _setter(fd) or _needs_reference))
        )
    # json_format looks a key up among json names first, then proto names.
    for fd, entry in entries:
        table[fd.name] = entry
    for fd, entry in entries:
        table[fd.json_name] = entry
    return decode


_CLASSES: dict[str, type[message.Message]] = {}


def message_class(desc: _Desc) -> type[message.Message]:
    """The generated class of a message descriptor (cached)."""
    cls = _CLASSES.get(desc.full_name)
    if cls is None:
        cls = _CLASSES[desc.full_name] = message_factory.GetMessageClass(desc)
    return cls


_DECODERS: TypeCache[_Decoder] = TypeCache(_compile_decoder)
