"""A seeded generator of hostile inputs for the three bindings.

Each input starts from a valid request of a random A2A RPC and is mutated:
JSON values replaced by hostile ones (lone surrogates, integers beyond the
double range, ``1e400``, deep nesting, wrong types, path words as tenants,
control characters, huge strings, unknown enum names), JSON text cut or
corrupted, JSON-RPC envelopes broken, REST paths, queries and headers
garbled, and for gRPC random messages of the RPC's input type (NaN and
infinities included) or corrupted protobuf bytes. The same seed gives the
same inputs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb
from tests.randmsg import fill

__all__ = ["GrpcInput", "HttpInput", "Inputs"]

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
RPCS = [m.name for m in SERVICE.methods]

#: Values that once broke a JSON binding, and their relatives. A str holding a
#: lone surrogate becomes a ``\\udxxx`` escape in json.dumps; BIG_INT/INF are
#: replaced in the text (json.dumps cannot write 1e400).
_BIG_INT = "__BIG_INT__"
_INF = "__INF__"
_NASTY: list[Any] = [
    "\udfff",
    "a\ud800b",
    "\udbff\udbff",
    _BIG_INT,
    _INF,
    -(10**20),
    2**63,
    2**64,
    -1,
    0,
    1.5e308,
    5e-324,
    "",
    "tasks",
    "message",
    "extendedAgentCard",
    "a/b",
    "a:b",
    "a\nb",
    "\x00",
    "\u2028",
    "ROLE_NOPE",
    "TASK_STATE_COMPLETED",
    "NaN",
    "Infinity",
    "-Infinity",
    "9" * 40,
    "x" * 300,
    None,
    True,
    [],
    {},
    [[[[]]]],
    {"@type": "type.googleapis.com/google.protobuf.Empty"},
    "2026-13-45T99:99:99Z",
    "AAAA====",
    "日本語 😀",
]
_TEXT_SUBST = {f'"{_BIG_INT}"': "1" + "0" * 400, f'"{_INF}"': "1e400"}


def _deep(depth: int, rng: random.Random) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _nasty(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.06:
        return _deep(rng.choice([31, 33, 40, 60, 120, 2000]), rng)
    if roll < 0.1:
        return "x" * rng.choice([1000, 70_000])
    return rng.choice(_NASTY)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if len(prefix) > 12:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return root


def _message(rng: random.Random, task_ids: list[str]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": "hello " + str(rng.randrange(1000))}]
    if rng.random() < 0.4:
        parts.append({"data": {"n": rng.random(), "list": [1, "two", None, True], "nested": {"a": {"b": 1}}}})
    if rng.random() < 0.2:
        parts.append({"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "h.txt"})
    if rng.random() < 0.1:
        parts.append({"url": "https://example.com/x", "mediaType": "text/plain"})
    msg: dict[str, Any] = {"messageId": f"m{rng.randrange(10**9)}", "role": "ROLE_USER", "parts": parts}
    if rng.random() < 0.3:
        msg["metadata"] = {"k": "v", "n": 1}
    if task_ids and rng.random() < 0.2:
        msg["taskId"] = rng.choice(task_ids)
    return msg


def valid_params(rpc: str, rng: random.Random, task_ids: list[str]) -> dict[str, Any]:
    """A well-formed request of ``rpc`` as ProtoJSON."""
    tid = rng.choice(task_ids) if task_ids else "no-such-task"
    tenant = {"tenant": rng.choice(["t1", "acme"])} if rng.random() < 0.2 else {}
    if rpc in ("SendMessage", "SendStreamingMessage"):
        out: dict[str, Any] = {"message": _message(rng, task_ids), **tenant}
        if rng.random() < 0.3:
            out["configuration"] = {"historyLength": rng.randrange(3), "acceptedOutputModes": ["text/plain"]}
        if rng.random() < 0.2:
            out["metadata"] = {"trace": "x"}
        return out
    if rpc == "ListTasks":
        return {"pageSize": rng.randrange(1, 60), "includeArtifacts": rng.random() < 0.5, **tenant}
    if rpc in ("GetTask", "CancelTask", "SubscribeToTask"):
        return {"id": tid, **tenant}
    if rpc == "CreateTaskPushNotificationConfig":
        return {"taskId": tid, "url": "https://example.com/hook", "token": "t", **tenant}
    if rpc in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        return {"taskId": tid, "id": "c1", **tenant}
    if rpc == "ListTaskPushNotificationConfigs":
        return {"taskId": tid, **tenant}
    return dict(tenant)


def mutate_json(value: Any, rng: random.Random) -> str:
    """JSON text of ``value`` after 0-3 hostile replacements."""
    value = json.loads(json.dumps(value))
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        path = rng.choice(_paths(value))
        value = _set(value, path, _nasty(rng))
    if rng.random() < 0.15 and isinstance(value, dict):
        value[rng.choice(["unknownField", "message", "id", "tenant", "metadata"])] = _nasty(rng)
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):
        text = "[" * 5000 + "]" * 5000
    for marker, literal in _TEXT_SUBST.items():
        text = text.replace(marker, literal)
    return text


def corrupt_text(text: str, rng: random.Random) -> bytes:
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    roll = rng.random()
    if roll < 0.3 and data:
        del data[rng.randrange(len(data)) :]
    elif roll < 0.6 and data:
        data[rng.randrange(len(data))] = rng.randrange(256)
    elif roll < 0.8:
        pos = rng.randrange(len(data) + 1)
        data[pos:pos] = rng.choice([b"\\ud800", b"\xff", b"\\u0000", b"NaN", b"1e999", b'"', b"{", b","])
    else:
        data = bytearray(rng.randbytes(rng.randrange(1, 64)))
    return bytes(data)


@dataclass
class HttpInput:
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str] = field(default_factory=dict)
    stream: bool = False


@dataclass
class GrpcInput:
    rpc: str
    payload: bytes
    metadata: tuple[tuple[str, str], ...]


_HEADER_VALUES = ["1.0", "1.0", "1.0", "0.3", "9.9", "", "1.0, 2.0", "abc", "1." + "0" * 300]
_CONTENT_TYPES = ["application/json"] * 6 + [
    "application/a2a+json",
    "text/plain",
    "application/json; charset=latin1",
    "",
]


def _headers(rng: random.Random) -> dict[str, str]:
    if rng.random() < 0.85:
        return {"A2A-Version": "1.0", "Content-Type": "application/json"}
    h = {"A2A-Version": rng.choice(_HEADER_VALUES), "Content-Type": rng.choice(_CONTENT_TYPES)}
    if rng.random() < 0.1:
        h["A2A-Extensions"] = rng.choice(["https://x/ext", ",,,", "a" * 500, "ü"])
    if not h["Content-Type"]:
        del h["Content-Type"]
    return h


class Inputs:
    """Seeded inputs; ``task_ids`` are ids of tasks that exist (fed back by
    the runner so that inputs also reach existing tasks)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.task_ids: list[str] = []

    def jsonrpc(self, url_path: str = "/") -> HttpInput:
        rng = self.rng
        rpc = rng.choice(RPCS)
        params = valid_params(rpc, rng, self.task_ids)
        envelope: Any = {"jsonrpc": "2.0", "id": rng.choice([1, "a", 2**53, 1.5, "x" * 10]), "method": rpc}
        envelope["params"] = params
        roll = rng.random()
        if roll < 0.75:
            text = mutate_json(envelope, rng)
        elif roll < 0.9:
            text = json.dumps(envelope)
            body = corrupt_text(text, rng)
            return HttpInput("POST", url_path, body, _headers(rng), stream=rpc in _STREAMING)
        else:
            text = json.dumps(rng.choice([[envelope], envelope["params"], "x", 1, None, [], {}]))
        return HttpInput(
            "POST", url_path, text.encode("utf-8", "surrogatepass"), _headers(rng), rpc in _STREAMING
        )

    def rest(self) -> HttpInput:
        rng = self.rng
        rpc = rng.choice(RPCS)
        params = valid_params(rpc, rng, self.task_ids)
        method, path, body, query = _rest_shape(rpc, params)
        if rng.random() < 0.3:
            path = _garble_path(path, rng)
        if rng.random() < 0.25:
            query.append((rng.choice(_QUERY_KEYS), rng.choice(_QUERY_VALUES)))
        if rng.random() < 0.05:
            method = rng.choice(["PUT", "PATCH", "DELETE", "GET", "POST", "OPTIONS"])
        raw: bytes | None = None
        if body is not None:
            raw = (
                mutate_json(body, rng).encode("utf-8", "surrogatepass")
                if rng.random() < 0.8
                else corrupt_text(json.dumps(body), rng)
            )
        elif rng.random() < 0.05:
            raw = corrupt_text("{}", rng)
        if query:
            path += "?" + "&".join(f"{quote(k, safe='')}={v}" for k, v in query)
        return HttpInput(method, path, raw, _headers(rng), stream=rpc in _STREAMING)

    def grpc(self) -> GrpcInput:
        rng = self.rng
        rpc = rng.choice(RPCS)
        cls = protojson.message_class(SERVICE.methods_by_name[rpc].input_type)
        roll = rng.random()
        if roll < 0.45:
            msg = fill(cls(), rng, depth=rng.randrange(1, 4), nan_in_values=rng.random() < 0.3)
            payload = msg.SerializeToString()
        else:
            msg = cls()
            params = valid_params(rpc, rng, self.task_ids)
            protojson.parse(params, msg)
            if roll < 0.75:
                _poke_proto(msg, rng)
                payload = msg.SerializeToString()
            else:
                payload = corrupt_text(msg.SerializeToString().decode("latin-1"), rng)
        md = (("a2a-version", "1.0" if rng.random() < 0.85 else rng.choice(_HEADER_VALUES)),)
        return GrpcInput(rpc, payload, md)


