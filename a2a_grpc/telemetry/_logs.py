"""Structured logs: request ids, trace ids and the access log.

* :class:`RequestLog` is a call interceptor in the chain's telemetry slot.
  ``before`` gives the call a **request id** — the caller's ``x-request-id``
  when it sends a usable one (1–128 characters of ``[A-Za-z0-9._:-]``), a new
  one otherwise — kept in a context variable for the call, so every log line
  written while serving it (the handler's, the agent's: executions inherit
  it) carries it. ``after`` writes the **access log** line, one per call, on
  the ``a2a_grpc.access`` logger: binding, method, outcome code, duration,
  peer and the authenticated caller — never message contents.
* :class:`ContextFilter` adds ``request_id`` and ``trace_id`` (the current
  OpenTelemetry trace, when tracing is on) to every record.
* :func:`configure` installs one stderr handler with the text or the JSON
  (one object per line) format.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.errors import A2AError

__all__ = ["ACCESS_LOGGER", "ContextFilter", "JsonFormatter", "RequestLog", "TextFormatter", "configure"]

#: The logger of the access log (turn it off with its level, or ``--no-access-log``).
ACCESS_LOGGER = "a2a_grpc.access"
REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("a2a_request_id", default="")
_USABLE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# LogRecord attributes that are not ``extra`` fields
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}

access_log = logging.getLogger(ACCESS_LOGGER)


def current_request_id() -> str:
    """The request id of the call being served ("" outside a call)."""
    return _REQUEST_ID.get()


def _trace_id() -> str:
    if "opentelemetry.trace" not in sys.modules:
        return ""
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    return f"{ctx.trace_id:032x}" if ctx.is_valid else ""


class ContextFilter(logging.Filter):
    """Adds ``request_id`` and ``trace_id`` ("" when none) to each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _REQUEST_ID.get()
        if not hasattr(record, "trace_id"):
            record.trace_id = _trace_id()
        return True


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    """The ``extra`` fields of a record (request_id, trace_id, access fields)."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and v not in ("", None)}


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value …`` (the extra fields last)."""

    def __init__(self) -> None:
        super().__init__(_TEXT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = _fields(record)
        if not fields:
            return line
        head, sep, tail = line.partition("\n")  # keep a traceback below the fields
        return head + "".join(f" {k}={v}" for k, v in fields.items()) + sep + tail


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ms, ``Z``), ``level``,
    ``logger``, ``message``, the extra fields, and ``exception`` (the
    formatted traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC)
        out: dict[str, Any] = {
            "time": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **_fields(record),
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, separators=(",", ":"))


def configure(level: str = "INFO", fmt: str = "text", *, access: bool = True) -> None:
    """Replaces the root logger's handlers with one stderr handler in
    ``fmt`` (``text`` or ``json``; ValueError otherwise) at ``level``, with
    request and trace ids on every line; ``access`` False silences the
    access log."""
    if fmt not in ("text", "json"):
        raise ValueError(f"log format must be text or json, not {fmt!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    access_log.disabled = not access


class RequestLog(CallInterceptor):
    """The chain's telemetry step for logs: the call's request id and, with
    ``access``, its access log line (see the module docstring)."""

    def __init__(self, *, access: bool = True) -> None:
        self.access = access
        self._open: dict[int, tuple[float, contextvars.Token[str]]] = {}

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        given = call.header(REQUEST_ID_HEADER) or ""
        request_id = given if _USABLE_ID.fullmatch(given) else uuid.uuid4().hex
        self._open[id(call)] = (time.perf_counter(), _REQUEST_ID.set(request_id))

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        opened = self._open.pop(id(call), None)
        if opened is None:
            return
        start, token = opened
        if self.access and access_log.isEnabledFor(logging.INFO):
            code = outcome.code.grpc_code.name if isinstance(outcome, A2AError) else "OK"
            fields = {
                "binding": call.binding,
                "method": call.method,
                "code": code,
                "duration_ms": round((time.perf_counter() - start) * 1000, 3),
                "peer": call.peer,
                "caller": call.user,
            }
            if isinstance(outcome, A2AError):
                fields["reason"] = outcome.code.reason
            access_log.info("%s %s %s", call.binding, call.rpc_name, code, extra=fields)
        # ValueError: a stream closed from another context (the variable dies with it)
        with contextlib.suppress(ValueError):
            _REQUEST_ID.reset(token)
