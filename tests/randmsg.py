"""Random protobuf messages of any type, for property-style equivalence tests.

``fill(msg, rng)`` sets a random subset of ``msg``'s fields (oneofs get at most
one member; maps, repeated fields, nested messages and the well-known types
Timestamp, Duration, Struct, Value, ListValue, FieldMask, Any and the wrappers
get plausible values), with the awkward cases mixed in: unknown enum numbers,
ids with ``/`` or control characters, negative counts, non-ASCII and U+2028
text, whole and huge numbers in Struct values, 64-bit integers, NaN and
infinities in float fields, and timestamps with 0, 3, 6 or 9 fractional digits.
"""

from __future__ import annotations

import random
from typing import Any

from google.protobuf import any_pb2, descriptor, message

_FD = descriptor.FieldDescriptor
_STRINGS = [
    "",
    "a",
    "hello world",
    "t/1",
    "c:2",
    "x\x01y",
    "Grüße ✓",
    "line\u2028sep",
    "日本語",
    "🙂" * 3,
    "a" * 300,
]
_INT32 = [0, 1, -1, 7, 2**31 - 1, -(2**31)]
_UINT32 = [0, 1, 7, 2**32 - 1]
_INT64 = [0, 1, -1, 2**53 + 1, 2**63 - 1, -(2**63)]
_UINT64 = [0, 1, 2**53 + 1, 2**64 - 1]
_DOUBLES = [
    0.0,
    -0.0,
    1.0,
    0.1,
    18.0,
    1e20,
    -2.5,
    2.0**60,
    float("nan"),
    float("inf"),
    float("-inf"),
    1.7976931348623157e308,
]
_FLOATS = [0.0, 1.0, 0.1, 3.4028234663852886e38, -1.5, float("inf"), float("nan")]
_JSON_NUMBERS = [0.0, 1.0, 18.0, -3.0, 0.5, 1e15, 2.0**53, 2.0**53 + 2, 1e300, -0.0]
_SECONDS = [0, 1, 1_700_000_000, 1_796_000_000, -62135596800, 253402300799, 86399]


def _scalar(fd: Any, rng: random.Random) -> Any:
    t = fd.type
    if t == _FD.TYPE_STRING:
        return rng.choice(_STRINGS)
    if t == _FD.TYPE_BYTES:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 9)))
    if t == _FD.TYPE_BOOL:
        return rng.random() < 0.5
    if t == _FD.TYPE_ENUM:
        numbers = [v.number for v in fd.enum_type.values]
        if not fd.enum_type.is_closed and rng.random() < 0.15:
            return rng.choice([99, -5, 12345])
        return rng.choice(numbers)
    if t in (_FD.TYPE_INT32, _FD.TYPE_SINT32, _FD.TYPE_SFIXED32):
        return rng.choice(_INT32)
    if t in (_FD.TYPE_UINT32, _FD.TYPE_FIXED32):
        return rng.choice(_UINT32)
    if t in (_FD.TYPE_INT64, _FD.TYPE_SINT64, _FD.TYPE_SFIXED64):
        return rng.choice(_INT64)
    if t in (_FD.TYPE_UINT64, _FD.TYPE_FIXED64):
        return rng.choice(_UINT64)
    if t == _FD.TYPE_DOUBLE:
        return rng.choice(_DOUBLES)
    if t == _FD.TYPE_FLOAT:
        return rng.choice(_FLOATS)
    raise AssertionError(f"unexpected field type {t}")


def _json(rng: random.Random, depth: int) -> Any:
    kinds = ["null", "bool", "number", "string"] + (["object", "list"] if depth > 0 else [])
    kind = rng.choice(kinds)
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "number":
        return rng.choice(_JSON_NUMBERS)
    if kind == "string":
        return rng.choice(_STRINGS)
    if kind == "list":
        return [_json(rng, depth - 1) for _ in range(rng.randrange(4))]
    return {
        rng.choice(["b", "a", "z", "k1", "ünï", "10", "2"]) + str(i): _json(rng, depth - 1)
        for i in range(rng.randrange(4))
    }


