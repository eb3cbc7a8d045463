"""The one table of A2A errors and their form on every binding.

Each :class:`ErrorCode` member carries its ``google.rpc.ErrorInfo`` reason, the
gRPC status code, the HTTP status and the JSON-RPC code (spec §5.4, v1.0.1
values; digest §4.4). Every binding derives its wire form from this table and
nothing else: gRPC aborts with a rich status, REST answers the HTTP status with
a ``google.rpc.Status`` body, JSON-RPC answers an error object. In all three the
details carry ``ErrorInfo{reason, domain="a2a-protocol.org"}``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

__all__ = ["DOMAIN", "A2AError", "ErrorCode", "FieldViolation"]

#: ErrorInfo.domain of every error a2a-grpc raises (spec §10.6, §11.6).
DOMAIN = "a2a-protocol.org"


@dataclass(frozen=True, slots=True)
class _Wire:
    reason: str
    grpc_code: grpc.StatusCode
    http_status: int
    jsonrpc_code: int
    message: str


class ErrorCode(enum.Enum):
    """Every error a2a-grpc can answer, with its form on each binding.

    ``value`` is a private record; use the properties. A2A-specific errors come
    first (spec §5.4), then the generic classes of spec §3.3.2.
    """

    TASK_NOT_FOUND = _Wire("TASK_NOT_FOUND", grpc.StatusCode.NOT_FOUND, 404, -32001, "Task not found")
    TASK_NOT_CANCELABLE = _Wire(
        "TASK_NOT_CANCELABLE", grpc.StatusCode.FAILED_PRECONDITION, 400, -32002, "Task cannot be canceled"
    )
    PUSH_NOTIFICATION_NOT_SUPPORTED = _Wire(
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        grpc.StatusCode.FAILED_PRECONDITION,
        400,
        -32003,
        "Push notifications are not supported",
    )
    UNSUPPORTED_OPERATION = _Wire(
        "UNSUPPORTED_OPERATION", grpc.StatusCode.FAILED_PRECONDITION, 400, -32004, "Unsupported operation"
    )
    CONTENT_TYPE_NOT_SUPPORTED = _Wire(
        "CONTENT_TYPE_NOT_SUPPORTED",
        grpc.StatusCode.INVALID_ARGUMENT,
        400,
        -32005,
        "Content type not supported",
    )
    INVALID_AGENT_RESPONSE = _Wire(
        "INVALID_AGENT_RESPONSE", grpc.StatusCode.INTERNAL, 500, -32006, "Invalid agent response"
    )
    EXTENDED_AGENT_CARD_NOT_CONFIGURED = _Wire(
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        grpc.StatusCode.FAILED_PRECONDITION,
        400,
        -32007,
        "Extended agent card not configured",
    )
    EXTENSION_SUPPORT_REQUIRED = _Wire(
        "EXTENSION_SUPPORT_REQUIRED",
        grpc.StatusCode.FAILED_PRECONDITION,
        400,
        -32008,
        "Extension support required",
    )
    VERSION_NOT_SUPPORTED = _Wire(
        "VERSION_NOT_SUPPORTED", grpc.StatusCode.FAILED_PRECONDITION, 400, -32009, "Version not supported"
    )

    # Generic errors (spec §3.3.2 and JSON-RPC 2.0's standard codes).
    PARSE_ERROR = _Wire("PARSE_ERROR", grpc.StatusCode.INVALID_ARGUMENT, 400, -32700, "Invalid JSON payload")
    INVALID_REQUEST = _Wire(
        "INVALID_REQUEST", grpc.StatusCode.INVALID_ARGUMENT, 400, -32600, "Request payload validation error"
    )
    METHOD_NOT_FOUND = _Wire(
        "METHOD_NOT_FOUND", grpc.StatusCode.UNIMPLEMENTED, 404, -32601, "Method not found"
    )
    INVALID_PARAMS = _Wire(
        "INVALID_PARAMS", grpc.StatusCode.INVALID_ARGUMENT, 400, -32602, "Invalid parameters"
    )
    INTERNAL = _Wire("INTERNAL", grpc.StatusCode.INTERNAL, 500, -32603, "Internal error")
    # JSON-RPC has no standard code for these; -32000 is the generic
    # implementation-defined server error, told apart by ErrorInfo.reason.
    UNAUTHENTICATED = _Wire(
        "UNAUTHENTICATED", grpc.StatusCode.UNAUTHENTICATED, 401, -32000, "Unauthenticated"
    )
    PERMISSION_DENIED = _Wire(
        "PERMISSION_DENIED", grpc.StatusCode.PERMISSION_DENIED, 403, -32000, "Permission denied"
    )
    RESOURCE_EXHAUSTED = _Wire(
        "RESOURCE_EXHAUSTED", grpc.StatusCode.RESOURCE_EXHAUSTED, 429, -32000, "Resource exhausted"
    )
    UNAVAILABLE = _Wire("UNAVAILABLE", grpc.StatusCode.UNAVAILABLE, 503, -32000, "Service unavailable")
    DEADLINE_EXCEEDED = _Wire(
        "DEADLINE_EXCEEDED", grpc.StatusCode.DEADLINE_EXCEEDED, 504, -32000, "Deadline exceeded"
    )
    # A request larger than the configured limit (design.md "size limits"):
    # RESOURCE_EXHAUSTED as grpc-core itself answers an oversize message, HTTP
    # 413 on both HTTP bindings (JSON-RPC too, with this error object; not 429,
    # which is for rate limits: clients retry a 429). Not retryable as is.
    PAYLOAD_TOO_LARGE = _Wire(
        "PAYLOAD_TOO_LARGE", grpc.StatusCode.RESOURCE_EXHAUSTED, 413, -32600, "Payload too large"
    )
    # The agent registry's own (a2agrpc.registry.v1, not A2A).
    AGENT_NOT_FOUND = _Wire("AGENT_NOT_FOUND", grpc.StatusCode.NOT_FOUND, 404, -32000, "Agent not found")

    @property
    def reason(self) -> str:
        """``google.rpc.ErrorInfo.reason``: the error name in UPPER_SNAKE_CASE."""
        return self.value.reason

    @property
    def grpc_code(self) -> grpc.StatusCode:
        """The gRPC status code."""
        return self.value.grpc_code

    @property
    def http_status(self) -> int:
        """The HTTP status code used by the HTTP+JSON binding."""
        return self.value.http_status

    @property
    def jsonrpc_code(self) -> int:
        """The JSON-RPC ``error.code``."""
        return self.value.jsonrpc_code

    @property
    def default_message(self) -> str:
        """A human-readable message used when the raiser gives none."""
        return self.value.message

    @classmethod
    def from_reason(cls, reason: str) -> ErrorCode | None:
        """The member whose ErrorInfo reason is ``reason``, or None."""
        return _BY_REASON.get(reason)

    @classmethod
    def from_grpc_code(cls, code: grpc.StatusCode) -> ErrorCode:
        """The generic member for a bare gRPC code (no ErrorInfo)."""
        return _BY_GRPC.get(code, ErrorCode.INTERNAL)

    @classmethod
    def from_jsonrpc_code(cls, code: int) -> ErrorCode:
        """The member for a JSON-RPC code when no ErrorInfo is present."""
        return _BY_JSONRPC.get(code, ErrorCode.INTERNAL)

    @classmethod
    def from_http_status(cls, status: int) -> ErrorCode:
        """The generic member for an HTTP status when no ErrorInfo is present."""
        return _BY_HTTP.get(status, ErrorCode.INTERNAL)


_BY_REASON = {c.reason: c for c in ErrorCode}
_BY_JSONRPC = {c.jsonrpc_code: c for c in reversed(list(ErrorCode))}
_BY_GRPC: dict[grpc.StatusCode, ErrorCode] = {
    grpc.StatusCode.NOT_FOUND: ErrorCode.TASK_NOT_FOUND,
    grpc.StatusCode.INVALID_ARGUMENT: ErrorCode.INVALID_PARAMS,
    grpc.StatusCode.FAILED_PRECONDITION: ErrorCode.UNSUPPORTED_OPERATION,
    grpc.StatusCode.UNIMPLEMENTED: ErrorCode.METHOD_NOT_FOUND,
    grpc.StatusCode.UNAUTHENTICATED: ErrorCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED: ErrorCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ErrorCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.UNAVAILABLE: ErrorCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: ErrorCode.DEADLINE_EXCEEDED,
}
_BY_HTTP: dict[int, ErrorCode] = {
    400: ErrorCode.INVALID_PARAMS,
    401: ErrorCode.UNAUTHENTICATED,
    403: ErrorCode.PERMISSION_DENIED,
    404: ErrorCode.TASK_NOT_FOUND,
    405: ErrorCode.METHOD_NOT_FOUND,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    415: ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
    429: ErrorCode.RESOURCE_EXHAUSTED,
    503: ErrorCode.UNAVAILABLE,
    504: ErrorCode.DEADLINE_EXCEEDED,
}


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One ``google.rpc.BadRequest.FieldViolation``: the field path (proto
    names joined by dots, e.g. ``message.parts``) and what is wrong with it."""

    field: str
    description: str


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> str:
    """``text`` with lone surrogates (no UTF-8 form: client bytes that were
    not UTF-8) as U+FFFD, so that an error quoting client input can always
    be sent."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


class A2AError(Exception):
    """An error answered to the caller in its binding's own form.

    Raise it anywhere below the bindings: ``A2AError(ErrorCode.TASK_NOT_FOUND,
    "task 42 not found", metadata={"taskId": "42"})``. ``field_violations``
    become a ``google.rpc.BadRequest`` detail (use them with INVALID_PARAMS).
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        field_violations: Iterable[FieldViolation] = (),
    ) -> None:
        self.code = code
        self.message = _utf8(message or code.default_message)
        self.metadata = {_utf8(k): _utf8(v) for k, v in (metadata or {}).items()}
        self.field_violations = tuple(
            FieldViolation(_utf8(v.field), _utf8(v.description)) for v in field_violations
        )
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"A2AError({self.code.name}, {self.message!r})"

    @classmethod
    def invalid_params(cls, *violations: FieldViolation, message: str | None = None) -> A2AError:
        """INVALID_PARAMS with field violations; the message defaults to the
        first violation's ``field: description``."""
        if message is None and violations:
            message = "; ".join(f"{v.field}: {v.description}" for v in violations)
        return cls(ErrorCode.INVALID_PARAMS, message, field_violations=violations)

    def details(self) -> list[any_pb2.Any]:
        """The ``google.rpc`` details: ErrorInfo, then BadRequest if any."""
        info = error_details_pb2.ErrorInfo(reason=self.code.reason, domain=DOMAIN, metadata=self.metadata)
        packed = any_pb2.Any()
        packed.Pack(info)
        out = [packed]
        if self.field_violations:
            bad = error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                    for v in self.field_violations
                ]
            )
            packed_bad = any_pb2.Any()
            packed_bad.Pack(bad)
            out.append(packed_bad)
        return out

    def to_status(self) -> status_pb2.Status:
        """The ``google.rpc.Status`` of this error (code = gRPC code number)."""
        return status_pb2.Status(
            code=self.code.grpc_code.value[0], message=self.message, details=self.details()
        )

    @classmethod
    def from_status(cls, status: status_pb2.Status) -> A2AError:
        """Rebuilds an error from a ``google.rpc.Status``: by ErrorInfo.reason
        first (domain a2a-protocol.org), else by the gRPC code."""
        code: ErrorCode | None = None
        metadata: dict[str, str] = {}
        violations: list[FieldViolation] = []
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if info.domain == DOMAIN or not info.domain:
                    code = ErrorCode.from_reason(info.reason) or code
                    metadata = dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
        if code is None:
            code = ErrorCode.from_grpc_code(_GRPC_BY_NUMBER.get(status.code, grpc.StatusCode.UNKNOWN))
        return cls(code, status.message or None, metadata=metadata, field_violations=violations)


_GRPC_BY_NUMBER = {c.value[0]: c for c in grpc.StatusCode}
#: google.rpc.Code names, used by the REST error body's "status" member.
GRPC_CODE_NAMES = {c.value[0]: c.name for c in grpc.StatusCode}
