"""The operations options of ``a2a-grpc serve``: logs, metrics, traces.

One decorator, :func:`operations_options`, adds the block of options (each
with its ``A2A_GRPC_*`` variable, listed in docs/serve.md);
:func:`server_settings` turns their values into ``ServerConfig`` fields and
installs the log handler.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import click

__all__ = ["DURATION", "operations_options", "server_settings", "tracing_wanted"]

_F = Callable[..., Any]
_AUTO = click.Choice(["auto", "on", "off"], case_sensitive=False)
# variables that point traces at a collector (tracing "auto" turns on with any of them)
_OTEL_TARGETS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER")


class Duration(click.ParamType):
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` → seconds (a float)."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        from a2a_grpc.store._retention import parse_duration

        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


DURATION = Duration()


#: The options, in --help order.
_OPTIONS = [
    click.option(
        "--log-format",
        type=click.Choice(["text", "json"], case_sensitive=False),
        default="text",
        show_default=True,
        envvar="A2A_GRPC_LOG_FORMAT",
        show_envvar=True,
        help="Log lines as text or as one JSON object per line (request and trace ids included).",
    ),
    click.option(
        "--access-log/--no-access-log",
        default=True,
        show_default=True,
        envvar="A2A_GRPC_ACCESS_LOG",
        show_envvar=True,
        help="One log line per call: binding, method, code, duration, peer, caller.",
    ),
    click.option(
        "--metrics",
        type=_AUTO,
        default="auto",
        show_default=True,
        envvar="A2A_GRPC_METRICS",
        show_envvar=True,
        help="Prometheus metrics at GET /metrics (auto: when prometheus-client is installed).",
    ),
    click.option(
        "--metrics-port",
        type=click.IntRange(0, 65535),
        default=None,
        envvar="A2A_GRPC_METRICS_PORT",
        show_envvar=True,
        help="Serve /metrics on this port only, instead of the HTTP port (0 = any free port).",
    ),
    click.option(
        "--retain-terminal-tasks",
        type=DURATION,
        default=None,
        envvar="A2A_GRPC_RETAIN_TERMINAL_TASKS",
        show_envvar=True,
        help="Delete terminal tasks (and their push configs and outbox rows) this long after "
        "they ended, in the background: 30d, 12h, 90m … (default: keep them).",
    ),
    click.option(
        "--tracing",
        type=_AUTO,
        default="auto",
        show_default=True,
        envvar="A2A_GRPC_TRACING",
        show_envvar=True,
        help="OpenTelemetry traces, configured by the OTEL_* variables "
        "(auto: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER is set).",
    ),
]


def operations_options(f: _F) -> _F:
    """Adds ``--log-format``, ``--access-log``, ``--metrics``,
    ``--metrics-port``, ``--retain-terminal-tasks`` and ``--tracing`` to a
    click command."""
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


def tracing_wanted(choice: str, env: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether ``--tracing choice`` turns tracing on (``auto``: an OTEL_*
    variable names a collector or an exporter other than ``none``, and
    ``OTEL_SDK_DISABLED`` is not ``true``)."""
    choice = choice.lower()
    if choice != "auto":
        return choice == "on"
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(env.get(name, "").strip() for name in _OTEL_TARGETS)


def _available(module: str, extra: str, choice: str) -> bool:
    if importlib.util.find_spec(module) is not None:
        return True
    if choice == "on":
        raise click.ClickException(f"{module} is not installed: pip install 'a2a-grpc[{extra}]'")
    return False


def server_settings(
    log_level: str,
    log_format: str,
    access_log: bool,
    metrics: str,
    metrics_port: int | None,
    retain_terminal_tasks: float | None,
    tracing: str,
) -> dict[str, Any]:
    """Installs the log handler and returns the ``ServerConfig`` fields of
    these options. ClickException when ``on`` asks for an extra that is not
    installed."""
    from a2a_grpc.telemetry._logs import configure

    configure(log_level, log_format.lower(), access=access_log)
    metrics_on = metrics.lower() != "off" and _available("prometheus_client", "metrics", metrics.lower())
    trace_on = tracing_wanted(tracing) and _available("opentelemetry.sdk", "otel", tracing.lower())
    return {
        "metrics": metrics_on,
        "metrics_port": metrics_port,
        "tracing": trace_on,
        "request_ids": True,
        "access_log": access_log,
        "retain_terminal_seconds": retain_terminal_tasks,
    }
