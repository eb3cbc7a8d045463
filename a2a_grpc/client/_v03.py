"""The client's side of A2A v0.3: reading v0.3 cards and answers, writing
v0.3 requests (legacy digest §2, §6.4, §7). The transports are
:mod:`a2a_grpc.client._v03jsonrpc` (and the proto bindings' modules).

A v0.3 agent is called with the same :class:`~a2a_grpc.client.A2AClient` API
— v1.0 request protos in, v1.0 response protos out. Everything is converted by
the one v0.3 table the server side uses (:data:`a2a_grpc.dialects._v03.DIALECT`):
requests go ``down`` (v1.0 ProtoJSON → v0.3 JSON), answers come ``up``. What
the table cannot say is decided here, following docs/dialects.md:

* **card** (C10, S15): a card without ``supportedInterfaces`` whose
  ``protocolVersion`` is 0.x is a v0.3 card; ``url`` + ``preferredTransport``
  (absent: ``JSONRPC``) become the first interface, then each
  ``additionalInterfaces`` entry not already listed, all with
  ``protocolVersion: "0.3"``; ``supportsAuthenticatedExtendedCard`` becomes
  ``capabilities.extendedAgentCard``; ``stateTransitionHistory`` is ignored.
* **states** (C9): an answer whose task is in the v0.3 state ``unknown`` (or,
  on the proto bindings, ``TASK_STATE_UNSPECIFIED``) raises
  INVALID_AGENT_RESPONSE: A2A 1.0 has no such state, and the task's outcome
  cannot be known.
* ``final`` on status updates is dropped (C2); ``blocking`` is written from
  ``returnImmediately`` (C6).
* **history** (C7): v0.3 reads ``historyLength: 0`` as "everything", so 0 is
  not sent; the client trims the history to the requested length itself.
* **timestamps** (C20): a status timestamp that is not RFC 3339 is read
  leniently (ISO 8601; no zone means UTC); one that cannot be read is left out.
* **errors**: the v0.3 ``{code, message, data}`` by its code (the codes are
  the v1.0 ones).
* ``ListTasks`` has no v0.3 method: UNSUPPORTED_OPERATION (C12). Listing push
  configs answers every config at once (v0.3 has no pages).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from google.protobuf import timestamp_pb2

from a2a_grpc.dialects._v03 import DIALECT, METHODS, Method
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

if TYPE_CHECKING:
    from a2a_grpc.client._base import CallOptions

__all__ = [
    "LEGACY_EXTENSIONS_HEADER",
    "VERSION",
    "card_up",
    "check_states",
    "is_legacy_card",
    "is_v03",
    "legacy_options",
    "lenient_timestamp",
    "method_of",
    "not_an_answer",
    "params_down",
    "refuse_unknown_state",
    "trim_history",
    "up_answer",
    "with_configuration",
]

#: The ``protocolVersion`` of v0.3 interfaces (Major.Minor, as v1.0 cards write it).
VERSION = "0.3"
#: The v0.3 extensions header (legacy digest §6.1), sent beside ``A2A-Extensions``.
LEGACY_EXTENSIONS_HEADER = "X-A2A-Extensions"
#: The v0.3 card's endpoint fields, turned into ``supportedInterfaces``.
_ENDPOINT_KEYS = frozenset(
    {
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
        "supportsAuthenticatedExtendedCard",
    }
)
#: v1.0 RPC name → the v0.3 JSON-RPC method that carries it.
_BY_RPC: Mapping[str, Method] = {m.rpc: m for m in METHODS.values()}
log = logging.getLogger(__name__)
Json = dict[str, Any]


def is_v03(version: str) -> bool:
    """True for a ``protocolVersion`` whose Major.Minor is 0.3."""
    return version.strip().split(".")[:2] == ["0", "3"]


def legacy_options(options: CallOptions) -> CallOptions:
    """The call options of a v0.3 interface: ``A2A-Version: 0.3``, and the
    requested extensions in ``X-A2A-Extensions`` too (what v0.3 servers read)."""
    headers = dict(options.headers)
    if options.extensions:
        headers[LEGACY_EXTENSIONS_HEADER] = ",".join(options.extensions)
    return replace(options, version=VERSION, headers=headers)


# ---------------------------------------------------------------------- card
def is_legacy_card(raw: Mapping[str, Any]) -> bool:
    """A card in the v0.3 shape: no ``supportedInterfaces``, a ``url``, and a
    ``protocolVersion`` of 0.x (or none)."""
    version = str(raw.get("protocolVersion") or "0")
    return "supportedInterfaces" not in raw and "url" in raw and version.startswith("0.")


def card_up(raw: Mapping[str, Any], *, source: str = "agent card") -> Json:
    """The v1.0 ProtoJSON dict of the v0.3 card ``raw`` (C10, S15, C15);
    INVALID_AGENT_RESPONSE when it does not fit the v0.3 shape."""
    body = {k: v for k, v in raw.items() if k not in _ENDPOINT_KEYS}
    out = up_answer("AgentCard", body, source)
    version = ".".join(str(raw.get("protocolVersion") or VERSION).split(".")[:2])
    pairs = [(raw.get("url"), raw.get("preferredTransport") or "JSONRPC")]
    extra = raw.get("additionalInterfaces")
    if isinstance(extra, list):
        pairs += [(i.get("url"), i.get("transport")) for i in extra if isinstance(i, Mapping)]
    interfaces: list[Json] = []
    for url, transport in pairs:
        iface = {"url": url, "protocolBinding": str(transport or "").upper(), "protocolVersion": version}
        if isinstance(url, str) and url and iface not in interfaces:
            interfaces.append(iface)
    out["supportedInterfaces"] = interfaces
    if raw.get("supportsAuthenticatedExtendedCard") is True:
        caps = out.setdefault("capabilities", {})
        if isinstance(caps, dict):
            caps["extendedAgentCard"] = True
    return out


# ------------------------------------------------------------------- answers
def not_an_answer(err: A2AError, what: str) -> A2AError:
    """The INVALID_AGENT_RESPONSE of a v0.3 answer ``what`` that the tables
    refused with ``err`` (``err`` itself when it is one already)."""
    if err.code is ErrorCode.INVALID_AGENT_RESPONSE:
        return err
    return A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{what}: not a valid A2A 0.3 answer: {err.message}")


def up_answer(type_name: str, value: Any, what: str) -> Json:
    """The v1.0 ProtoJSON dict of a v0.3 answer (``type_name`` names the v1.0
    message, as in the table). A v0.3 answer that does not fit the table
    raises INVALID_AGENT_RESPONSE; ``unknown`` states raise as C9 says."""
    if isinstance(value, Mapping):
        status = value.get("status")
        if isinstance(status, Mapping) and status.get("state") == "unknown":
            refuse_unknown_state(str(value.get("id") or value.get("taskId") or ""), what)
    try:
        out = DIALECT.up(type_name, value, "result")
    except A2AError as err:
        raise not_an_answer(err, what) from None
    for holder in (out, out.get("task"), out.get("statusUpdate")):
        if isinstance(holder, dict) and isinstance(holder.get("status"), dict):
            _fix_timestamp(holder["status"])
    return out


def refuse_unknown_state(task_id: str, what: str) -> None:
    """Raises INVALID_AGENT_RESPONSE for a task in an indeterminate state (C9)."""
    raise A2AError(
        ErrorCode.INVALID_AGENT_RESPONSE,
        f"{what}: the agent reports task {task_id or '?'} in state 'unknown' (A2A 0.3), which A2A 1.0 "
        "cannot represent: the task's outcome is indeterminate",
        metadata={"taskId": task_id} if task_id else None,
    )


def lenient_timestamp(text: str) -> str | None:
    """``text`` as RFC 3339 for ProtoJSON: kept when it already is one, else
    read as ISO 8601 (no zone: UTC) and written in UTC with ``Z``; None when
    it cannot be read (C20)."""
    try:
        timestamp_pb2.Timestamp().FromJsonString(text)
        return text
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _fix_timestamp(status: Json) -> None:
    raw = status.get("timestamp")
    if not isinstance(raw, str):
        return
    fixed = lenient_timestamp(raw)
    if fixed is None:
        log.debug("dropping an unreadable status timestamp %r", raw)
        status.pop("timestamp")
    else:
        status["timestamp"] = fixed


def trim_history(request: _message.Message, response: _message.Message) -> _message.Message:
    """Keeps the last ``history_length`` messages of a task answer (C7): a v0.3
    agent reads 0 as "all", and may send more than asked."""
    limit: int | None = None
    if isinstance(request, pb.GetTaskRequest) and request.HasField("history_length"):
        limit = request.history_length
    elif isinstance(request, pb.SendMessageRequest) and request.configuration.HasField("history_length"):
        limit = request.configuration.history_length
    task = response if isinstance(response, pb.Task) else getattr(response, "task", None)
    if limit is not None and isinstance(task, pb.Task) and len(task.history) > limit:
        kept = list(task.history)[len(task.history) - limit :]
        del task.history[:]
        task.history.extend(kept)
    return response


def with_configuration(request: _message.Message) -> _message.Message:
    """A ``SendMessageRequest`` always carries a configuration to a v0.3 agent,
    so that ``blocking`` is written (C6): a v0.3 proto has no presence for it,
    and a missing one reads as ``false`` there. Other requests as they are."""
    if isinstance(request, pb.SendMessageRequest) and not request.HasField("configuration"):
        copy = pb.SendMessageRequest()
        copy.CopyFrom(request)
        copy.configuration.SetInParent()
        return copy
    return request


def check_states(response: _message.Message, what: str) -> _message.Message:
    """Refuses (C9) a v1.0 answer read from a v0.3 proto binding whose task or
    status update has no state: the v0.3 ``unknown`` state arrives as
    ``TASK_STATE_UNSPECIFIED`` there. Returns ``response``."""
    holder: Any = response if isinstance(response, pb.Task) else None
    if isinstance(response, (pb.SendMessageResponse, pb.StreamResponse)):
        kind = response.WhichOneof("payload")
        holder = getattr(response, kind) if kind in ("task", "status_update") else None
    if holder is not None and holder.status.state == pb.TASK_STATE_UNSPECIFIED:
        refuse_unknown_state(holder.id if isinstance(holder, pb.Task) else holder.task_id, what)
    return response


def method_of(m: _descriptor.MethodDescriptor) -> Method:
    """The v0.3 JSON-RPC method of a v1.0 RPC; UNSUPPORTED_OPERATION for
    ``ListTasks``, which v0.3 does not have (C12)."""
    method = _BY_RPC.get(m.name)
    if method is None:
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION, f"{m.name} has no A2A 0.3 counterpart; the agent speaks A2A 0.3"
        )
    return method


def params_down(method: Method, request: _message.Message) -> Json:
    """The v0.3 ``params`` of a v1.0 request: the table's ``down``, without
    what v0.3 reads differently (``historyLength: 0``, C7) or lacks (pages)."""
    params = DIALECT.down(method.request, protojson.to_dict(with_configuration(request)))
    if params.get("historyLength") == 0:
        del params["historyLength"]
    config = params.get("configuration")
    if isinstance(config, dict) and config.get("historyLength") == 0:
        del config["historyLength"]
    if method.rpc == "ListTaskPushNotificationConfigs":
        params.pop("pageSize", None)
        params.pop("pageToken", None)
    return params
