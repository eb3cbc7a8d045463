"""The A2A v0.3 proto dialect (gRPC and HTTP+JSON) as one declarative table.

Between the ProtoJSON of the v1.0 messages (``lf.a2a.v1``) and the ProtoJSON
of the v0.3 proto messages (``a2a.v1``, ``proto/a2a/v1/a2a.proto``; legacy
digest §3.3, §4.3, S1–S19). Same engine as the v0.3 JSON-RPC table
(:mod:`a2a_grpc.dialects._mapping`): one :class:`~a2a_grpc.dialects._mapping.Rule`
per object, named after the v1.0 message (a few synthetic names where one
v1.0 message has two v0.3 roles, see :data:`TYPES`).

Public API (all conversions raise :class:`~a2a_grpc.errors.A2AError`
INVALID_PARAMS, with the field path, for what does not fit):

* :func:`up` ``(rule, v03_message) -> v1.0 message`` and :func:`down`
  ``(rule, v1_message) -> v03 message``: proto to proto, through ProtoJSON
  (``a2a_grpc.protocol.protojson``; never v0.3 bytes with v1.0 descriptors, §4.5);
* :data:`DIALECT` ``.up(rule, dict)`` / ``.down(rule, dict)``: the same at the
  dict level (what the HTTP+JSON binding reads and writes);
* :data:`RPCS`: the ten v0.3 RPCs by name — the v1.0 RPC each calls and the
  rules of its request and response;
* :func:`http_routes`: the v0.3 HTTP+JSON routes (the proto's
  ``google.api.http`` rules, L-A3 and L-A7 corrected), to match (the server)
  or expand (a client);
* :func:`error_message` / :func:`error_of` (:func:`named_error`): the v0.3
  gRPC error form (C14) — a plain status whose message starts with the v0.3
  error type name — and back;

``final`` of a status update (C2) is not in the table: the adapters compute it
from the v1.0 event (:mod:`a2a_grpc.dialects.grpc`).

The structural hooks: Part (``text`` / ``file{fileWithBytes|fileWithUri,
mimeType}`` / ``data{data}``, S3), resource names (``tasks/{id}``,
``tasks/{t}/pushNotificationConfigs/{c}``: S2; malformed → INVALID_PARAMS),
the push-config nesting with ``name`` and the create request's ``parent`` /
``configId`` (S8, C11), the send configuration's ``blocking`` (C6), the card's
endpoints (S13, S15, C10). Input is lenient where the digest says so (C13):
``parts`` for ``content``, ``kind``-style JSON-RPC parts, lowercase roles and
states, and ``TASK_STATE_CANCELED``. The lossy choices are in
docs/dialects.md ("v0.3 gRPC and HTTP+JSON").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message as _message

from a2a_grpc.dialects import _v03 as v03
from a2a_grpc.dialects._mapping import Dialect, Hook, Rule
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03pb
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol._httprule import RouteTable, compile_service
from a2a_grpc.types import pb

__all__ = [
    "DIALECT",
    "RPCS",
    "TYPES",
    "Rpc",
    "down",
    "error_message",
    "error_of",
    "http_routes",
    "named_error",
    "up",
]

Json = dict[str, Any]

_ROLES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
#: v1.0 state name → v0.3 proto state name (S10: only CANCELED is spelt otherwise).
STATE_NAMES = {v1: ("TASK_STATE_CANCELLED" if v1 == "TASK_STATE_CANCELED" else v1) for v1 in v03.STATES}
#: What a v0.3 input may spell a state as (C13) → the v0.3 proto name.
_STATES = {
    **{legacy: STATE_NAMES[v1] for v1, legacy in v03.STATES.items()},
    "TASK_STATE_CANCELED": "TASK_STATE_CANCELLED",
}


def _bad(path: str, text: str) -> A2AError:
    return A2AError.invalid_params(FieldViolation(path, text))


# ----------------------------------------------------------------- Part (S3)
def _part_down(p: Json) -> Json:
    """v1.0 Part → v0.3 proto Part: metadata, filename, and the media type of
    a text or data part have no slot (C5); non-object data is wrapped as
    ``{"value": x}`` without a flag (C4: the proto Part has no metadata)."""
    if "text" in p:
        return {"text": p["text"]}
    if "raw" in p or "url" in p:
        file: Json = {"fileWithBytes": p["raw"]} if "raw" in p else {"fileWithUri": p["url"]}
        if p.get("mediaType"):
            file["mimeType"] = p["mediaType"]
        return {"file": file}
    if "data" in p:
        data = p["data"]
        return {"data": {"data": data if isinstance(data, dict) else {"value": data}}}
    return {}


def _part_up(p: Json) -> Json:
    """v0.3 proto Part (or, C13, a ``kind``-style JSON-RPC part) → v1.0 Part."""
    if "kind" in p:
        return v03.DIALECT.up("Part", p, "part")
    if "text" in p:
        return {"text": p["text"]}
    if "file" in p:
        return _file_up(p["file"])
    if "data" in p:
        data = p["data"]
        if isinstance(data, dict) and set(data) <= {"data"}:
            data = data.get("data", {})
        return {"data": data}
    raise _bad("part", "needs text, file or data")


def _file_up(file: Any) -> Json:
    if not isinstance(file, dict):
        raise _bad("part.file", "must be a JSON object")
    out: Json = {}
    if "fileWithBytes" in file:
        out["raw"] = file["fileWithBytes"]
    elif "fileWithUri" in file:
        out["url"] = file["fileWithUri"]
    elif "bytes" in file or "uri" in file:  # C13: the JSON-RPC file shape without kind
        return v03.DIALECT.up("Part", {"kind": "file", "file": file}, "part")
    else:
        raise _bad("part.file", "needs fileWithBytes or fileWithUri")
    if file.get("mimeType"):
        out["mediaType"] = file["mimeType"]
    return out


# ------------------------------------------------------ lenient enums (C13)
def _message_up(m: Json) -> Json:
    out = {k: v for k, v in m.items() if k != "kind"}
    role = out.get("role")
    if isinstance(role, str):
        out["role"] = _ROLES.get(role, role)
    return out


def _status_up(s: Json) -> Json:
    state = s.get("state")
    if isinstance(state, str) and state in _STATES:
        return {**s, "state": _STATES[state]}
    return s


def _same(value: Json) -> Json:
    return value


def _no_kind(value: Json) -> Json:
    return {k: v for k, v in value.items() if k not in ("kind", "final")}


# ------------------------------------------------------ resource names (S2)
_SEGMENT = "[^/]+"


def _resource(key: str, template: str, fields: tuple[str, ...], *, required: bool = True) -> Hook:
    """A hook between the v1.0 id fields ``fields`` and one v0.3 resource
    name ``key`` of ``template`` (``{}`` per field, in order). Going up, a
    name that does not fit is INVALID_PARAMS naming the expected form."""
    pattern = re.compile("^" + re.escape(template).replace(r"\{\}", f"({_SEGMENT})") + "$")
    shown = template.format(*(f"{{{f}}}" for f in fields))

    def down(value: Json) -> Json:
        out = {k: v for k, v in value.items() if k not in fields}
        ids = [str(value.get(f, "")) for f in fields]
        if all(ids):
            out[key] = template.format(*ids)
        return out

    def up(value: Json) -> Json:
        out = {k: v for k, v in value.items() if k != key}
        name = value.get(key)
        if name is None or name == "":
            if required:
                raise _bad(key, f"is required, as {shown}")
            return out
        found = pattern.match(name) if isinstance(name, str) else None
        if found is None:
            raise _bad(key, f"must be {shown}, not {name!r}")
        out.update(zip(fields, found.groups(), strict=True))
        return out

    return Hook(down, up)


_TASK = _resource("name", "tasks/{}", ("id",))
_CONFIG_NAME = ("tasks/{}/pushNotificationConfigs/{}", ("taskId", "id"))
_CONFIG = _resource("name", *_CONFIG_NAME)
_PARENT = _resource("parent", "tasks/{}", ("taskId",))
_CONFIG_OPTIONAL = _resource("name", *_CONFIG_NAME, required=False)


# ---------------------------------------------- push configs (S8, S9, C11)
def _push_down(c: Json) -> Json:
    """After nesting: ``taskId`` and the nested ``id`` become ``name``."""
    out = {k: v for k, v in c.items() if k != "taskId"}
    inner = out.get("pushNotificationConfig", {})
    if c.get("taskId") and inner.get("id"):
        out["name"] = _CONFIG_NAME[0].format(c["taskId"], inner["id"])
    return out


def _push_up(c: Json) -> Json:
    """Before un-nesting: ``name`` gives ``taskId`` (and the id when the
    nested config has none)."""
    named = _CONFIG_OPTIONAL.up(c)
    inner = named.get("pushNotificationConfig")
    if "id" in named and isinstance(inner, dict):
        config_id = named.pop("id")
        if not inner.get("id"):
            named["pushNotificationConfig"] = {**inner, "id": config_id}
    return named


def _create_down(c: Json) -> Json:
    """v1.0 create request (a flat TaskPushNotificationConfig) → the v0.3
    ``{parent, configId, config}``."""
    out: Json = {"config": DIALECT.down("TaskPushNotificationConfig", c)}
    if c.get("taskId"):
        out["parent"] = f"tasks/{c['taskId']}"
    if c.get("id"):
        out["configId"] = c["id"]
    return out


def _create_up(c: Json) -> Json:
    """The v0.3 create request → the flat v1.0 config. The task is ``parent``
    (else the config's ``name``; both given and different: INVALID_PARAMS);
    the id is ``configId``, else the nested ``id`` (C11; neither: the v1.0
    handler mints one)."""
    config = DIALECT.up("TaskPushNotificationConfig", c.get("config", {}), "config")
    parent = _PARENT.up({"parent": c["parent"]})["taskId"] if c.get("parent") else ""
    if parent and config.get("taskId") and config["taskId"] != parent:
        raise _bad("parent", f"names task {parent!r} but config.name names {config['taskId']!r}")
    if parent:
        config["taskId"] = parent
    elif not config.get("taskId"):
        raise _bad("parent", "is required, as tasks/{taskId}")
    if c.get("configId"):
        config["id"] = c["configId"]
    return config


# ---------------------------------------------------- send configuration (C6)
def _configuration_up(c: Json) -> Json:
    """C6 on the proto path: ``blocking`` has no presence, so a configuration
    without it is ``blocking: false`` (as the SDKs read it); no configuration
    at all stays blocking (the v1.0 default)."""
    out = {"blocking": False, **c}
    if "pushNotificationConfig" in out and "pushNotification" not in out:  # C13: the JSON-RPC name
        out["pushNotification"] = out.pop("pushNotificationConfig")
    if out.get("pushNotification") == {}:  # an empty message on the proto path: no push config
        del out["pushNotification"]
    return out


# ------------------------------------------------------------ card (S13–S17)
def _scheme_down(s: Json) -> Json:
    """Drops the v1.0-only OAuth ``deviceCode`` flow and ``pkceRequired`` (C12)."""
    out = dict(s)
    oauth = out.get("oauth2SecurityScheme")
    if isinstance(oauth, dict) and isinstance(oauth.get("flows"), dict):
        flows = {k: v for k, v in oauth["flows"].items() if k != "deviceCode"}
        for name, flow in list(flows.items()):
            if isinstance(flow, dict):
                flows[name] = {k: v for k, v in flow.items() if k != "pkceRequired"}
        out["oauth2SecurityScheme"] = {**oauth, "flows": flows}
    return out


def _card_down(c: Json) -> Json:
    """The card's v0.3 endpoint fields (C10, S13) and the extended-card flag
    (S15) in place of ``supportedInterfaces`` and ``capabilities.
    extendedAgentCard`` (see :func:`a2a_grpc.dialects._v03.endpoint_fields`)."""
    out = {k: v for k, v in c.items() if k != "supportedInterfaces"}
    out.update(v03.endpoint_fields(c))
    caps = out.get("capabilities")
    if isinstance(caps, dict) and "extendedAgentCard" in caps:
        out["capabilities"] = {k: v for k, v in caps.items() if k != "extendedAgentCard"}
    return out


def _card_up(c: Json) -> Json:
    """A v0.3 card's endpoints become ``supportedInterfaces`` with
    ``protocolVersion: "0.3"`` (main pair first, de-duplicated, C10) and
    ``supportsAuthenticatedExtendedCard`` → ``capabilities.extendedAgentCard``."""
    out = {
        k: v
        for k, v in c.items()
        if k not in ("url", "preferredTransport", "additionalInterfaces", "protocolVersion")
    }
    pairs = [(c.get("url", ""), c.get("preferredTransport") or "JSONRPC")]
    extra = c.get("additionalInterfaces") or []
    pairs += [(e.get("url", ""), e.get("transport", "")) for e in extra if isinstance(e, dict)]
    seen: list[tuple[str, str]] = [p for i, p in enumerate(pairs) if p[0] and p[1] and p not in pairs[:i]]
    out["supportedInterfaces"] = [
        {"url": url, "protocolBinding": transport, "protocolVersion": "0.3"} for url, transport in seen
    ]
    if "supportsAuthenticatedExtendedCard" in out:
        extended = bool(out.pop("supportsAuthenticatedExtendedCard"))
        out["capabilities"] = {**(out.get("capabilities") or {}), "extendedAgentCard": extended}
    return out


_PUSH_FIELDS = frozenset({"id", "url", "token", "authentication"})
_TENANT = frozenset({"tenant"})

#: The object table (rule name, mostly the v1.0 message name → its v0.3 proto form).
DIALECT = Dialect(
    "v0.3-proto",
    {
        "Part": Rule(hook=Hook(_part_down, _part_up)),
        "Message": Rule(
            rename={"parts": "content"},
            types={"parts": "Part"},
            drop=frozenset({"referenceTaskIds"}),  # C5, C12
            hook=Hook(_same, _message_up),
        ),
        "TaskStatus": Rule(
            types={"message": "Message"}, enums={"state": STATE_NAMES}, hook=Hook(_same, _status_up)
        ),
        "Artifact": Rule(types={"parts": "Part"}),
        "Task": Rule(
            types={"status": "TaskStatus", "artifacts": "Artifact", "history": "Message"},
            hook=Hook(_same, _no_kind),
        ),
        "TaskStatusUpdateEvent": Rule(types={"status": "TaskStatus"}, hook=Hook(_same, _no_kind)),
        "TaskArtifactUpdateEvent": Rule(types={"artifact": "Artifact"}, hook=Hook(_same, _no_kind)),
        "SendMessageResponse": Rule(types={"task": "Task", "message": "Message"}),
        "StreamResponse": Rule(
            types={
                "task": "Task",
                "message": "Message",
                "statusUpdate": "TaskStatusUpdateEvent",
                "artifactUpdate": "TaskArtifactUpdateEvent",
            }
        ),
        "AuthenticationInfo": v03.DIALECT.rules["AuthenticationInfo"],  # C1: same JSON as v0.3 JSON-RPC
        # v1.0 TaskPushNotificationConfig without its task: the v0.3 PushNotificationConfig.
        "PushNotificationConfig": Rule(
            types={"authentication": "AuthenticationInfo"}, drop=frozenset({"tenant", "taskId"})
        ),
        "TaskPushNotificationConfig": Rule(
            types={"authentication": "AuthenticationInfo"},
            drop=_TENANT,
            nest=("pushNotificationConfig", _PUSH_FIELDS),
            hook=Hook(_push_down, _push_up),
        ),
        "CreateTaskPushNotificationConfigRequest": Rule(hook=Hook(_create_down, _create_up)),
        "ListTaskPushNotificationConfigsResponse": Rule(types={"configs": "TaskPushNotificationConfig"}),
        "SendMessageConfiguration": Rule(
            rename={"taskPushNotificationConfig": "pushNotification"},
            types={"taskPushNotificationConfig": "PushNotificationConfig"},
            invert={"returnImmediately": "blocking"},  # C6
            zero_unset=frozenset({"historyLength"}),  # C7
            hook=Hook(_same, _configuration_up),
        ),
        "SendMessageRequest": Rule(
            types={"message": "Message", "configuration": "SendMessageConfiguration"}, drop=_TENANT
        ),
        "GetTaskRequest": Rule(drop=_TENANT, zero_unset=frozenset({"historyLength"}), hook=_TASK),
        "CancelTaskRequest": Rule(drop=_TENANT | {"metadata"}, hook=_TASK),  # C12
        "SubscribeToTaskRequest": Rule(drop=_TENANT, hook=_TASK),
        "GetTaskPushNotificationConfigRequest": Rule(drop=_TENANT, hook=_CONFIG),
        "DeleteTaskPushNotificationConfigRequest": Rule(drop=_TENANT, hook=_CONFIG),
        "ListTaskPushNotificationConfigsRequest": Rule(drop=_TENANT, hook=_PARENT),
        "GetExtendedAgentCardRequest": Rule(drop=_TENANT),
        "SecurityScheme": Rule(hook=Hook(_scheme_down, _same)),
        "AgentSkill": Rule(rename={"securityRequirements": "security"}),
        "AgentCard": Rule(
            rename={"securityRequirements": "security"},
            types={"skills": "AgentSkill"},
            maps={"securitySchemes": "SecurityScheme"},
            drop=frozenset({"iconUrl"}),  # C12
            hook=Hook(_card_down, _card_up),
        ),
    },
)

#: Rule name → (v1.0 message name, v0.3 message name) for :func:`up` / :func:`down`.
TYPES: Mapping[str, tuple[str, str]] = {
    **{
        name: (name, name)
        for name in (
            "Part",
            "Message",
            "Task",
            "TaskStatus",
            "Artifact",
            "TaskStatusUpdateEvent",
            "TaskArtifactUpdateEvent",
            "SendMessageResponse",
            "StreamResponse",
            "TaskPushNotificationConfig",
            "SendMessageConfiguration",
            "SendMessageRequest",
            "GetTaskRequest",
            "CancelTaskRequest",
            "GetTaskPushNotificationConfigRequest",
            "DeleteTaskPushNotificationConfigRequest",
            "AgentCard",
        )
    },
    "PushNotificationConfig": ("TaskPushNotificationConfig", "PushNotificationConfig"),
    "CreateTaskPushNotificationConfigRequest": (
        "TaskPushNotificationConfig",
        "CreateTaskPushNotificationConfigRequest",
    ),
    "SubscribeToTaskRequest": ("SubscribeToTaskRequest", "TaskSubscriptionRequest"),
    "ListTaskPushNotificationConfigsRequest": (
        "ListTaskPushNotificationConfigsRequest",
        "ListTaskPushNotificationConfigRequest",
    ),
    "ListTaskPushNotificationConfigsResponse": (
        "ListTaskPushNotificationConfigsResponse",
        "ListTaskPushNotificationConfigResponse",
    ),
    "GetExtendedAgentCardRequest": ("GetExtendedAgentCardRequest", "GetAgentCardRequest"),
}


@dataclass(frozen=True, slots=True)
class Rpc:
    """One RPC of ``a2a.v1.A2AService``: its v0.3 ``name``, the v1.0 RPC it
    calls (``v1``), and the rules of its ``request`` and ``response``
    (``""``: ``google.protobuf.Empty``, passed as is)."""

    name: str
    v1: str
    request: str
    response: str

    @property
    def streaming(self) -> bool:
        return self.response == "StreamResponse"


#: The v0.3 gRPC RPCs (legacy digest §4.2, S1), by v0.3 name.
RPCS: Mapping[str, Rpc] = {
    r.name: r
    for r in (
        Rpc("SendMessage", "SendMessage", "SendMessageRequest", "SendMessageResponse"),
        Rpc("SendStreamingMessage", "SendStreamingMessage", "SendMessageRequest", "StreamResponse"),
        Rpc("GetTask", "GetTask", "GetTaskRequest", "Task"),
        Rpc("CancelTask", "CancelTask", "CancelTaskRequest", "Task"),
        Rpc("TaskSubscription", "SubscribeToTask", "SubscribeToTaskRequest", "StreamResponse"),
        Rpc(
            "CreateTaskPushNotificationConfig",
            "CreateTaskPushNotificationConfig",
            "CreateTaskPushNotificationConfigRequest",
            "TaskPushNotificationConfig",
        ),
        Rpc(
            "GetTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "GetTaskPushNotificationConfigRequest",
            "TaskPushNotificationConfig",
        ),
        Rpc(
            "ListTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "ListTaskPushNotificationConfigsRequest",
            "ListTaskPushNotificationConfigsResponse",
        ),
        Rpc("GetAgentCard", "GetExtendedAgentCard", "GetExtendedAgentCardRequest", "AgentCard"),
        Rpc(
            "DeleteTaskPushNotificationConfig",
            "DeleteTaskPushNotificationConfig",
            "DeleteTaskPushNotificationConfigRequest",
            "",
        ),
    )
}


def http_routes() -> RouteTable:
    """The v0.3 HTTP+JSON routes: the v0.3 proto's ``google.api.http`` rules
    compiled by :func:`a2a_grpc.protocol._httprule.compile_service`, with the two
    corrections of legacy digest §8, derived from the annotated routes:

    * L-A3: create takes the list route's template
      ``/v1/{parent=tasks/*}/pushNotificationConfigs`` (POST, body ``config``)
      instead of the proto's ``/v1/{parent=task/*/pushNotificationConfigs}``,
      as both SDKs serve and call it;
    * L-A7: TaskSubscription by POST too, on its GET's template."""
    table = compile_service(v03pb.DESCRIPTOR.services_by_name["A2AService"])
    by_rpc = {r.method.name: r for r in table.routes}
    create, listing = by_rpc["CreateTaskPushNotificationConfig"], by_rpc["ListTaskPushNotificationConfig"]
    fixed = [r for r in table.routes if r is not create]
    fixed.append(dataclasses.replace(create, template=listing.template))  # L-A3
    fixed.append(dataclasses.replace(by_rpc["TaskSubscription"], http_method="POST"))  # L-A7
    return RouteTable(fixed)


def _v1_class(rule: str) -> type[_message.Message]:
    return protojson.message_class(pb.DESCRIPTOR.message_types_by_name[TYPES[rule][0]])


def _v03_class(rule: str) -> type[_message.Message]:
    return protojson.message_class(v03pb.DESCRIPTOR.message_types_by_name[TYPES[rule][1]])


def up(rule: str, message: _message.Message) -> Any:
    """The v1.0 message of the v0.3 proto ``message`` (of the v0.3 type of
    ``rule`` in :data:`TYPES`). Raises A2AError(INVALID_PARAMS)."""
    return protojson.parse(DIALECT.up(rule, protojson.to_dict(message)), _v1_class(rule)())


def down(rule: str, message: _message.Message) -> Any:
    """The v0.3 proto message of the v1.0 ``message`` (of the v1.0 type of
    ``rule`` in :data:`TYPES`); what v0.3 has no slot for is dropped (C5, C12)."""
    return protojson.parse(DIALECT.down(rule, protojson.to_dict(message)), _v03_class(rule)())


# ------------------------------------------------------------- errors (C14)
#: The v0.3 error type names (a2a-python 0.3's classes), by error.
ERROR_NAMES: Mapping[ErrorCode, str] = {
    ErrorCode.TASK_NOT_FOUND: "TaskNotFoundError",
    ErrorCode.TASK_NOT_CANCELABLE: "TaskNotCancelableError",
    ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED: "PushNotificationNotSupportedError",
    ErrorCode.UNSUPPORTED_OPERATION: "UnsupportedOperationError",
    ErrorCode.CONTENT_TYPE_NOT_SUPPORTED: "ContentTypeNotSupportedError",
    ErrorCode.INVALID_AGENT_RESPONSE: "InvalidAgentResponseError",
    ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED: "AuthenticatedExtendedCardNotConfiguredError",
    ErrorCode.PARSE_ERROR: "JSONParseError",
    ErrorCode.INVALID_REQUEST: "InvalidRequestError",
    ErrorCode.METHOD_NOT_FOUND: "MethodNotFoundError",
    ErrorCode.INVALID_PARAMS: "InvalidParamsError",
    ErrorCode.INTERNAL: "InternalError",
}
#: v1.0-only errors: what a v0.3 peer is told instead (C14).
_V03_ONLY = {
    ErrorCode.EXTENSION_SUPPORT_REQUIRED: ErrorCode.UNSUPPORTED_OPERATION,
    ErrorCode.VERSION_NOT_SUPPORTED: ErrorCode.UNSUPPORTED_OPERATION,
}


def _name(code: ErrorCode) -> str:
    return ERROR_NAMES.get(code) or "".join(w.capitalize() for w in code.reason.split("_")) + "Error"


def error_message(err: A2AError) -> tuple[grpc.StatusCode, str]:
    """(gRPC code, details) of ``err`` for a v0.3 peer (C14): the code of the
    one error table, the message prefixed by the v0.3 error type name
    (``"TaskNotFoundError: …"``); v1.0-only errors are told as
    UnsupportedOperationError with the v1.0 message. No ErrorInfo."""
    shown = _V03_ONLY.get(err.code, err.code)
    return err.code.grpc_code, f"{_name(shown)}: {err.message}"


_BY_NAME = {_name(code): code for code in ErrorCode}
_BY_NAME.update({name: code for code, name in ERROR_NAMES.items()})


def error_of(code: grpc.StatusCode, details: str) -> A2AError:
    """The A2AError of a v0.3 status (a client's view of :func:`error_message`):
    the error type named by the prefix, else the row of the gRPC code."""
    named = named_error(details)
    return named if named is not None else A2AError(ErrorCode.from_grpc_code(code), details or None)


def named_error(details: str) -> A2AError | None:
    """The A2AError of a status message that starts with a v0.3 error type
    name (``"TaskNotFoundError: …"``), the prefix taken off; else None."""
    name, sep, rest = details.partition(": ")
    found = _BY_NAME.get(name) if sep else None
    return A2AError(found, rest or None) if found is not None else None
