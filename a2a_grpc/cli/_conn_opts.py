"""``a2a-grpc serve``'s connection options (issue 10: bounded resources).

:func:`connection_options` adds ``--max-connections``, ``--header-timeout``,
``--idle-timeout``, ``--max-connection-age``, ``--max-concurrent-streams``
and ``--max-task-bytes`` to a command and hands it ``connections`` (a
:class:`~a2a_grpc.bindings._connlimits.ConnectionLimits`) and ``max_task_bytes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from a2a_grpc.cli._optgroup import option_group

if TYPE_CHECKING:
    from a2a_grpc.bindings._connlimits import ConnectionLimits

__all__ = ["connection_options"]


_OPTIONS = [
    click.option(
        "--max-connections",
        type=click.IntRange(0),
        default=0,
        show_default=True,
        envvar="A2A_GRPC_MAX_CONNECTIONS",
        show_envvar=True,
        help="Open connections per port; 0 = from the open-file limit (half of it less a reserve).",
    ),
    click.option(
        "--header-timeout",
        type=click.FloatRange(0.0),
        default=10.0,
        show_default=True,
        envvar="A2A_GRPC_HEADER_TIMEOUT",
        show_envvar=True,
        help="Seconds a new connection has for the gRPC handshake or its first HTTP request head (0 = none).",
    ),
    click.option(
        "--idle-timeout",
        type=click.FloatRange(0.0),
        default=60.0,
        show_default=True,
        envvar="A2A_GRPC_IDLE_TIMEOUT",
        show_envvar=True,
        help="Seconds a connection with no request in flight stays open (HTTP keep-alive, gRPC max_connection_idle).",
    ),
    click.option(
        "--max-connection-age",
        type=click.FloatRange(0.0),
        default=0.0,
        show_default=True,
        envvar="A2A_GRPC_MAX_CONNECTION_AGE",
        show_envvar=True,
        help="Seconds after which a gRPC connection is asked to go away (GOAWAY; calls finish); 0 = never.",
    ),
    click.option(
        "--max-concurrent-streams",
        type=click.IntRange(1),
        default=4096,
        show_default=True,
        envvar="A2A_GRPC_MAX_CONCURRENT_STREAMS",
        show_envvar=True,
        help="gRPC calls at once per connection.",
    ),
    click.option(
        "--max-task-bytes",
        type=click.IntRange(0),
        default=256 * 1024 * 1024,
        show_default=True,
        envvar="A2A_GRPC_MAX_TASK_BYTES",
        show_envvar=True,
        help="Largest task (serialized) an agent may grow with artifacts; beyond it the task fails (0 = no limit).",
    ),
]


_NAMES = ("max_connections", "header_timeout", "idle_timeout", "max_connection_age", "max_concurrent_streams")


def _gather(values: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    return {"connections": _connection_limits(*(values[name] for name in _NAMES))}


#: Adds the connection options; the command receives ``connections`` (and
#: ``max_task_bytes`` as it is).
connection_options = option_group(_NAMES, _gather, _OPTIONS)


def _connection_limits(
    max_connections: int,
    header_timeout: float,
    idle_timeout: float,
    max_connection_age: float,
    max_concurrent_streams: int,
) -> ConnectionLimits:
    """The connection options as ConnectionLimits; raises the soft open-file
    limit to the hard one first, so that the automatic caps use it."""
    from a2a_grpc.bindings._connlimits import ConnectionLimits, raise_open_file_limit

    raise_open_file_limit()
    return ConnectionLimits(
        max_connections=max_connections,
        header_timeout_seconds=header_timeout,
        idle_timeout_seconds=idle_timeout,
        max_connection_age_seconds=max_connection_age,
        max_concurrent_streams=max_concurrent_streams,
    )
