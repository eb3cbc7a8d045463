"""Compiled ProtoJSON encoders: message → dict, and dict → JSON text.

json_format dispatches on every field's descriptor at every call. Instead, each
message type gets, once, a table from its field descriptors to a converter for
the value ``ListFields`` returns, so one message costs one ``ListFields`` and one
dict lookup per set field. The output is exactly
:func:`~a2a_grpc.protocol.protojson._reference.to_dict_reference`'s, key order included:
set fields in ``ListFields`` order, then the missing REQUIRED no-presence fields
in declaration order. Anything unusual (an extension, a Timestamp out of range,
...) raises inside the encoder, and :func:`to_dict` then asks
the reference (:func:`~a2a_grpc.protocol.protojson._reference.encode_fallback`), which
raises the error ProtoJSON gives for it.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
from collections.abc import Callable
from typing import Any

from google.protobuf import message

from a2a_grpc.protocol._pbcompat import shortest_float
from a2a_grpc.protocol._typecache import TypeCache
from a2a_grpc.protocol.protojson._plan import (
    FD,
    INT64,
    OPAQUE,
    TIMESTAMP,
    Desc,
    Field,
    fix_plan,
    is_delegated,
    is_map,
)
from a2a_grpc.protocol.protojson._reference import delegated_to_dict, encode_fallback, enum_json_name, whole

__all__ = ["dumps", "json_value", "to_dict", "to_json"]

_Conv = Any  # Callable[[Any], Any] | None (None: the value is already its JSON form)
_Encoder = Callable[[message.Message], dict[str, Any]]
_TS_MIN = -62135596800  # 0001-01-01T00:00:00Z, json_format's bounds
_TS_MAX = 253402300799  # 9999-12-31T23:59:59Z
_EPOCH = datetime.datetime(1970, 1, 1)
_MAX_EXACT = 2**53
_INF = float("inf")
_NEG_INF = float("-inf")


class _Decline(Exception):
    """The compiled encoder does not take this value: ask the reference."""


@functools.lru_cache(maxsize=4096)
def _seconds_text(seconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of a Timestamp's seconds (tasks of one period
    share them)."""
    return (_EPOCH + datetime.timedelta(seconds=seconds)).isoformat()


def _timestamp(ts: Any) -> str:
    """A Timestamp as UTC ``Z`` with exactly three fractional digits (what
    ``ToJsonString`` followed by ``millis`` gives)."""
    seconds, nanos = ts.seconds, ts.nanos
    if not _TS_MIN <= seconds <= _TS_MAX or not 0 <= nanos < 1_000_000_000:
        raise _Decline
    return f"{_seconds_text(seconds)}.{nanos // 1_000_000:03d}Z"


def _json_number(value: float) -> Any:
    if value != value or value in (_INF, _NEG_INF):
        return None  # no JSON form: null (see reference.finite_copy)
    return int(value) if value.is_integer() and -_MAX_EXACT <= value <= _MAX_EXACT else value


def _value(v: Any) -> Any:
    """``whole(MessageToDict(v))`` for a ``google.protobuf.Value``."""
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
    """``whole(MessageToDict(s))`` for a ``google.protobuf.Struct``."""
    fields = s.fields
    return {k: _value(fields[k]) for k in sorted(fields)}


def _list_value(lv: Any) -> list[Any]:
    return [_value(item) for item in lv.values]


_WHOLE_JSON = {
    "google.protobuf.Struct": _struct,
    "google.protobuf.Value": _value,
    "google.protobuf.ListValue": _list_value,
}


def _float_conv(fd: Field) -> _Conv:
    single = fd.cpp_type == FD.CPPTYPE_FLOAT

    def conv(value: float) -> Any:
        if value != value:
            return "NaN"
        if value == _INF:
            return "Infinity"
        if value == _NEG_INF:
            return "-Infinity"
        return shortest_float(value) if single else value

    return conv


def _bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("utf-8")


def _scalar_conv(fd: Field) -> _Conv:
    """The converter of one (non-repeated) scalar or enum value of ``fd``."""
    if fd.type == FD.TYPE_ENUM:
        enum = fd.enum_type
        if enum.full_name == "google.protobuf.NullValue":
            return lambda value: None
        # Unknown numbers of an open enum are written as numbers; a closed enum
        # never holds one (protobuf keeps it among the unknown fields).
        names = {v.number: enum_json_name(v) for v in enum.values}
        return lambda value: names.get(value, value)
    if fd.type == FD.TYPE_BYTES:
        return _bytes
    if fd.type in INT64:
        return str
    if fd.cpp_type in (FD.CPPTYPE_FLOAT, FD.CPPTYPE_DOUBLE):
        return _float_conv(fd)
    return None  # string, bool, 32-bit integers: already their JSON value


