"""Compiled ProtoJSON decoders: JSON text → Python values → message.

The mirror of the encoders: per message type, once, a table from each field's
json name and proto name to a setter that does what ``json_format.ParseDict``
does with the field's value, in the same order (a repeated or map field is
replaced, a message field merged into, ``null`` clears; integers and enums
also by their other spellings). A value the setter does not take raises; the
document then goes to the reference
(:func:`~a2a_grpc.protocol.protojson._reference.parse_fallback`), which words the error.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf import message

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol._pbcompat import EXTENSION_KEY, UNPAIRED_SURROGATE, convert_float, convert_integer
from a2a_grpc.protocol._typecache import TypeCache
from a2a_grpc.protocol.protojson._plan import FD, OPAQUE, TIMESTAMP, Desc, Field, is_delegated, is_map
from a2a_grpc.protocol.protojson._reference import (
    MAX_DEPTH,
    delegated_parse,
    enum_numbers,
    parse_fallback,
    parse_reference,
)

__all__ = ["loads", "parse"]

M = TypeVar("M", bound=message.Message)

_Conv = Callable[[Any], Any]  # JSON value → field value
_Parser = Callable[[Any, Any, int], None]  # (JSON value, message, depth of its parent) → None
_Setter = Callable[[Any, Any, int], None]  # (message, JSON value, depth) → None
_Clearer = Callable[[Any], None]  # what ``null`` does to the field of a message
_Decoder = Callable[[dict[str, Any], Any, int], None]  # (JSON object, message, depth) → None
_INF = float("inf")
_NEG_INF = float("-inf")
_LISTS = (list, tuple)  # json_format's list-like JSON values


class _Decline(Exception):
    """The compiled decoder does not take this value: ask the reference."""


def _text(value: Any) -> str:
    if type(value) is not str or (not value.isascii() and UNPAIRED_SURROGATE.search(value)):
        raise _Decline
    return value


def _integer(value: Any) -> int:
    if type(value) is int:
        return value
    return convert_integer(value)  # "7", 7.0, "1e3"; raises for the rest


def _boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _Decline
    return value


def _base64(value: Any) -> bytes:
    if type(value) is not str:
        raise _Decline
    encoded = value.encode("utf-8")
    return base64.urlsafe_b64decode(encoded + b"=" * (4 - len(encoded) % 4))


def _float_conv(fd: Field) -> _Conv:
    if fd.type == FD.TYPE_FLOAT:
        return lambda value: convert_float(value, fd)  # range checks

    def double(value: Any) -> float:
        if type(value) is float and value == value and value not in (_INF, _NEG_INF):
            return value
        if type(value) is int:
            return float(value)
        return convert_float(value, fd)  # "NaN", "1.5", ...; raises for NaN and Infinity unquoted

    return double


def _enum_conv(fd: Field) -> _Conv:
    enum = fd.enum_type
    numbers = enum_numbers(enum)
    known = frozenset(enum.values_by_number)
    closed = enum.is_closed

    def conv(value: Any) -> int:
        number = numbers.get(value) if type(value) is str else None
        if number is not None:
            return number
        number = int(value)  # a number, or a number as text; raises for unknown names
        if closed and number not in known:
            raise _Decline
        return number

    return conv


def _item_conv(fd: Field) -> _Conv:
    """JSON value → field value for one scalar or enum value of ``fd``."""
    t = fd.type
    if t == FD.TYPE_STRING:
        return _text
    if t == FD.TYPE_BOOL:
        return _boolean
    if t == FD.TYPE_BYTES:
        return _base64
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return _float_conv(fd)
    if t == FD.TYPE_ENUM:
        return _enum_conv(fd)
    return _integer  # the integer types


def _key_conv(fd: Field) -> _Conv:
    """JSON object key → map key (json_format reads map keys as text)."""
    if fd.type == FD.TYPE_STRING:
        return _text
    if fd.type == FD.TYPE_BOOL:
        keys = {"true": True, "false": False}
        return lambda key: keys[key]
    return convert_integer


def _parse_value(value: Any, msg: Any, parent: int) -> None:
    """``json_format`` for a ``google.protobuf.Value``."""
    depth = parent + 1
    if depth > MAX_DEPTH:
        raise _Decline
    t = type(value)
    if t is str:
        msg.string_value = value
    elif t is dict:
        _parse_struct(value, msg.struct_value, depth)
    elif t is bool:
        msg.bool_value = value
    elif t is int or t is float:
        msg.number_value = value
    elif t in _LISTS:
        _parse_list(value, msg.list_value, depth)
    elif value is None:
        msg.null_value = 0
    else:
        raise _Decline


def _parse_struct(value: Any, msg: Any, parent: int) -> None:
    if type(value) is not dict or parent + 1 > MAX_DEPTH:
        raise _Decline
    msg.Clear()  # marks it present even when empty, as json_format does
    fields = msg.fields
    for key in value:
        _parse_value(value[key], fields[key], parent + 1)


def _parse_list(value: Any, msg: Any, parent: int) -> None:
    if type(value) not in _LISTS or parent + 1 > MAX_DEPTH:
        raise _Decline
    msg.ClearField("values")
    add = msg.values.add
    for item in value:
        _parse_value(item, add(), parent + 1)


#: RFC 3339 in UTC ("Z"), as every A2A peer writes it: parsed here; any other
#: form (offsets, lowercase, out-of-range fields) goes to protobuf's parser.
_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()
_UTC_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z\Z")


def _parse_timestamp(value: Any, msg: Any, parent: int) -> None:
    if type(value) is not str or parent + 1 > MAX_DEPTH:
        raise _Decline
    found = _UTC_TIMESTAMP.match(value)
    if found is None:
        msg.FromJsonString(value)
        return
    year, month, day, hour, minute, second, fraction = found.groups()
    h, m, s = int(hour), int(minute), int(second)
    try:
        days = datetime.date(int(year), int(month), int(day)).toordinal() - _EPOCH_DAY
    except ValueError:
        days = None
    if days is None or h > 23 or m > 59 or s > 59:
        msg.FromJsonString(value)  # words the error
        return
    msg.seconds = days * 86400 + h * 3600 + m * 60 + s
    msg.nanos = int(fraction.ljust(9, "0")) if fraction else 0


_WKT_PARSERS: dict[str, _Parser] = {
    "google.protobuf.Struct": _parse_struct,
    "google.protobuf.Value": _parse_value,
    "google.protobuf.ListValue": _parse_list,
    TIMESTAMP: _parse_timestamp,
}


def _message_parser(desc: Desc) -> _Parser:
    """(JSON value, message of type ``desc``, depth of its parent) → None,
    filling the message."""
    full = desc.full_name
    if full in _WKT_PARSERS:
        return _WKT_PARSERS[full]
    if is_delegated(desc):
        return delegated_parse
    decode = _DECODERS.get(desc)

    def message_value(value: Any, msg: Any, parent: int) -> None:
        if type(value) is not dict:
            raise _Decline
        decode(value, msg, parent + 1)

    return message_value


def _map_setter(fd: Field) -> _Setter:
    """The setter of map field ``fd``: the JSON object replaces the map."""
    name = fd.name
    key_conv = _key_conv(fd.message_type.fields_by_name["key"])
    value_fd = fd.message_type.fields_by_name["value"]
    if value_fd.type == FD.TYPE_MESSAGE:
        parse_value = _message_parser(value_fd.message_type)

        def set_message_map(msg: Any, value: Any, depth: int) -> None:
            msg.ClearField(name)
            if type(value) is not dict:
                raise _Decline
            target = getattr(msg, name)
            for key in value:
                parse_value(value[key], target[key_conv(key)], depth)

        return set_message_map
    conv = _item_conv(value_fd)

    def set_scalar_map(msg: Any, value: Any, depth: int) -> None:
        msg.ClearField(name)
        if type(value) is not dict:
            raise _Decline
        target = getattr(msg, name)
        for key in value:
            target[key_conv(key)] = conv(value[key])

    return set_scalar_map


def _repeated_setter(fd: Field) -> _Setter:
    """The setter of repeated field ``fd``: the JSON array replaces the list."""
    name = fd.name
    if fd.type == FD.TYPE_MESSAGE:
        parse_message = _message_parser(fd.message_type)
        nullable = fd.message_type.full_name == "google.protobuf.Value"

        def set_messages(msg: Any, value: Any, depth: int) -> None:
            msg.ClearField(name)
            if type(value) not in _LISTS:
                raise _Decline
            add = getattr(msg, name).add
            for item in value:
                if item is None and not nullable:
                    raise _Decline  # json_format refuses null in a list (but for a Value's null_value)
                parse_message(item, add(), depth)

        return set_messages
    conv = _item_conv(fd)

    def set_scalars(msg: Any, value: Any, depth: int) -> None:
        msg.ClearField(name)
        if type(value) not in _LISTS:
            raise _Decline
        getattr(msg, name).extend([conv(item) for item in value])

    return set_scalars


def _setter(fd: Field) -> _Setter:
    """(message, JSON value other than null, depth) → None for ``fd``."""
    if is_map(fd):
        return _map_setter(fd)
    if fd.is_repeated:
        return _repeated_setter(fd)
    name = fd.name
    if fd.type == FD.TYPE_MESSAGE:
        parse_message = _message_parser(fd.message_type)

        def set_message(msg: Any, value: Any, depth: int) -> None:
            sub = getattr(msg, name)
            sub.SetInParent()
            parse_message(value, sub, depth)

        return set_message
    conv = _item_conv(fd)

    def set_scalar(msg: Any, value: Any, depth: int) -> None:
        setattr(msg, name, conv(value))

    return set_scalar


def _refuse_null(msg: Any) -> None:
    raise _Decline


def _clearer(fd: Field) -> _Clearer:
    """What ``null`` does to ``fd``: a Value's ``null_value``, a NullValue's
    0, else the field is cleared (json_format fails on a repeated Value or
    NullValue: left to it)."""
    name = fd.name
    kind = ""
    if fd.type == FD.TYPE_MESSAGE and not is_map(fd):
        kind = fd.message_type.full_name
    elif fd.type == FD.TYPE_ENUM:
        kind = fd.enum_type.full_name
    if kind not in ("google.protobuf.Value", "google.protobuf.NullValue"):
        return lambda msg: msg.ClearField(name)
    if fd.is_repeated:
        return _refuse_null
    if kind == "google.protobuf.Value":
        return lambda msg: setattr(getattr(msg, name), "null_value", 0)
    return lambda msg: setattr(msg, name, 0)


def _compile_decoder(desc: Desc) -> _Decoder:
    """The decoder of ``desc``, registered with the cache before its table is
    filled (types may contain themselves)."""
    # key → (oneof name or None, setter, clearer)
    table: dict[str, tuple[str | None, _Setter, _Clearer]] = {}

    def decode(obj: dict[str, Any], msg: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise _Decline
        # json_format's names seen so far: keys, and the oneofs they set.
        seen: set[str] = set()
        for key in obj:
            entry = table.get(key)
            if entry is None:
                if key[:1] == "[" and EXTENSION_KEY.match(key):
                    raise _Decline  # json_format refuses extensions on a type without any
                continue  # unknown fields are ignored (spec §5.7)
            if key in seen:
                raise _Decline  # a key equal to a oneof's name, after a member of it
            seen.add(key)
            oneof, set_value, clear = entry
            value = obj[key]
            if value is None:
                clear(msg)
                continue
            if oneof is not None:
                if oneof in seen:
                    raise _Decline  # two members of one oneof
                seen.add(oneof)
            set_value(msg, value, depth)

    _DECODERS.building(desc, decode)
    entries = []
    for fd in desc.fields:
        oneof = fd.containing_oneof
        entries.append((fd, (oneof.name if oneof is not None else None, _setter(fd), _clearer(fd))))
    # json_format looks a key up among json names first, then proto names.
    for fd, entry in entries:
        table[fd.name] = entry
    for fd, entry in entries:
        table[fd.json_name] = entry
    return decode


_DECODERS: TypeCache[_Decoder] = TypeCache(_compile_decoder)


def parse(obj: Any, msg: M, *, prefix: str = "") -> M:
    """Merges the ProtoJSON value ``obj`` into ``msg`` (unknown fields are
    ignored; fields by json name or proto name; enums by name or number) and
    returns ``msg``. Raises A2AError(INVALID_PARAMS) with a BadRequest field
    violation naming the offending field (proto names, dotted, under
    ``prefix``); an enum name the enum does not have is such an error (spec
    §5.7: unknown *fields* are ignored, unknown values are not).

    An empty ``msg`` of a regular type is filled by its compiled decoder; a
    value that decoder does not take makes it clear ``msg`` and ask the
    reference, which gives the error. Anything else (not an object, a
    well-known type, merging into a message that is not empty) goes to
    :func:`~a2a_grpc.protocol.protojson._reference.parse_reference` by design."""
    if isinstance(obj, dict) and msg.DESCRIPTOR.full_name not in OPAQUE and msg.ByteSize() == 0:
        try:
            _DECODERS.get(msg.DESCRIPTOR)(obj, msg, 1)
            return msg
        except Exception as exc:  # _Decline, or an error the reference reports its own way
            msg.Clear()
            return parse_fallback(obj, msg, prefix, exc)
    return parse_reference(obj, msg, prefix=prefix)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_JSON_DECODER = json.JSONDecoder(parse_constant=_no_constant)
#: A ``\\u`` escape of a UTF-16 surrogate (paired or not) in JSON text.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> bool:
    """Whether a string (key or value) anywhere in ``value`` holds a lone
    surrogate (json.loads has already joined the valid pairs)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if _SURROGATE.search(item):
                return True
        elif type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


def loads(body: bytes | str) -> Any:
    """Parses a request body as strict JSON: UTF-8, no NaN or Infinity, and
    no ``\\u`` escape of a lone UTF-16 surrogate (``"\\udfff"``: I-JSON, RFC
    7493 §2.1; such a string has no UTF-8 form, so it could be neither
    stored, nor answered, nor echoed as a JSON-RPC id). Raises
    A2AError(PARSE_ERROR). Numbers are Python's: ``1e400`` reads as infinity,
    which the decoder of a message field refuses (see :func:`parse` and
    :mod:`a2a_grpc.protocol._validation`)."""
    try:
        # json.loads, without building a decoder per call.
        if isinstance(body, str):
            if body.startswith("\ufeff"):
                raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", body, 0)
            value = _JSON_DECODER.decode(body)
        else:
            value = _JSON_DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise A2AError(ErrorCode.PARSE_ERROR, f"invalid JSON: {exc}") from None
    raw = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    if _SURROGATE_ESCAPE.search(raw) and _lone_surrogate(value):
        raise A2AError(
            ErrorCode.PARSE_ERROR,
            "invalid JSON: a \\u escape encodes a lone UTF-16 surrogate (D800-DFFF), which is not a character",
        )
    return value