_STREAMING = {m.name for m in SERVICE.methods if m.server_streaming}
_QUERY_KEYS = [
    "historyLength",
    "pageSize",
    "status",
    "contextId",
    "pageToken",
    "statusTimestampAfter",
    "includeArtifacts",
    "tenant",
    "id",
    "A2A-Version",
    "unknown",
    "history_length",
]
_QUERY_VALUES = [
    "1e400",
    "-1",
    "99999999999999999999",
    "%ED%A0%80",
    "%FF",
    "%0A",
    "TASK_STATE_NOPE",
    "true",
    "yes",
    "",
    "2026-13-01T00:00:00Z",
    "NaN",
    "a%2Fb",
    "%00",
    "1.5",
    "x" * 2000,
]


def _rest_shape(rpc: str, params: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None, list]:
    tenant = params.pop("tenant", "")
    pre = f"/{quote(tenant, safe='')}" if tenant else ""
    q: list[tuple[str, str]] = []
    if rpc == "SendMessage":
        return "POST", pre + "/message:send", params, q
    if rpc == "SendStreamingMessage":
        return "POST", pre + "/message:stream", params, q
    if rpc == "GetTask":
        return "GET", f"{pre}/tasks/{quote(params['id'], safe='')}", None, q
    if rpc == "ListTasks":
        q = [
            (k, quote(str(v).lower() if isinstance(v, bool) else str(v), safe="")) for k, v in params.items()
        ]
        return "GET", pre + "/tasks", None, q
    if rpc == "CancelTask":
        return "POST", f"{pre}/tasks/{quote(params.pop('id'), safe='')}:cancel", params, q
    if rpc == "SubscribeToTask":
        return "GET", f"{pre}/tasks/{quote(params['id'], safe='')}:subscribe", None, q
    task = quote(params.get("taskId", "x"), safe="")
    if rpc == "CreateTaskPushNotificationConfig":
        params.pop("taskId", None)
        return "POST", f"{pre}/tasks/{task}/pushNotificationConfigs", params, q
    if rpc == "ListTaskPushNotificationConfigs":
        return "GET", f"{pre}/tasks/{task}/pushNotificationConfigs", None, q
    if rpc in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        verb = "GET" if rpc.startswith("Get") else "DELETE"
        return verb, f"{pre}/tasks/{task}/pushNotificationConfigs/c1", None, q
    return "GET", pre + "/extendedAgentCard", None, q