def _message_conv(desc: Desc, *, in_map: bool) -> _Conv:
    """The converter of one message value of type ``desc``. The reference
    fixes up Timestamps and Struct/Value/ListValue in singular and repeated
    fields but not as map values, which json_format alone renders."""
    full = desc.full_name
    if full == TIMESTAMP:
        return delegated_to_dict if in_map else _timestamp
    if full in _WHOLE_JSON:
        return delegated_to_dict if in_map else _WHOLE_JSON[full]
    if is_delegated(desc):
        return delegated_to_dict
    return _ENCODERS.get(desc)


def _map_key(key_fd: Field) -> Callable[[Any], str] | None:
    """Map key → JSON object key (None: string keys, already one)."""
    if key_fd.type == FD.TYPE_BOOL:
        return lambda k: "true" if k else "false"
    if key_fd.type == FD.TYPE_STRING:
        return None
    return str


def _map_conv(fd: Field) -> _Conv:
    value_fd = fd.message_type.fields_by_name["value"]
    if value_fd.type == FD.TYPE_MESSAGE:
        vconv = _message_conv(value_fd.message_type, in_map=True)
    else:
        vconv = _scalar_conv(value_fd)
    key = _map_key(fd.message_type.fields_by_name["key"])
    if key is None:
        if vconv is None:
            return lambda value: {k: value[k] for k in value}
        return lambda value: {k: vconv(value[k]) for k in value}
    if vconv is None:
        return lambda value: {key(k): value[k] for k in value}
    return lambda value: {key(k): vconv(value[k]) for k in value}


def _field_conv(fd: Field) -> _Conv:
    if is_map(fd):
        return _map_conv(fd)
    conv = _message_conv(fd.message_type, in_map=False) if fd.type == FD.TYPE_MESSAGE else _scalar_conv(fd)
    if not fd.is_repeated:
        return conv
    if conv is None:
        return list
    return lambda value: [conv(item) for item in value]


def _compile_encoder(desc: Desc) -> _Encoder:
    """The encoder of ``desc``. It is registered before its field table is
    filled, so types that contain themselves link to it directly."""
    table: dict[Any, tuple[str, _Conv]] = {}
    required: list[tuple[str, Any]] = fix_plan(desc).required

    def encode(msg: message.Message) -> dict[str, Any]:
        js: dict[str, Any] = {}
        for fd, value in msg.ListFields():
            name, conv = table[fd]  # KeyError for extensions: the reference handles them
            js[name] = value if conv is None else conv(value)
        for name, default in required:
            if name not in js:
                # A fresh [] or {} each time: callers may change the dict they get.
                js[name] = default.copy() if isinstance(default, list | dict) else default
        return js

    _ENCODERS.building(desc, encode)
    for fd in desc.fields:
        table[fd] = (fd.json_name, _field_conv(fd))
    return encode


_ENCODERS: TypeCache[_Encoder] = TypeCache(_compile_encoder)


def to_dict(msg: message.Message) -> dict[str, Any]:
    """The ProtoJSON object of ``msg`` (a dict ready for :func:`dumps`), as
    described in :mod:`a2a_grpc.protocol.protojson`. A NaN or infinite number in a
    ``Value`` (which requests may not carry, but a task stored by an older
    version or written by an agent may) is written as ``null``. Raises
    :data:`EncodeError` (json_format's ``SerializeToJsonError``) for values
    ProtoJSON cannot write (a Timestamp outside years 1–9999)."""
    desc = msg.DESCRIPTOR
    if desc.full_name in OPAQUE:
        return delegated_to_dict(msg)
    try:
        return _ENCODERS.get(desc)(msg)
    except Exception as exc:  # _Decline, or anything the reference reports its own way
        return encode_fallback(msg, exc)


def json_value(value: message.Message) -> Any:
    """The plain Python value of a ``google.protobuf.Value``/``Struct``/
    ``ListValue`` (whole numbers as ``int``; NaN and infinities as None),
    e.g. a data part's content."""
    fast = _WHOLE_JSON.get(value.DESCRIPTOR.full_name)
    if fast is not None:
        try:
            return fast(value)
        except _Decline as exc:
            encode_fallback(value, exc)  # raises: json_format refuses the same values
    return whole(delegated_to_dict(value))


# json.dumps with these settings, without building an encoder per call.
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
# What JSONEncoder.encode builds at every call for a dict or list (C speedups).
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _C_MAKE_ENCODER(
        None, _JSON_ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
    if _C_MAKE_ENCODER is not None
    else None
)


def dumps(obj: Any) -> str:
    """Compact JSON text of a dict/list built from :func:`to_dict` output:
    raw UTF-8, with U+2028 and U+2029 escaped (SSE-safe, one line). Raises
    TypeError for a value JSON has no form for (and RecursionError for a
    structure that contains itself, which no encoder output does)."""
    if _C_ENCODE is not None and type(obj) is dict:
        text = "".join(_C_ENCODE(obj, 0))
    else:
        text = _JSON_ENCODER.encode(obj)
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text


def to_json(msg: message.Message) -> str:
    """``dumps(to_dict(msg))``."""
    return dumps(to_dict(msg))
