"""The compiled ProtoJSON encoder writes exactly what json_format plus the
codec's fix-ups write (``protojson.to_dict_reference``): same dict, same key order,
same errors — for random messages of every A2A type, of a test type with every
field kind, and for the shapes the other gateway tests use."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from google.api import field_behavior_pb2
from google.protobuf import (  # the well-known files load before the test file that imports them
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    json_format,
    message,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)

from a2a_grpc.agents import load_agent
from a2a_grpc.core._executor import data_part, file_part, text_part
from a2a_grpc.errors import A2AError
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol.protojson import _decode as decode
from a2a_grpc.protocol.protojson import _encode as encode
from a2a_grpc.protocol.protojson import _plan as plan
from a2a_grpc.protocol.protojson import _reference as reference
from a2a_grpc.types import pb
from tests.randmsg import fill

_FDP = descriptor_pb2.FieldDescriptorProto


def _outcome(fn: Any, msg: message.Message) -> Any:
    try:
        out = fn(msg)
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))
    # dumps keeps key order: the JSON text must match too, not only the dict.
    return (out, json.dumps(out, ensure_ascii=False, sort_keys=False, allow_nan=True))


def _same(msg: message.Message) -> None:
    want = _outcome(protojson.to_dict_reference, msg)
    got = _outcome(protojson.to_dict, msg)
    if want[0] == "error":
        assert got == want, msg
    else:
        assert got[1] == want[1], msg


def _a2a_types() -> list[Any]:
    out = []

    def walk(desc: Any) -> None:
        if desc.GetOptions().map_entry:
            return
        out.append(desc)
        for nested in desc.nested_types:
            walk(nested)

    for desc in pb.DESCRIPTOR.message_types_by_name.values():
        walk(desc)
    return out


A2A_TYPES = _a2a_types()


@pytest.mark.parametrize("desc", A2A_TYPES, ids=[d.name for d in A2A_TYPES])
def test_random_a2a_messages(desc: Any) -> None:
    cls = protojson.message_class(desc)
    rng = random.Random(desc.full_name)
    _same(cls())
    for i in range(60):
        _same(fill(cls(), rng, depth=1 + i % 5, nan_in_values=i % 7 == 0))


def _kitchen_sink() -> type[message.Message]:
    """A proto3 type with every scalar kind, maps of every key kind and of
    messages/Timestamps/Values, the well-known types, oneofs, optional fields,
    and REQUIRED fields of each kind (A2A's own types have no 64-bit or float
    fields)."""
    file = descriptor_pb2.FileDescriptorProto(
        name="tests/codec_kitchen_sink.proto",
        package="codectest",
        syntax="proto3",
        dependency=[
            "google/protobuf/timestamp.proto",
            "google/protobuf/duration.proto",
            "google/protobuf/struct.proto",
            "google/protobuf/any.proto",
            "google/protobuf/wrappers.proto",
            "google/protobuf/field_mask.proto",
            "google/protobuf/empty.proto",
            "google/api/field_behavior.proto",
        ],
    )
    file.enum_type.add(name="Color").value.extend(
        [
            descriptor_pb2.EnumValueDescriptorProto(name=n, number=i)
            for i, n in enumerate(["COLOR_UNSPECIFIED", "RED", "BLUE"])
        ]
    )
    sink = file.message_type.add(name="Sink")
    sink.oneof_decl.add(name="pick")
    number = iter(range(1, 1000))
    scalar = {
        "i32": _FDP.TYPE_INT32,
        "i64": _FDP.TYPE_INT64,
        "u32": _FDP.TYPE_UINT32,
        "u64": _FDP.TYPE_UINT64,
        "s32": _FDP.TYPE_SINT32,
        "s64": _FDP.TYPE_SINT64,
        "fx32": _FDP.TYPE_FIXED32,
        "fx64": _FDP.TYPE_FIXED64,
        "sfx32": _FDP.TYPE_SFIXED32,
        "sfx64": _FDP.TYPE_SFIXED64,
        "f": _FDP.TYPE_FLOAT,
        "d": _FDP.TYPE_DOUBLE,
        "flag": _FDP.TYPE_BOOL,
        "text": _FDP.TYPE_STRING,
        "blob": _FDP.TYPE_BYTES,
    }
    wkt = {
        "ts": ".google.protobuf.Timestamp",
        "dur": ".google.protobuf.Duration",
        "st": ".google.protobuf.Struct",
        "val": ".google.protobuf.Value",
        "lv": ".google.protobuf.ListValue",
        "any": ".google.protobuf.Any",
        "w64": ".google.protobuf.Int64Value",
        "wstr": ".google.protobuf.StringValue",
        "fm": ".google.protobuf.FieldMask",
        "empty": ".google.protobuf.Empty",
        "child": ".codectest.Sink",
    }

    def add(name: str, **kw: Any) -> Any:
        return sink.field.add(name=name, number=next(number), label=_FDP.LABEL_OPTIONAL, **kw)

    def add_map(name: str, key: int, value: int, type_name: str = "") -> None:
        entry = sink.nested_type.add(name="".join(p.title() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=key, label=_FDP.LABEL_OPTIONAL)
        value_fd = entry.field.add(name="value", number=2, type=value, label=_FDP.LABEL_OPTIONAL)
        if type_name:
            value_fd.type_name = type_name
        add(
            name, type=_FDP.TYPE_MESSAGE, type_name=f".codectest.Sink.{entry.name}"
        ).label = _FDP.LABEL_REPEATED

    def required(fd: Any) -> None:
        fd.options.Extensions[field_behavior_pb2.field_behavior].append(field_behavior_pb2.REQUIRED)

    for name, t in scalar.items():
        add(name, type=t)
        add(f"many_{name}", type=t).label = _FDP.LABEL_REPEATED
    add("color", type=_FDP.TYPE_ENUM, type_name=".codectest.Color")
    add("colors", type=_FDP.TYPE_ENUM, type_name=".codectest.Color").label = _FDP.LABEL_REPEATED
    add("nothing", type=_FDP.TYPE_ENUM, type_name=".google.protobuf.NullValue")
    for name, t in wkt.items():
        add(name, type=_FDP.TYPE_MESSAGE, type_name=t)
        add(f"many_{name}", type=_FDP.TYPE_MESSAGE, type_name=t).label = _FDP.LABEL_REPEATED
    add_map("by_int", _FDP.TYPE_INT32, _FDP.TYPE_STRING)
    add_map("by_bool", _FDP.TYPE_BOOL, _FDP.TYPE_INT64)
    add_map("by_u64", _FDP.TYPE_UINT64, _FDP.TYPE_ENUM, ".codectest.Color")
    add_map("blobs", _FDP.TYPE_STRING, _FDP.TYPE_BYTES)
    add_map("doubles", _FDP.TYPE_STRING, _FDP.TYPE_DOUBLE)
    add_map("sinks", _FDP.TYPE_STRING, _FDP.TYPE_MESSAGE, ".codectest.Sink")
    add_map("times", _FDP.TYPE_STRING, _FDP.TYPE_MESSAGE, ".google.protobuf.Timestamp")
    add_map("values", _FDP.TYPE_STRING, _FDP.TYPE_MESSAGE, ".google.protobuf.Value")
    add_map("structs", _FDP.TYPE_STRING, _FDP.TYPE_MESSAGE, ".google.protobuf.Struct")
    add("pick_text", type=_FDP.TYPE_STRING, oneof_index=0)
    add("pick_sink", type=_FDP.TYPE_MESSAGE, type_name=".codectest.Sink", oneof_index=0)
    add("pick_value", type=_FDP.TYPE_MESSAGE, type_name=".google.protobuf.Value", oneof_index=0)
    for name, t in (("opt_int", _FDP.TYPE_INT32), ("opt_text", _FDP.TYPE_STRING)):
        sink.oneof_decl.add(name=f"_{name}")
        add(name, type=t, oneof_index=len(sink.oneof_decl) - 1, proto3_optional=True)
    for name, t in (
        ("req_text", _FDP.TYPE_STRING),
        ("req_i64", _FDP.TYPE_INT64),
        ("req_blob", _FDP.TYPE_BYTES),
    ):
        required(add(name, type=t))
    required(add("req_d", type=_FDP.TYPE_DOUBLE))
    required(add("req_color", type=_FDP.TYPE_ENUM, type_name=".codectest.Color"))
    req_list = add("req_list", type=_FDP.TYPE_STRING)
    req_list.label = _FDP.LABEL_REPEATED
    required(req_list)
    required(add("req_child", type=_FDP.TYPE_MESSAGE, type_name=".codectest.Sink"))
    required(add("req_ts", type=_FDP.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp"))
    add_map("req_map", _FDP.TYPE_STRING, _FDP.TYPE_STRING)
    required(sink.field[-1])
    assert {any_pb2.DESCRIPTOR.name, duration_pb2.DESCRIPTOR.name, empty_pb2.DESCRIPTOR.name}
    assert {field_mask_pb2.DESCRIPTOR.name, wrappers_pb2.DESCRIPTOR.name}
    pool = descriptor_pool.Default()
    try:
        desc = pool.FindMessageTypeByName("codectest.Sink")
    except KeyError:
        pool.Add(file)
        desc = pool.FindMessageTypeByName("codectest.Sink")
    return message_factory.GetMessageClass(desc)


def test_random_messages_with_every_field_kind() -> None:
    cls = _kitchen_sink()
    assert cls.DESCRIPTOR.fields_by_name["many_i64"].json_name == "manyI64"
    rng = random.Random(6)
    _same(cls())
    for i in range(400):
        _same(fill(cls(), rng, depth=1 + i % 3, nan_in_values=i % 5 == 0))


def test_every_field_kind_is_covered() -> None:
    # The random test above reaches each field of the test type at least once.
    cls = _kitchen_sink()
    rng = random.Random(6)
    seen: set[str] = set()
    for i in range(400):
        seen.update(fd.name for fd, _ in fill(cls(), rng, depth=1 + i % 3).ListFields())
    assert seen == {fd.name for fd in cls.DESCRIPTOR.fields}


def _ts(seconds: int, nanos: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)


def _fixtures() -> list[message.Message]:
    task = pb.Task(
        id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING, timestamp=_ts(1, 0))
    )
    task.history.add(message_id="m", role=pb.ROLE_USER, parts=[text_part("x"), file_part(b"\x01" * 100)])
    task.artifacts.add(artifact_id="a", parts=[data_part([1, "two", None, 2.5, {"b": 18.0, "a": [1e300]}])])
    task.metadata.update({"k": {"nested": True}, "n": 18, "f": 0.25})
    card = pb.AgentCard(name="n", capabilities=pb.AgentCapabilities())
    card.skills.add(id="s", name="S")
    return [
        pb.ListTasksResponse(),
        pb.ListTasksResponse(tasks=[task], next_page_token="x", page_size=1, total_size=7),
        pb.Task(id="t", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)),
        pb.ListTasksRequest(page_size=0, include_artifacts=False),
        card,
        load_agent("echo").card,
        pb.StreamResponse(message=pb.Message(message_id="m")),
        pb.StreamResponse(task=task),
        pb.SendMessageResponse(task=task),
        pb.Part(raw=b"\x00\xff\x10", media_type="application/octet-stream"),
        pb.Message(role=pb.ROLE_AGENT, parts=[text_part("Grüße \u2028 ✓")]),
        pb.TaskStatus(timestamp=_ts(1_796_000_000, 123_456_789)),
        pb.TaskStatus(timestamp=_ts(253402300800, 0)),  # past year 9999: json_format refuses it
        pb.TaskStatus(timestamp=_ts(0, -1)),
        struct_pb2.Struct(),
        _ts(5, 5),
    ]


@pytest.mark.parametrize("msg", _fixtures(), ids=lambda m: m.DESCRIPTOR.name)
def test_fixtures(msg: message.Message) -> None:
    _same(msg)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_in_a_value_are_null(number: float) -> None:
    # json_format refuses them; a task stored with one must stay readable.
    part = pb.Part()
    part.data.list_value.values.add().number_value = number
    part.data.list_value.values.add().number_value = 1.5
    part.metadata["n"] = number
    want = {"data": [None, 1.5], "metadata": {"n": None}}
    assert protojson.to_dict(part) == want
    assert protojson.to_dict_reference(part) == want
    assert protojson.json_value(part.data) == [None, 1.5]
    assert part.data.list_value.values[0].number_value != 1.5  # the message itself is untouched


def test_json_value_matches_the_reference() -> None:
    rng = random.Random(3)
    for _ in range(200):
        value = fill(struct_pb2.Value(), rng)
        assert protojson.json_value(value) == reference.whole(json_format.MessageToDict(value))


def test_the_encoder_is_compiled_for_a2a_types() -> None:
    # Guards the speed-up itself: A2A types do not end up on the reference path.
    protojson.to_dict(pb.SendMessageResponse(task=pb.Task(id="t")))
    for name in ("lf.a2a.v1.SendMessageResponse", "lf.a2a.v1.Task", "lf.a2a.v1.AgentCard"):
        desc = pb.DESCRIPTOR.pool.FindMessageTypeByName(name)
        protojson.to_dict(protojson.message_class(desc)())
        assert encode._ENCODERS.get(desc) is not protojson.to_dict_reference


# ---------------------------------------------------------------- decoder


def _parsed(fn: Any, obj: Any, cls: Any, prefix: str) -> Any:
    msg = cls()
    try:
        fn(copy.deepcopy(obj), msg, prefix=prefix)
    except A2AError as exc:
        return ("A2AError", exc.code, exc.message, [(v.field, v.description) for v in exc.field_violations])
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))
    return ("ok", msg.SerializeToString(deterministic=True), str(msg))


def _same_parse(obj: Any, cls: Any, prefix: str = "") -> bool:
    """Both decoders agree on ``obj``; True when the compiled one took it."""
    fallbacks = _FALLBACKS[0]
    got = _parsed(protojson.parse, obj, cls, prefix)
    took = _FALLBACKS[0] == fallbacks
    want = _parsed(protojson.parse_reference, obj, cls, prefix)
    assert got == want, obj
    return took


_FALLBACKS = [0]


@pytest.fixture(autouse=True)
def _count_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    def counting(fn: Any) -> Any:
        def counted(*args: Any, **kw: Any) -> Any:
            _FALLBACKS[0] += 1
            return fn(*args, **kw)

        return counted

    monkeypatch.setattr(decode, "parse_reference", counting(decode.parse_reference))
    monkeypatch.setattr(decode, "parse_fallback", counting(decode.parse_fallback))


_JUNK: list[Any] = [
    None, "", "text", "a/b", "\ud800", "NaN", "7", "1e3", " 7", "AAEC", "AAE", "_-8=", "ROLE_AGENT",
    "TASK_STATE_WORKING", "ROLE_NOPE", "2026-11-30T12:00:00.123456Z", "2026-13-30T12:00:00Z", 0, 1, -1, 2,
    7, 2**31, 2**70, 1.5, 3.0, 1e999, True, False, [], [None], ["x"], [1, "a"], [{}], {}, {"a": 1},
    {"text": "hi"}, {"messageId": "m", "parts": [{"text": "x"}]},
]  # fmt: skip


def _nodes(obj: Any, desc: Any, out: list[tuple[dict[str, Any], Any]]) -> None:
    """The JSON objects of regular messages inside ``obj``, with their descriptor."""
    if type(obj) is not dict or desc.full_name in plan.OPAQUE:
        return
    out.append((obj, desc))
    table = protojson.fields_by_any_name(desc)
    for key, value in obj.items():
        fd = table.get(key)
        if fd is None or fd.type != fd.TYPE_MESSAGE:
            continue
        if plan.is_map(fd):
            value_fd = fd.message_type.fields_by_name["value"]
            if value_fd.type == value_fd.TYPE_MESSAGE and type(value) is dict:
                for item in value.values():
                    _nodes(item, value_fd.message_type, out)
        elif fd.is_repeated:
            for item in value if type(value) is list else []:
                _nodes(item, fd.message_type, out)
        else:
            _nodes(value, fd.message_type, out)


def _mutate(obj: dict[str, Any], desc: Any, rng: random.Random) -> None:
    """One random change to a message object somewhere inside ``obj``."""
    nodes: list[tuple[dict[str, Any], Any]] = []
    _nodes(obj, desc, nodes)
    node, node_desc = rng.choice(nodes)
    fields = list(node_desc.fields)
    kind = rng.randrange(7)
    if kind <= 2 and fields:  # a field (by either name) gets an odd value
        fd = rng.choice(fields)
        node[rng.choice([fd.json_name, fd.name])] = copy.deepcopy(rng.choice(_JUNK))
    elif kind == 3 and node:  # a key written as the proto name (or dropped)
        key = rng.choice(list(node))
        fd = protojson.fields_by_any_name(node_desc).get(key)
        value = node.pop(key)
        if fd is not None and rng.random() < 0.8:
            node[fd.name] = value
    elif kind == 4 and node:  # the same field under both names
        key = rng.choice(list(node))
        fd = protojson.fields_by_any_name(node_desc).get(key)
        if fd is not None:
            node[fd.name if key == fd.json_name else fd.json_name] = copy.deepcopy(node[key])
    elif kind == 5:  # unknown keys
        node[rng.choice(["futureField", "[ext.field]", "x_y", "@type"])] = rng.choice(_JUNK)
    elif fields:  # a second member of a oneof, or a field copied from a random valid message
        oneof_fields = [fd for o in node_desc.oneofs for fd in o.fields if len(o.fields) > 1]
        fd = rng.choice(oneof_fields or fields)
        sample = protojson.to_dict_reference(fill(protojson.message_class(node_desc)(), rng, depth=2))
        if fd.json_name in sample:
            node[fd.json_name] = sample[fd.json_name]


@pytest.mark.parametrize("desc", A2A_TYPES, ids=[d.name for d in A2A_TYPES])
def test_decoder_matches_json_format(desc: Any) -> None:
    cls = protojson.message_class(desc)
    rng = random.Random("decode " + desc.full_name)
    fast = 0
    for i in range(40):
        obj = protojson.to_dict_reference(fill(cls(), rng, depth=1 + i % 5))
        fast += _same_parse(obj, cls)
        for _ in range(3):
            bad = copy.deepcopy(obj)
            for _ in range(1 + i % 3):
                _mutate(bad, desc, rng)
            _same_parse(bad, cls, prefix=rng.choice(["", "message", "a.b"]))
    assert fast >= 10, "the compiled decoder took too few of the valid documents"


def test_decoder_matches_json_format_on_every_field_kind() -> None:
    cls = _kitchen_sink()
    rng = random.Random("decode sink")
    for i in range(150):
        obj = protojson.to_dict_reference(fill(cls(), rng, depth=1 + i % 3))
        _same_parse(obj, cls)
        bad = copy.deepcopy(obj)
        _mutate(bad, cls.DESCRIPTOR, rng)
        _same_parse(bad, cls)


def test_decoder_takes_a_send_message_request() -> None:
    obj = {
        "message": {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [
                {"text": "hi"},
                {"raw": "AAEC", "mediaType": "x/y"},
                {"data": {"n": 18, "l": [1.5, None]}},
            ],
            "metadata": {"k": {"z": True}},
            "task_id": "t1",
            "referenceTaskIds": ["r1"],
        },
        "configuration": {
            "historyLength": 0,
            "acceptedOutputModes": ["text/plain"],
            "returnImmediately": True,
        },
        "futureField": {"x": 1},
    }
    assert _same_parse(obj, pb.SendMessageRequest)
    # Deep enough for json_format's recursion limit: both refuse it the same way.
    deep: Any = "leaf"
    for _ in range(120):
        deep = {"k": deep}
    _same_parse({"message": {"metadata": deep}}, pb.SendMessageRequest)


@pytest.mark.parametrize("kind", ["a2a", "sink"])
def test_decoder_matches_json_format_for_every_field_and_odd_value(kind: str) -> None:
    types = [protojson.message_class(d) for d in A2A_TYPES] if kind == "a2a" else [_kitchen_sink()]
    for cls in types:
        for fd in cls.DESCRIPTOR.fields:
            for value in _JUNK:
                _same_parse({fd.json_name: value}, cls)
            _same_parse({fd.name: "x", fd.json_name: "x"}, cls)


def test_dumps_equals_json_dumps_with_the_codec_settings() -> None:
    rng = random.Random("dumps")
    for desc in A2A_TYPES:
        for i in range(10):
            doc = protojson.to_dict(fill(protojson.message_class(desc)(), rng, depth=1 + i % 3))
            want = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
            assert protojson.dumps(doc) == want.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def test_timestamps_decode_like_protobuf() -> None:
    """The decoder's own RFC 3339 ``Z`` path (protobuf's parser takes 5x as
    long) gives what ``Timestamp.FromJsonString`` gives, errors included."""
    rng = random.Random(7)
    odd = [
        "2026-12-01T12:00:00+01:00",
        "2026-12-01t12:00:00z",
        "2026-02-29T00:00:00Z",
        "1972-06-30T23:59:60Z",
    ]
    for i in range(5000):
        fields = (rng.choice([1, 1969, 1970, 2024, 2026, 9999]), rng.randint(0, 13), rng.randint(0, 32))
        clock = (rng.randint(0, 25), rng.randint(0, 60), rng.randint(0, 61))
        fraction = rng.choice(["", ".", ".1", ".123", ".123456", ".123456789", ".0000000001"])
        text = "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}".format(*fields, *clock) + fraction + "Z"
        text = odd[i % len(odd)] if i % 50 == 0 else text
        expected, got = timestamp_pb2.Timestamp(), pb.TaskStatus()
        try:
            expected.FromJsonString(text)
        except ValueError:
            with pytest.raises(A2AError):
                protojson.parse({"timestamp": text}, got)
            continue
        protojson.parse({"timestamp": text}, got)
        assert got.timestamp == expected, text
