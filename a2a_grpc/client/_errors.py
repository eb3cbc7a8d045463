"""Turning each binding's error form back into :class:`~a2a_grpc.errors.A2AError`.

Whatever binding carried the call, the client raises ``A2AError`` with the same
:class:`~a2a_grpc.errors.ErrorCode`: it is looked up by the
``google.rpc.ErrorInfo.reason`` first (domain ``a2a-protocol.org``; gRPC status
details, REST ``error.details``, JSON-RPC ``error.data``), then by the numeric
code of the binding (digest §4.5 "client tip", §5.4, §6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import grpc
from grpc_status import rpc_status

from a2a_grpc.errors import DOMAIN, A2AError, ErrorCode, FieldViolation
from a2a_grpc.types import pb

__all__ = [
    "StreamTruncatedError",
    "from_grpc_error",
    "from_http_error",
    "from_jsonrpc_error",
]

_ERROR_INFO = "google.rpc.ErrorInfo"
_BAD_REQUEST = "google.rpc.BadRequest"


class StreamTruncatedError(A2AError):
    """A stream ended before the task reached a terminal or interrupted state.

    Raised by ``send_streaming_message`` and ``subscribe_to_task`` when the
    server closed the stream (or the connection dropped without an error)
    while the last known task state was still active, or before any event.
    The end of an A2A stream has no in-band marker (digest §10), so without
    this check a cut stream would look like success. It is an ``A2AError``
    with code ``UNAVAILABLE`` (retry with ``subscribe_to_task`` or
    ``get_task``); ``task_id`` and ``last_state`` (a ``pb.TaskState`` value,
    ``TASK_STATE_UNSPECIFIED`` when nothing was received) say how far it got.
    """

    #: What the CLI prints instead of the ErrorCode reason.
    reason = "STREAM_TRUNCATED"

    def __init__(self, message: str, *, task_id: str = "", last_state: int = 0) -> None:
        meta = {"taskId": task_id} if task_id else {}
        super().__init__(ErrorCode.UNAVAILABLE, message, metadata=meta)
        self.task_id = task_id
        self.last_state = last_state


def _type_name(detail: Mapping[str, Any]) -> str:
    type_url = str(detail.get("@type", ""))
    return type_url.rsplit("/", 1)[-1]


def decode_details(
    details: Iterable[Any],
) -> tuple[ErrorCode | None, dict[str, str], list[FieldViolation]]:
    """Reads ProtoJSON ``google.rpc`` details (``@type``-tagged objects):
    the ErrorCode named by an ErrorInfo reason (None if absent or unknown),
    its metadata, and BadRequest field violations. Unknown types are skipped."""
    code: ErrorCode | None = None
    metadata: dict[str, str] = {}
    violations: list[FieldViolation] = []
    for detail in details:
        if not isinstance(detail, Mapping):
            continue
        name = _type_name(detail)
        if name == _ERROR_INFO:
            domain = detail.get("domain") or DOMAIN
            found = ErrorCode.from_reason(str(detail.get("reason", "")))
            if domain == DOMAIN and found is not None and code is None:
                code = found
                raw_meta = detail.get("metadata") or {}
                if isinstance(raw_meta, Mapping):
                    metadata = {str(k): str(v) for k, v in raw_meta.items()}
        elif name == _BAD_REQUEST:
            raw = detail.get("fieldViolations") or detail.get("field_violations") or ()
            violations.extend(
                FieldViolation(str(v.get("field", "")), str(v.get("description", "")))
                for v in raw
                if isinstance(v, Mapping)
            )
    return code, metadata, violations


def from_grpc_error(err: grpc.aio.AioRpcError | grpc.RpcError) -> A2AError:
    """An A2AError from a failed gRPC call: the rich status in the
    ``grpc-status-details-bin`` trailer first (ErrorInfo reason), then the
    status code (``ErrorCode.from_grpc_code``). Spec §10.6."""
    code_fn = getattr(err, "code", None)
    status_code = code_fn() if callable(code_fn) else grpc.StatusCode.UNKNOWN
    details_fn = getattr(err, "details", None)
    message = (details_fn() if callable(details_fn) else None) or None
    try:
        status = rpc_status.from_call(err)
    except (ValueError, AttributeError, TypeError):
        status = None
    if status is not None:
        return A2AError.from_status(status)
    if status_code == grpc.StatusCode.UNAVAILABLE and message is None:
        message = "the server is unreachable"
    return A2AError(ErrorCode.from_grpc_code(status_code), message)


def from_http_error(status: int, body: Any, *, fallback_message: str = "") -> A2AError:
    """An A2AError from an HTTP+JSON error answer: the ``{"error": {code,
    status, message, details}}`` body (``google.rpc.Status`` ProtoJSON, digest
    §5.4) by ErrorInfo reason, else ``ErrorCode.from_http_status(status)``.
    ``body`` is the decoded JSON (anything else is treated as no body)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    message = fallback_message or f"HTTP {status}"
    details: Iterable[Any] = ()
    if isinstance(error, Mapping):
        message = str(error.get("message") or message)
        raw = error.get("details")
        details = raw if isinstance(raw, list) else ()
    elif isinstance(error, str):
        message = error
    code, metadata, violations = decode_details(details)
    return A2AError(
        code or ErrorCode.from_http_status(status), message, metadata=metadata, field_violations=violations
    )


def from_jsonrpc_error(error: Any) -> A2AError:
    """An A2AError from a JSON-RPC ``error`` object ``{code, message, data}``:
    by the ErrorInfo reason in ``data`` (an array of ``@type``-tagged details,
    digest §4.5; a single object is accepted too), else
    ``ErrorCode.from_jsonrpc_code(code)``."""
    if not isinstance(error, Mapping):
        return A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"malformed JSON-RPC error: {error!r}")
    data = error.get("data")
    details = data if isinstance(data, list) else [data] if isinstance(data, Mapping) else []
    code, metadata, violations = decode_details(details)
    if code is None:
        raw_code = error.get("code")
        code = ErrorCode.from_jsonrpc_code(raw_code) if isinstance(raw_code, int) else ErrorCode.INTERNAL
    message = error.get("message")
    return A2AError(code, str(message) if message else None, metadata=metadata, field_violations=violations)


def state_name(state: int) -> str:
    """``TASK_STATE_WORKING`` for a TaskState value (the number if unknown)."""
    try:
        return pb.TaskState.Name(state)
    except ValueError:
        return str(state)