_SEGMENTS = [
    "tasks",
    "%0A",
    "%ED%A0%80",
    "%FF",
    "..",
    "",
    "a%2Fb",
    "%00",
    "message:send",
    "x:cancel",
    "%F0%9F%98%80",
    "extendedAgentCard",
    "pushNotificationConfigs",
    "t" * 300,
    ":subscribe",
    "%",
]


def _garble_path(path: str, rng: random.Random) -> str:
    segments = path.split("/")
    i = rng.randrange(1, len(segments)) if len(segments) > 1 else 0
    roll = rng.random()
    if roll < 0.5:
        segments[i] = rng.choice(_SEGMENTS)
    elif roll < 0.8:
        segments.insert(i, rng.choice(_SEGMENTS))
    else:
        del segments[i:]
    out = "/".join(segments)
    return out if out.startswith("/") else "/" + out


def _poke_proto(msg: Any, rng: random.Random) -> None:
    """Sets a hostile value where it fits a proto request: NaN/inf in Values,
    path words as tenants, control characters in ids, deep Structs."""
    roll = rng.random()
    if roll < 0.25 and hasattr(msg, "tenant"):
        msg.tenant = rng.choice(["tasks", "message", "a/b", "a\nb", "x" * 300, "ok"])
    elif roll < 0.5 and msg.DESCRIPTOR.name == "SendMessageRequest":
        part = msg.message.parts.add()
        part.data.list_value.values.add().number_value = rng.choice(
            [float("nan"), float("inf"), -float("inf")]
        )
    elif roll < 0.75 and msg.DESCRIPTOR.name == "SendMessageRequest":
        node = msg.message.metadata
        for _ in range(rng.choice([31, 32, 33, 45])):
            node = node.fields["d"].struct_value
    elif hasattr(msg, "id"):
        msg.id = rng.choice(["\x7f", "a:b", "", "tasks", "x" * 257])