def fill(
    msg: message.Message, rng: random.Random, depth: int = 4, *, nan_in_values: bool = False
) -> message.Message:
    """Sets random fields of ``msg`` (in place) and returns it."""
    desc = msg.DESCRIPTOR
    full = desc.full_name
    if full == "google.protobuf.Timestamp":
        msg.seconds = rng.choice(_SECONDS)  # type: ignore[attr-defined]
        msg.nanos = rng.choice([0, 5_000_000, 123_000_000, 123_456_000, 123_456_789, 999_999_999])  # type: ignore[attr-defined]
        return msg
    if full == "google.protobuf.Duration":
        secs = rng.choice([0, 1, 3600, 315576000000])
        msg.seconds = secs  # type: ignore[attr-defined]
        msg.nanos = rng.choice([0, 1_000, 500_000_000])  # type: ignore[attr-defined]
        return msg
    if full == "google.protobuf.FieldMask":
        msg.paths.extend(rng.sample(["a", "b_c", "d.e_f"], rng.randrange(3)))  # type: ignore[attr-defined]
        return msg
    if full in ("google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"):
        value: Any
        if full == "google.protobuf.Struct":
            value = (
                _json(rng, 1)
                if depth <= 0
                else {f"k{i}": _json(rng, min(depth, 3)) for i in range(rng.randrange(4))}
            )
            msg.update(value if isinstance(value, dict) else {})  # type: ignore[attr-defined]
        elif full == "google.protobuf.ListValue":
            msg.extend([_json(rng, min(depth, 2)) for _ in range(rng.randrange(3))])  # type: ignore[attr-defined]
        else:
            value = _json(rng, min(depth, 3))
            if nan_in_values and rng.random() < 0.3:
                value = float("nan")
            _set_value(msg, value)
        return msg
    if full == "google.protobuf.Any":
        if depth > 0 and rng.random() < 0.7:
            from google.protobuf import timestamp_pb2

            inner = timestamp_pb2.Timestamp(seconds=rng.choice(_SECONDS[:4]), nanos=5_000_000)
            assert isinstance(msg, any_pb2.Any)
            msg.Pack(inner)
        return msg
    chosen = {
        o.name: rng.choice([None, *o.fields])
        for o in desc.oneofs
        if not o.fields[0].has_presence or len(o.fields) > 1
    }
    for fd in desc.fields:
        oneof = fd.containing_oneof
        if oneof is not None and oneof.name in chosen:
            if chosen[oneof.name] is not fd:
                continue
        elif rng.random() < 0.4:
            continue
        _set_field(msg, fd, rng, depth, nan_in_values)
    return msg


def _set_value(msg: Any, value: Any) -> None:
    if value is None:
        msg.null_value = 0
    elif isinstance(value, bool):
        msg.bool_value = value
    elif isinstance(value, float | int):
        msg.number_value = value
    elif isinstance(value, str):
        msg.string_value = value
    elif isinstance(value, list):
        msg.list_value.extend(value)
    else:
        msg.struct_value.update(value)


def _set_field(msg: Any, fd: Any, rng: random.Random, depth: int, nan: bool) -> None:
    is_map = fd.type == _FD.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry
    if is_map:
        key_fd = fd.message_type.fields_by_name["key"]
        value_fd = fd.message_type.fields_by_name["value"]
        target = getattr(msg, fd.name)
        for _ in range(rng.randrange(4)):
            key = _scalar(key_fd, rng)
            if value_fd.type == _FD.TYPE_MESSAGE:
                if depth > 0:
                    fill(target[key], rng, depth - 1, nan_in_values=nan)
            else:
                target[key] = _scalar(value_fd, rng)
        return
    if fd.is_repeated:
        target = getattr(msg, fd.name)
        for _ in range(rng.randrange(4)):
            if fd.type == _FD.TYPE_MESSAGE:
                if depth <= 0:
                    break
                fill(target.add(), rng, depth - 1, nan_in_values=nan)
            else:
                target.append(_scalar(fd, rng))
        return
    if fd.type == _FD.TYPE_MESSAGE:
        if depth > 0:
            sub = getattr(msg, fd.name)
            sub.SetInParent()
            fill(sub, rng, depth - 1, nan_in_values=nan)
        return
    setattr(msg, fd.name, _scalar(fd, rng))
