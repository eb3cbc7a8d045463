"""``google.rpc.Status`` → the error form of each HTTP binding.

Both forms come from the one table in :mod:`a2a_grpc.errors`; the status is
classified by its ``ErrorInfo.reason`` first, by the gRPC code otherwise, and
its details (ErrorInfo, BadRequest, ...) are copied as ``@type``-tagged
ProtoJSON objects:

* HTTP+JSON (spec §11.6): HTTP status from the table and the body
  ``{"error": {"code": <http>, "status": "<gRPC code name>", "message": ...,
  "details": [...]}}``, content type ``application/a2a+json``;
* JSON-RPC (spec §9.5): ``{"code": <jsonrpc code>, "message": ...,
  "data": [...]}`` inside an envelope answered with HTTP 200 — except
  UNAUTHENTICATED, answered 401 (with ``WWW-Authenticate``) because proxies
  and clients key on it (design.md; :func:`jsonrpc_http_status`).
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import any_pb2
from google.rpc import status_pb2

from a2a_grpc.errors import GRPC_CODE_NAMES, A2AError, ErrorCode
from a2a_grpc.protocol import protojson

__all__ = [
    "GatewayAbort",
    "details_json",
    "error_code",
    "jsonrpc_error",
    "jsonrpc_http_status",
    "rest_error",
    "status_of",
]


class GatewayAbort(Exception):
    """Raised by ``GatewayContext.abort``: the servicer ended the call with
    ``status`` (a ``google.rpc.Status`` with its details)."""

    def __init__(self, status: status_pb2.Status) -> None:
        super().__init__(status.message)
        self.status = status


def status_of(exc: BaseException) -> status_pb2.Status:
    """The status to answer for an exception: a gateway abort's own status,
    an A2AError's status, anything else INTERNAL (the text is not leaked)."""
    if isinstance(exc, GatewayAbort):
        return exc.status
    if isinstance(exc, A2AError):
        return exc.to_status()
    return A2AError(ErrorCode.INTERNAL, "internal error").to_status()


def error_code(status: status_pb2.Status) -> ErrorCode:
    """The table row of a status (ErrorInfo reason, else gRPC code)."""
    return A2AError.from_status(status).code


def _detail_json(detail: any_pb2.Any) -> dict[str, Any]:
    try:
        return protojson.to_dict(detail)
    except (TypeError, KeyError, protojson.EncodeError):
        # A detail type this process does not know: keep it, opaque.
        return {"@type": detail.type_url, "value": base64.b64encode(detail.value).decode()}


def details_json(status: status_pb2.Status) -> list[dict[str, Any]]:
    """The status details as ProtoJSON ``Any`` objects (each with ``@type``)."""
    return [_detail_json(d) for d in status.details]


def rest_error(status: status_pb2.Status, *, http_status: int | None = None) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) of the HTTP+JSON error form (spec §11.6).
    ``http_status`` overrides the table (405, 413)."""
    code = http_status or error_code(status).http_status
    body = {
        "error": {
            "code": code,
            "status": GRPC_CODE_NAMES.get(status.code, "UNKNOWN"),
            "message": status.message,
            "details": details_json(status),
        }
    }
    return code, body


def jsonrpc_error(status: status_pb2.Status) -> dict[str, Any]:
    """The JSON-RPC ``error`` member (spec §9.5)."""
    return {
        "code": error_code(status).jsonrpc_code,
        "message": status.message,
        "data": details_json(status),
    }


#: The errors a JSON-RPC error object is not answered with HTTP 200 for
#: (design.md "JSON-RPC errors"): proxies and clients key on these statuses.
JSONRPC_HTTP_STATUS = {ErrorCode.UNAUTHENTICATED: 401, ErrorCode.PAYLOAD_TOO_LARGE: 413}


def jsonrpc_http_status(status: status_pb2.Status) -> int:
    """The HTTP status of a JSON-RPC error response: 401 for UNAUTHENTICATED
    (with ``WWW-Authenticate``), 413 for PAYLOAD_TOO_LARGE (as on REST), 200
    otherwise."""
    return JSONRPC_HTTP_STATUS.get(error_code(status), 200)
