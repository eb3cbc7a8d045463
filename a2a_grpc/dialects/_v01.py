"""The oldest A2A shape, v0.1 (``tasks/send`` era), as one declarative table (legacy digest §5).

:data:`DIALECT` holds one :class:`~a2a_grpc.dialects._mapping.Rule` per object
type (named after the v1.0 message), :data:`METHODS` the v0.1-only JSON-RPC
methods. Both the v0.1 JSON-RPC methods and the tutorial's plain-HTTP routes
(:mod:`a2a_grpc.dialects._tutorial`) use this one table. What v0.1 looks like:

* parts ``{"type": "text" | "file" | "data", …}`` (the v0.3 part shapes with
  ``type`` for ``kind``; a v1.0 data value that is not an object is wrapped
  as in v0.3, C4); messages ``{role, parts, metadata}`` — a ``messageId`` is
  minted on the way in (C17) and none is sent out;
* lowercase states without ``rejected`` (sent as ``failed``) and
  ``auth-required`` (sent as ``input-required``, C19); ``unknown`` is refused;
* ``Task{id, sessionId, status, artifacts, history?, metadata}`` —
  ``sessionId`` is the v1.0 ``contextId`` (C3); artifacts carry an integer
  ``index`` (their position in the task, C16) and no ``artifactId``;
* ``TaskSendParams{id, sessionId, message, pushNotification, historyLength,
  metadata}``: ``id`` is the client-chosen task id (:func:`check_task_id`),
  put on the message as ``taskId`` (the adapter's call context lets the
  handler create a task under it, :attr:`a2a_grpc.context.CallContext.client_task_ids`);
* events keyed by the task ``id``: ``{id, status, final}`` and ``{id,
  artifact{…, index, append, lastChunk}}`` (:class:`Events`).

Messages that came in through this table carry the part metadata key
:data:`DIALECT_KEY` (``"0.1"``) so a later read can answer in v0.1 (legacy
digest §6.2: "answer in the dialect the task was created in"); it is taken
off again on the way out. The choices for the lossy cases are in
docs/dialects.md.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any

from a2a_grpc.dialects import _v03 as v03
from a2a_grpc.dialects._mapping import Dialect, Hook, Rule
from a2a_grpc.dialects._v03 import Method
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation

__all__ = [
    "DIALECT",
    "DIALECT_KEY",
    "METHODS",
    "Events",
    "card",
    "check_task_id",
    "error_object",
    "is_v01_task",
    "push_body",
    "reply_task",
    "task",
]

Json = dict[str, Any]

#: Message metadata key recording that the message came in as v0.1.
DIALECT_KEY = "a2a-grpc/dialect"
_V01 = "0.1"

# Many-to-one going down: the LAST v1.0 state of a legacy string is the one it goes up as.
STATES = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_AUTH_REQUIRED": "input-required",  # C19
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_REJECTED": "failed",  # no "rejected" in v0.1
    "TASK_STATE_FAILED": "failed",
}
_FINAL = frozenset({"completed", "canceled", "failed", "input-required"})
#: A client-chosen task id: RFC 3986 unreserved characters, so it survives
#: ``/tasks/{id}`` and ``/tasks/{id}:cancel`` unescaped (C3).
_TASK_ID = re.compile(r"[A-Za-z0-9._~-]{1,256}")


def _bad(path: str, text: str) -> A2AError:
    return A2AError.invalid_params(FieldViolation(path, text))


def check_task_id(value: Any, path: str = "params.id") -> str:
    """``value`` as a client-chosen task id; INVALID_PARAMS when it is not a
    string of 1–256 unreserved URL characters (``A-Z a-z 0-9 . _ ~ -``)."""
    if not isinstance(value, str) or not value:
        raise _bad(path, "is required: the client-chosen task id (a string)")
    if _TASK_ID.fullmatch(value) is None:
        raise _bad(path, "must be 1-256 characters from A-Z a-z 0-9 . _ ~ - (it is used in URL paths)")
    return value


# ----------------------------------------------------------------- Part (hook)
def _part_down(p: Json) -> Json:
    out = v03.part_down(p)
    return {"type": out.pop("kind", "text"), **out}


def _part_up(p: Json) -> Json:
    body = dict(p)
    kind = body.pop("type", None)
    if kind is None:  # the schema's default discriminator: the part's own key
        kind = next((k for k in ("text", "file", "data") if k in body), None)
    if kind not in ("text", "file", "data"):
        raise _bad("part.type", f"must be 'text', 'file' or 'data', not {kind!r}")
    return v03.part_up({**body, "kind": kind})


# ------------------------------------------------------------- Message (hook)
def _message_down(m: Json) -> Json:
    meta = m.get("metadata")
    if isinstance(meta, dict) and DIALECT_KEY in meta:
        rest = {k: v for k, v in meta.items() if k != DIALECT_KEY}
        m = {k: v for k, v in m.items() if k != "metadata"}
        if rest:
            m["metadata"] = rest
    return m


def _message_up(m: Json) -> Json:
    out = dict(m)
    out.setdefault("messageId", str(uuid.uuid4()))  # C17
    meta = out.get("metadata")
    out["metadata"] = {**(meta if isinstance(meta, dict) else {}), DIALECT_KEY: _V01}
    if meta is not None and not isinstance(meta, dict):
        raise _bad("params.message.metadata", "must be a JSON object")
    return out


# ---------------------------------------------------------------- Task (hook)
def _task_down(t: Json) -> Json:
    for i, artifact in enumerate(t.get("artifacts", [])):
        artifact["index"] = i  # C16: the artifact's position in the task
    return t


def _artifact_event_down(e: Json) -> Json:
    artifact = e.setdefault("artifact", {})
    for key in ("append", "lastChunk"):
        if key in e:
            artifact[key] = e.pop(key)
    return e


# ------------------------------------------------------- TaskSendParams (hook)
def _send_up(p: Json) -> Json:
    task_id = check_task_id(p.get("id"))
    message = p.get("message")
    if not isinstance(message, dict):
        raise _bad("params.message", "is required: a JSON object")
    message = {**message, "taskId": task_id}
    session = p.get("sessionId")
    if session is not None:
        if not isinstance(session, str):
            raise _bad("params.sessionId", "must be a string")
        message["contextId"] = session
    out: Json = {"message": message}
    config = {k: p[k] for k in ("historyLength", "pushNotification") if k in p}
    if config:
        out["configuration"] = config
    if "metadata" in p:
        out["metadata"] = p["metadata"]
    return out


def _skip(value: Json) -> Json:
    return value


_NO_TENANT = frozenset({"tenant"})
_EVENT_IDS = {"taskId": "id"}

#: The object table (v1.0 message name → its v0.1 JSON form).
DIALECT = Dialect(
    "v0.1",
    {
        "Part": Rule(hook=Hook(_part_down, _part_up)),
        "Message": Rule(
            types={"parts": "Part"},
            enums={"role": v03.ROLES},
            drop=frozenset({"messageId", "taskId", "contextId", "referenceTaskIds", "extensions"}),
            hook=Hook(_message_down, _message_up),
        ),
        "TaskStatus": Rule(types={"message": "Message"}, enums={"state": STATES}),
        "Artifact": Rule(types={"parts": "Part"}, drop=frozenset({"artifactId", "extensions"})),
        "Task": Rule(
            rename={"contextId": "sessionId"},
            types={"status": "TaskStatus", "artifacts": "Artifact", "history": "Message"},
            hook=Hook(_task_down, _skip),
        ),
        "TaskStatusUpdateEvent": Rule(
            rename=_EVENT_IDS, types={"status": "TaskStatus"}, drop=frozenset({"contextId"})
        ),
        "TaskArtifactUpdateEvent": Rule(
            rename=_EVENT_IDS,
            types={"artifact": "Artifact"},
            drop=frozenset({"contextId"}),
            hook=Hook(_artifact_event_down, _skip),
        ),
        "AuthenticationInfo": v03.DIALECT.rules["AuthenticationInfo"],
        "PushNotificationConfig": Rule(
            types={"authentication": "AuthenticationInfo"}, drop=frozenset({"tenant", "taskId", "id"})
        ),
        "TaskPushNotificationConfig": Rule(
            rename=_EVENT_IDS,
            types={"authentication": "AuthenticationInfo"},
            drop=frozenset({"tenant", "id"}),
            nest=("pushNotificationConfig", frozenset({"url", "token", "authentication"})),
        ),
        "SendMessageConfiguration": Rule(
            rename={"taskPushNotificationConfig": "pushNotification"},
            types={"taskPushNotificationConfig": "PushNotificationConfig"},
            zero_unset=frozenset({"historyLength"}),  # C7
        ),
        "SendMessageRequest": Rule(
            types={"message": "Message", "configuration": "SendMessageConfiguration"},
            drop=_NO_TENANT,
            hook=Hook(_skip, _send_up),
        ),
        "GetTaskRequest": Rule(
            drop=_NO_TENANT, ignore=frozenset({"metadata"}), zero_unset=frozenset({"historyLength"})
        ),
        "CancelTaskRequest": Rule(drop=_NO_TENANT),
        "GetTaskPushNotificationConfigRequest": Rule(
            rename=_EVENT_IDS, drop=frozenset({"tenant", "id"}), ignore=frozenset({"metadata"})
        ),
    },
)

#: The v0.1-only JSON-RPC methods (legacy digest §5.2, §6.2), by name.
#: ``tasks/get`` and ``tasks/cancel`` share their names with v0.3 and are
#: served by the v0.3 method, answered in v0.1 for a task created in v0.1
#: (:func:`is_v01_task`).
METHODS: Mapping[str, Method] = {
    m.name: m
    for m in (
        Method("tasks/send", "SendMessage", "SendMessageRequest", "Task"),
        Method("tasks/sendSubscribe", "SendStreamingMessage", "SendMessageRequest", "StreamResponse"),
        Method(
            "tasks/pushNotification/set",
            "CreateTaskPushNotificationConfig",
            "TaskPushNotificationConfig",
            "TaskPushNotificationConfig",
        ),
        Method(
            "tasks/pushNotification/get",
            "GetTaskPushNotificationConfig",
            "GetTaskPushNotificationConfigRequest",
            "TaskPushNotificationConfig",
        ),
    )
}


def is_v01_task(value: Json) -> bool:
    """Whether the task (ProtoJSON dict) is a v0.1 client's: a message of its
    (returned) history came in as v0.1 (carries :data:`DIALECT_KEY`)."""
    return any((m.get("metadata") or {}).get(DIALECT_KEY) == _V01 for m in value.get("history") or ())


def task(value: Json, *, history: bool = True) -> Json:
    """The v0.1 Task of the v1.0 task ``value`` (ProtoJSON dict); without
    ``history`` (v0.1 sends it only when ``historyLength`` asked) it has none."""
    out = DIALECT.down("Task", value)
    if not history:
        out.pop("history", None)
    return out


def push_body(value: Json) -> Json:
    """The body of a push notification to a webhook registered in v0.1 (C21):
    the Task ``value`` (ProtoJSON dict) as a v0.1 snapshot, without history.
    The hook for the push dispatcher once push configs record their dialect."""
    return task(value, history=False)


def reply_task(task_id: str, session_id: str, reply: Json) -> Json:
    """A v1.0 direct Message reply as the v0.1 Task a v0.1 client expects:
    ``completed`` with the reply as status message (not stored)."""
    out: Json = {"id": task_id, "status": {"state": "completed", "message": DIALECT.down("Message", reply)}}
    if session_id:
        out["sessionId"] = session_id
    return out


class Events:
    """The v0.1 events of one v1.0 stream (C16, C18): each :meth:`down` call
    turns one ``StreamResponse`` (ProtoJSON dict) into v0.1 events — a Task
    snapshot into a status event (and one event per artifact it already
    has), a status-update into ``{id, status, final}``, an artifact-update
    into ``{id, artifact{…, index}}`` with a stable ``index`` per
    ``artifactId`` in order of first appearance."""

    def __init__(self, *, closes_on_interrupt: bool = True) -> None:
        self.index: dict[str, int] = {}
        self.last: Json | None = None  # the last status event sent
        #: ``input-required`` is final (``tasks/sendSubscribe``, whose v1.0
        #: stream ends there) or not (``tasks/resubscribe``, which goes on).
        self.final = _FINAL if closes_on_interrupt else _FINAL - {"input-required"}

    def _index(self, artifact_id: str) -> int:
        return self.index.setdefault(artifact_id, len(self.index))

    def down(self, event: Json) -> list[Json]:
        """The v0.1 events of one v1.0 ``StreamResponse`` dict."""
        if "task" in event:
            t = event["task"]
            for a in t.get("artifacts", []):
                self._index(a.get("artifactId", ""))
            status = DIALECT.down("TaskStatusUpdateEvent", {"taskId": t.get("id", ""), "status": t["status"]})
            arts = DIALECT.down("Task", t).get("artifacts", [])
            return [*({"id": t.get("id", ""), "artifact": a} for a in arts), self._status(status)]
        if "statusUpdate" in event:
            return [self._status(DIALECT.down("TaskStatusUpdateEvent", event["statusUpdate"]))]
        if "artifactUpdate" in event:
            update = event["artifactUpdate"]
            out = DIALECT.down("TaskArtifactUpdateEvent", update)
            out["artifact"]["index"] = self._index(update.get("artifact", {}).get("artifactId", ""))
            return [out]
        return []

    def _status(self, status: Json) -> Json:
        status["final"] = status.get("status", {}).get("state") in self.final
        self.last = status
        return status

    def closing(self) -> Json | None:
        """The ``final: true`` status event to end with when the last one sent
        was not final (C2), else None."""
        if self.last is None or self.last.get("final"):
            return None
        return {**self.last, "final": True}


#: v1.0 codes a v0.1 peer does not know, and what it gets instead (C14):
#: v0.1's schema has only -32001…-32004 besides the JSON-RPC ones.
_V01_CODES = {
    ErrorCode.CONTENT_TYPE_NOT_SUPPORTED: -32004,
    ErrorCode.INVALID_AGENT_RESPONSE: -32603,
    ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32004,
    ErrorCode.EXTENSION_SUPPORT_REQUIRED: -32004,
    ErrorCode.VERSION_NOT_SUPPORTED: -32004,
}


def error_object(err: A2AError) -> Json:
    """The v0.1 JSON-RPC ``error`` member: the v0.3 form (plain-object
    ``data``) with the codes v0.1 does not define mapped per C14."""
    out = v03.error_object(err)
    out["code"] = _V01_CODES.get(err.code, out["code"])
    return out


_SCHEME_NAMES = {
    "apiKeySecurityScheme": "ApiKey",
    "oauth2SecurityScheme": "OAuth2",
    "openIdConnectSecurityScheme": "Bearer",  # its tokens are sent as Authorization: Bearer
    "mtlsSecurityScheme": "mTLS",
}


def _scheme_name(scheme: Json) -> str:
    http = scheme.get("httpAuthSecurityScheme")
    if isinstance(http, dict):
        return str(http.get("scheme", "Bearer")).capitalize()
    return next((name for key, name in _SCHEME_NAMES.items() if key in scheme), "")


def card(value: Json, jsonrpc_url: str) -> Json:
    """The card at ``/.well-known/agent.json`` (legacy digest §5.7, §6.5): the
    v1.0 card ``value`` (ProtoJSON dict) with the v0.3 top-level fields
    (:func:`a2a_grpc.dialects._v03.hybrid_card`; ``url`` is the JSON-RPC URL,
    where the v0.1 methods are served, else ``jsonrpc_url``) and the v0.1
    ones: ``authentication.schemes`` named after the card's security schemes
    (``Bearer``, ``Basic``, ``ApiKey``, ``OAuth2``), and
    ``capabilities.stateTransitionHistory: false`` (C15)."""
    out = v03.hybrid_card(value)
    out.setdefault("url", jsonrpc_url)
    names = (_scheme_name(s) for s in value.get("securitySchemes", {}).values())
    out["authentication"] = {"schemes": sorted({n for n in names if n})}  # a map: no order of its own
    out["capabilities"] = {**out.get("capabilities", {}), "stateTransitionHistory": False}
    return out
