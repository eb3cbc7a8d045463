"""The Prometheus text format (version 0.0.4) read into the few numbers the console charts.

:func:`parse` turns an exposition into ``(name, labels, value)`` samples
(comments, ``# HELP`` / ``# TYPE`` lines and timestamps are skipped; label
values keep their escapes undone). :func:`summary` adds them up into what the
page draws: RPCs handled and failed per binding, task transitions per state,
tasks created, outbox rows, executions and open streams (docs/operations.md
lists the metrics). The page keeps the history and draws the rates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Sample", "parse", "summary"]

Sample = tuple[str, dict[str, str], float]

_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _labels(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _LABEL.finditer(text):
        out[m[1]] = re.sub(r"\\[\\\"n]", lambda e: _UNESCAPE[e[0]], m[2])
    return out


def parse(text: str) -> Iterator[Sample]:
    """The samples of a text exposition; a line that is not a sample is skipped."""
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        try:
            value = float(m[3])
        except ValueError:
            continue
        yield m[1], _labels(m[2] or ""), value


def _add(into: dict[str, float], key: str, value: float) -> None:
    if math.isfinite(value):
        into[key] = into.get(key, 0.0) + value


def summary(samples: Iterable[Sample]) -> dict[str, Any]:
    """Totals since the server started: ``requests`` / ``errors`` by binding
    (``grpc_server_handled_total``; an error is any ``grpc_code`` but OK),
    ``transitions`` by state, ``created``, ``outbox`` rows by state (pending,
    dead), ``executionsActive``, ``streamsOpen`` and ``deadLetters``."""
    requests: dict[str, float] = {}
    errors: dict[str, float] = {}
    transitions: dict[str, float] = {}
    outbox: dict[str, float] = {}
    gauges = {"executionsActive": 0.0, "streamsOpen": 0.0, "created": 0.0, "deadLetters": 0.0}
    for name, labels, value in samples:
        if name == "grpc_server_handled_total":
            binding = labels.get("binding", "grpc")
            _add(requests, binding, value)
            if labels.get("grpc_code", "OK") != "OK":
                _add(errors, binding, value)
        elif name == "a2a_task_transitions_total":
            _add(transitions, labels.get("state", "?"), value)
        elif name == "a2a_push_outbox_rows":
            _add(outbox, labels.get("state", "?"), value)
        elif name == "a2a_executions_active":
            gauges["executionsActive"] += value
        elif name == "a2a_streams_open":
            gauges["streamsOpen"] += value
        elif name == "a2a_tasks_created_total":
            gauges["created"] += value
        elif name == "a2a_push_dead_letters_total":
            gauges["deadLetters"] += value
    return {
        "requests": requests,
        "errors": {b: errors.get(b, 0.0) for b in requests},
        "transitions": transitions,
        "outbox": outbox,
        **gauges,
    }
