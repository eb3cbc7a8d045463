"""The A2A v0.3 JSON-RPC dialect as one declarative table (legacy digest §2).

:data:`DIALECT` holds one :class:`~a2a_grpc.dialects._mapping.Rule` per object
type (named after the v1.0 message), :data:`METHODS` one :class:`Method` per
v0.3 JSON-RPC method: the v1.0 RPC it calls, the rule of its ``params`` (the
v1.0 request message) and of its result. The structural hooks are the Part
shapes (``kind`` text/file/data, FilePart bytes/uri), the security schemes
(``type`` vs oneof wrappers) and the card's interfaces. ``final`` on status
updates is computed by the stream adapter (:func:`final_of`), not stored.

Lossy cases and the choice made for each are in docs/dialects.md (legacy
digest §7, C1–C21).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from a2a_grpc.dialects._mapping import Dialect, Hook, Rule
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol import protojson

__all__ = [
    "DIALECT",
    "METHODS",
    "PROTOCOL_VERSION",
    "Method",
    "card_json",
    "endpoint_fields",
    "error_object",
    "final_of",
    "hybrid_card",
    "legacy_card",
    "part_down",
    "part_up",
    "v03_interfaces",
]

#: The card's ``protocolVersion`` for v0.3 clients (full semver, legacy digest §2.6).
PROTOCOL_VERSION = "0.3.0"

Json = dict[str, Any]

STATES = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_AUTH_REQUIRED": "auth-required",
}
ROLES = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}
TERMINAL = frozenset({"completed", "canceled", "failed", "rejected"})
INTERRUPTED = frozenset({"input-required", "auth-required"})
#: Part metadata key flagging a v1.0 data value that is not an object (C4).
WRAPPED_KEY = "a2a-grpc/wrapped-data"


# ----------------------------------------------------------------- Part (hook)
def part_down(p: Json) -> Json:
    """The v0.3 JSON Part (``kind`` text / file / data) of the v1.0 ProtoJSON
    Part ``p``; a data value that is not an object is wrapped (C4)."""
    meta = p.get("metadata")
    out: Json = {}
    if "text" in p:
        out = {"kind": "text", "text": p["text"]}
    elif "raw" in p or "url" in p:
        file: Json = {"bytes": p["raw"]} if "raw" in p else {"uri": p["url"]}
        if p.get("mediaType"):
            file["mimeType"] = p["mediaType"]
        if p.get("filename"):
            file["name"] = p["filename"]
        out = {"kind": "file", "file": file}
    elif "data" in p:
        data = p["data"]
        if not isinstance(data, dict):  # C4: v0.3 data is an object
            data = {"value": data}  # the flag says whether the part had metadata of its own
            meta = {**(meta or {}), WRAPPED_KEY: meta is not None}
        out = {"kind": "data", "data": data}
    if meta is not None:
        out["metadata"] = meta
    return out


def part_up(p: Json) -> Json:
    """The v1.0 ProtoJSON Part of the v0.3 JSON Part ``p``; INVALID_PARAMS
    for an unknown ``kind`` or a file without bytes or uri."""
    kind = p.get("kind")
    out: Json = {}
    meta = p.get("metadata")
    if kind == "text":
        out["text"] = p.get("text", "")
    elif kind == "file":
        file = p.get("file")
        if not isinstance(file, dict):
            raise A2AError.invalid_params(FieldViolation("part.file", "must be a JSON object"))
        if file.get("bytes") is not None:  # a null is "not set" (clients that dump every field send both)
            out["raw"] = file["bytes"]
        elif file.get("uri") is not None:
            out["url"] = file["uri"]
        else:
            raise A2AError.invalid_params(FieldViolation("part.file", "needs bytes or uri"))
        if file.get("mimeType"):
            out["mediaType"] = file["mimeType"]
        if file.get("name"):
            out["filename"] = file["name"]
    elif kind == "data":
        data = p.get("data")
        if isinstance(meta, dict) and WRAPPED_KEY in meta and isinstance(data, dict) and "value" in data:
            data = data["value"]
            had = meta[WRAPPED_KEY] is True
            meta = {k: v for k, v in meta.items() if k != WRAPPED_KEY} if had else None
        out["data"] = data
    else:
        raise A2AError.invalid_params(
            FieldViolation("part.kind", f"must be 'text', 'file' or 'data', not {kind!r}")
        )
    if meta is not None:
        out["metadata"] = meta
    return out


# ------------------------------------------------------- security (hooks, card)
_SCHEME_TYPES = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}


def _scheme_down(s: Json) -> Json:
    for wrapper, type_name in _SCHEME_TYPES.items():
        if wrapper in s:
            body = dict(s[wrapper])
            if "location" in body:
                body["in"] = body.pop("location")
            flows = body.get("flows")
            if isinstance(flows, dict):  # v1.0-only flow and field (C12)
                flows.pop("deviceCode", None)
                for flow in flows.values():
                    if isinstance(flow, dict):
                        flow.pop("pkceRequired", None)
            return {"type": type_name, **body}
    return {}


def _scheme_up(s: Json) -> Json:
    body = dict(s)
    type_name = body.pop("type", None)
    for wrapper, name in _SCHEME_TYPES.items():
        if name == type_name:
            if "in" in body:
                body["location"] = body.pop("in")
            return {wrapper: body}
    raise A2AError.invalid_params(FieldViolation("securityScheme.type", f"unknown type {type_name!r}"))


def _requirement_down(r: Json) -> Json:
    return {name: list(v.get("list", [])) for name, v in r.get("schemes", {}).items()}


def _requirement_up(r: Json) -> Json:
    for name, scopes in r.items():
        if not isinstance(scopes, list):
            raise A2AError.invalid_params(
                FieldViolation(f"security.{name}", "must be a JSON array of scopes")
            )
    return {"schemes": {name: {"list": list(v)} for name, v in r.items()}}


def _skip(value: Json) -> Json:
    return value


# --------------------------------------------------------------- auth info (C1)
def _auth_down(a: Json) -> Json:
    out = {k: v for k, v in a.items() if k != "scheme"}
    out["schemes"] = [a["scheme"]] if a.get("scheme") else []
    return out


def _auth_up(a: Json) -> Json:
    out = {k: v for k, v in a.items() if k != "schemes"}
    schemes = a.get("schemes") or []
    if not isinstance(schemes, list):
        raise A2AError.invalid_params(FieldViolation("authentication.schemes", "must be a JSON array"))
    if schemes:
        out["scheme"] = schemes[0]  # C1: the first scheme is kept
    return out


_MESSAGE_UNION = {"task": "Task", "message": "Message"}
_EVENT_UNION = {
    **_MESSAGE_UNION,
    "statusUpdate": "TaskStatusUpdateEvent",
    "artifactUpdate": "TaskArtifactUpdateEvent",
}
_PUSH_FIELDS = frozenset({"id", "url", "token", "authentication"})

#: The object table (v1.0 message name → its v0.3 JSON-RPC form).
DIALECT = Dialect(
    "v0.3",
    {
        "Part": Rule(hook=Hook(part_down, part_up)),
        "Message": Rule(kind="message", types={"parts": "Part"}, enums={"role": ROLES}),
        "TaskStatus": Rule(types={"message": "Message"}, enums={"state": STATES}),
        "Artifact": Rule(types={"parts": "Part"}),
        "Task": Rule(
            kind="task", types={"status": "TaskStatus", "artifacts": "Artifact", "history": "Message"}
        ),
        "TaskStatusUpdateEvent": Rule(
            kind="status-update", types={"status": "TaskStatus"}, ignore=frozenset({"final"})
        ),
        "TaskArtifactUpdateEvent": Rule(kind="artifact-update", types={"artifact": "Artifact"}),
        "StreamResponse": Rule(union=_EVENT_UNION),
        "SendMessageResponse": Rule(union=_MESSAGE_UNION),
        "AuthenticationInfo": Rule(hook=Hook(_auth_down, _auth_up)),
        # v1.0 TaskPushNotificationConfig without its task: the v0.3 PushNotificationConfig.
        "PushNotificationConfig": Rule(
            types={"authentication": "AuthenticationInfo"}, drop=frozenset({"tenant", "taskId"})
        ),
        "TaskPushNotificationConfig": Rule(
            types={"authentication": "AuthenticationInfo"},
            drop=frozenset({"tenant"}),
            nest=("pushNotificationConfig", _PUSH_FIELDS),
        ),
        "SendMessageConfiguration": Rule(
            rename={"taskPushNotificationConfig": "pushNotificationConfig"},
            types={"taskPushNotificationConfig": "PushNotificationConfig"},
            invert={"returnImmediately": "blocking"},  # C6
            zero_unset=frozenset({"historyLength"}),  # C7
        ),
        "SendMessageRequest": Rule(
            types={"message": "Message", "configuration": "SendMessageConfiguration"},
            drop=frozenset({"tenant"}),
        ),
        "GetTaskRequest": Rule(
            drop=frozenset({"tenant"}),
            ignore=frozenset({"metadata"}),
            zero_unset=frozenset({"historyLength"}),
        ),
        "CancelTaskRequest": Rule(drop=frozenset({"tenant"})),
        "SubscribeToTaskRequest": Rule(drop=frozenset({"tenant"}), ignore=frozenset({"metadata"})),
        "GetTaskPushNotificationConfigRequest": Rule(
            rename={"taskId": "id", "id": "pushNotificationConfigId"},
            drop=frozenset({"tenant"}),
            ignore=frozenset({"metadata"}),
        ),
        "ListTaskPushNotificationConfigsRequest": Rule(  # v0.3 lists without pages (C12)
            rename={"taskId": "id"},
            drop=frozenset({"tenant", "pageSize", "pageToken"}),
            ignore=frozenset({"metadata"}),
        ),
        "DeleteTaskPushNotificationConfigRequest": Rule(
            rename={"taskId": "id", "id": "pushNotificationConfigId"},
            drop=frozenset({"tenant"}),
            ignore=frozenset({"metadata"}),
        ),
        "GetExtendedAgentCardRequest": Rule(drop=frozenset({"tenant"})),
        "SecurityScheme": Rule(hook=Hook(_scheme_down, _scheme_up)),
        "SecurityRequirement": Rule(hook=Hook(_requirement_down, _requirement_up)),
        "AgentSkill": Rule(
            rename={"securityRequirements": "security"}, types={"securityRequirements": "SecurityRequirement"}
        ),
        "AgentCapabilities": Rule(drop=frozenset({"extendedAgentCard"})),
        "AgentCard": Rule(
            rename={"securityRequirements": "security"},
            types={
                "securityRequirements": "SecurityRequirement",
                "skills": "AgentSkill",
                "capabilities": "AgentCapabilities",
            },
            maps={"securitySchemes": "SecurityScheme"},
            drop=frozenset({"supportedInterfaces"}),
        ),
    },
)


@dataclass(frozen=True, slots=True)
class Method:
    """One v0.3 JSON-RPC method: the v1.0 ``rpc`` it calls with ``params``
    converted up by the rule ``request`` (the v1.0 input message), and the
    rule ``result`` its answer goes down by ("" for no result: ``null``)."""

    name: str
    rpc: str
    request: str
    result: str
    needs_params: bool = True


#: The v0.3 JSON-RPC methods (legacy digest §2.2), by name.
METHODS: Mapping[str, Method] = {
    m.name: m
    for m in (
        Method("message/send", "SendMessage", "SendMessageRequest", "SendMessageResponse"),
        Method("message/stream", "SendStreamingMessage", "SendMessageRequest", "StreamResponse"),
        Method("tasks/get", "GetTask", "GetTaskRequest", "Task"),
        Method("tasks/cancel", "CancelTask", "CancelTaskRequest", "Task"),
        Method("tasks/resubscribe", "SubscribeToTask", "SubscribeToTaskRequest", "StreamResponse"),
        Method(
            "tasks/pushNotificationConfig/set",
            "CreateTaskPushNotificationConfig",
            "TaskPushNotificationConfig",
            "TaskPushNotificationConfig",
        ),
        Method(
            "tasks/pushNotificationConfig/get",
            "GetTaskPushNotificationConfig",
            "GetTaskPushNotificationConfigRequest",
            "TaskPushNotificationConfig",
        ),
        Method(
            "tasks/pushNotificationConfig/list",
            "ListTaskPushNotificationConfigs",
            "ListTaskPushNotificationConfigsRequest",
            "TaskPushNotificationConfig",  # each element of the bare array
        ),
        Method(
            "tasks/pushNotificationConfig/delete",
            "DeleteTaskPushNotificationConfig",
            "DeleteTaskPushNotificationConfigRequest",
            "",
        ),
        Method(
            "agent/getAuthenticatedExtendedCard",
            "GetExtendedAgentCard",
            "GetExtendedAgentCardRequest",
            "AgentCard",
            needs_params=False,
        ),
    )
}


def final_of(event: Json, *, closes_on_interrupt: bool) -> bool:
    """``final`` of a v0.3 status-update (C2): true at a terminal state, and
    at an interrupted one when the stream ends there (``message/stream``)."""
    state = event.get("status", {}).get("state", "")
    return state in TERMINAL or (closes_on_interrupt and state in INTERRUPTED)


#: v1.0-only codes and what a v0.3 peer gets instead (C14).
_V03_CODES = {ErrorCode.EXTENSION_SUPPORT_REQUIRED: -32004, ErrorCode.VERSION_NOT_SUPPORTED: -32004}


def error_object(err: A2AError) -> Json:
    """The v0.3 JSON-RPC ``error`` member: the code of the one table (v1.0-only
    codes mapped per C14) and ``data`` as a plain object with the ErrorInfo
    reason and metadata (never the v1.0 ``@type`` array)."""
    code = _V03_CODES.get(err.code, err.code.jsonrpc_code)
    data: Json = {"reason": err.code.reason, **dict(err.metadata or {})}
    return {"code": code, "message": err.message, "data": data}


def legacy_card(card: Json, jsonrpc_url: str) -> Json:
    """The pure v0.3 AgentCard of the v1.0 card ``card`` (ProtoJSON dict):
    its v0.3 endpoints are :func:`endpoint_fields`, the JSON-RPC one
    ``jsonrpc_url`` when the card has none (C10, C12, C15)."""
    out = DIALECT.down("AgentCard", card)
    out.update(endpoint_fields(card, jsonrpc_url))
    out.setdefault("capabilities", {})["stateTransitionHistory"] = False
    return out


#: The bindings a2a-grpc serves v0.3 on, at the URL of the v1.0 interface of the same binding.
V03_BINDINGS = ("JSONRPC", "GRPC", "HTTP+JSON")


def v03_interfaces(card: Json) -> list[Json]:
    """The v0.3 endpoints ``[{"url", "transport"}]`` of the v1.0 card ``card``
    (C10): its ``supportedInterfaces`` entries with ``protocolVersion`` 0.3
    when it lists any; else its untenanted JSONRPC, GRPC and HTTP+JSON
    entries, since this server serves v0.3 at those very URLs (the v0.3 JSON-RPC
    methods at the JSON-RPC URL, ``a2a.v1.A2AService`` on the gRPC port,
    ``/v1/...`` under the HTTP+JSON URL). Card order, de-duplicated."""
    entries = [i for i in card.get("supportedInterfaces", []) if isinstance(i, dict)]
    legacy = [i for i in entries if str(i.get("protocolVersion", "")).startswith("0.3")]
    chosen = legacy or [
        i for i in entries if not i.get("tenant") and i.get("protocolBinding") in V03_BINDINGS
    ]
    out: list[Json] = []
    for entry in chosen:
        pair = {"url": entry.get("url", ""), "transport": entry.get("protocolBinding", "")}
        if pair["url"] and pair not in out:
            out.append(pair)
    return out


def endpoint_fields(card: Json, jsonrpc_url: str = "") -> Json:
    """The v0.3 top-level endpoint fields of the v1.0 card ``card``: ``url`` +
    ``preferredTransport`` (its JSON-RPC endpoint, ``jsonrpc_url`` when it has
    none; else its first v0.3 endpoint), ``additionalInterfaces`` (every v0.3
    endpoint, the main one included, v0.3 prose §5.6.2), ``protocolVersion``
    and ``supportsAuthenticatedExtendedCard`` (S13, S15, C10)."""
    interfaces = v03_interfaces(card)
    if jsonrpc_url and not any(i["transport"] == "JSONRPC" for i in interfaces):
        interfaces.insert(0, {"url": jsonrpc_url, "transport": "JSONRPC"})
    main = next((i for i in interfaces if i["transport"] == "JSONRPC"), None)
    main = main or (interfaces[0] if interfaces else {"url": jsonrpc_url, "transport": "JSONRPC"})
    extended = bool(card.get("capabilities", {}).get("extendedAgentCard", False))
    return {
        "url": main["url"],
        "preferredTransport": main["transport"],
        "additionalInterfaces": interfaces,
        "protocolVersion": PROTOCOL_VERSION,
        "supportsAuthenticatedExtendedCard": extended,
    }


def _jsonrpc_url(card: Json) -> str:
    return next((i["url"] for i in v03_interfaces(card) if i["transport"] == "JSONRPC"), "")


def hybrid_card(card: Json) -> Json:
    """The v1.0 card ``card`` plus the v0.3 top-level endpoint fields (legacy
    digest §6.5, :func:`endpoint_fields`), so one ``/.well-known/agent-card.json``
    serves both: v0.3 clients pick JSON-RPC, gRPC or HTTP+JSON from ``url`` /
    ``preferredTransport`` / ``additionalInterfaces``, v1.0 clients read
    ``supportedInterfaces``. ``securitySchemes`` keeps the v1.0 shape."""
    if not _jsonrpc_url(card):
        return card
    return {**card, **endpoint_fields(card)}


def card_json(card: Any, version: str) -> str:
    """The JSON text of the ``pb.AgentCard`` ``card`` for a caller that sent
    ``A2A-Version: version``: the pure v1.0 card for ``1.x``; for no header
    (which means 0.3, spec §3.6.2) or ``0.x`` the :func:`hybrid_card`, which
    v0.3 clients read and lenient v1.0 clients too."""
    if version.strip().startswith("1."):
        return protojson.to_json(card)
    return protojson.dumps(hybrid_card(protojson.to_dict(card)))
