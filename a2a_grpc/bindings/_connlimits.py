"""Connection hygiene shared by both ports: how many connections, for how
long, and what gRPC is told about it.

Without limits, idle sockets and slowloris clients pile up until the process
runs out of file descriptors, and then *nothing* can connect (EMFILE in the
accept loop), not even a health check. :class:`ConnectionLimits` bounds each
port below the open-file limit, with a reserve of descriptors left for the
store, health checks and the other port:

- ``max_connections`` per port (0: derived from ``RLIMIT_NOFILE``, see
  :func:`auto_max_connections`); beyond it gRPC closes new connections at
  once and HTTP answers 503 on a small reserve of extra connections that
  still serve the Agent Card (the HTTP health check), then closes the rest;
- ``header_timeout_seconds``: the gRPC handshake (HTTP/2 preface and
  settings) and the first HTTP request head must arrive within it (slowloris);
- ``idle_timeout_seconds``: a connection with no request in flight is closed
  after it (HTTP keep-alive; gRPC ``max_connection_idle``, a GOAWAY clients
  reconnect after);
- ``max_connection_age_seconds`` (gRPC, 0: unlimited): a GOAWAY after it, so
  that long-lived clients rebalance; calls in flight finish;
- ``max_concurrent_streams``: gRPC calls at once per connection;
- keepalive enforcement (gRPC): clients may ping at most every
  :data:`MIN_CLIENT_PING_SECONDS` (two strikes, then GOAWAY
  ``too_many_pings``); the server pings idle peers every
  :data:`SERVER_PING_SECONDS` and drops those that do not answer within
  :data:`SERVER_PING_TIMEOUT_SECONDS`, so dead peers free their slot.
"""

from __future__ import annotations

import errno
import os
import resource
from dataclasses import dataclass

__all__ = [
    "DESCRIPTOR_RESERVE",
    "HTTP_RESERVE",
    "MIN_CLIENT_PING_SECONDS",
    "SERVER_PING_SECONDS",
    "SERVER_PING_TIMEOUT_SECONDS",
    "ConnectionLimits",
    "auto_max_connections",
    "bind_error",
    "grpc_options",
    "raise_open_file_limit",
]

#: File descriptors kept out of both ports' caps: the store, logs, the
#: push dispatcher's connections, the HTTP reserve, health checks.
DESCRIPTOR_RESERVE = 96
#: Extra HTTP connections accepted beyond the cap, serving only the Agent
#: Card (a health check) and 503 to anything else.
HTTP_RESERVE = 16
#: Fewest seconds between two client pings the server accepts.
MIN_CLIENT_PING_SECONDS = 10.0
#: The server's own keepalive ping on idle connections, and its timeout.
SERVER_PING_SECONDS = 60.0
SERVER_PING_TIMEOUT_SECONDS = 20.0
#: Largest automatic per-port cap.
_AUTO_CAP = 10_000


def auto_max_connections(nofile: int | None = None) -> int:
    """The per-port connection cap for an open-file limit of ``nofile``
    (default: the process's soft ``RLIMIT_NOFILE``): half of what is left
    after :data:`DESCRIPTOR_RESERVE`, at most 10,000 and at least 16.
    1,024 descriptors give 464 connections per port."""
    if nofile is None:
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if nofile == resource.RLIM_INFINITY or nofile <= 0:
        return _AUTO_CAP
    return max(16, min(_AUTO_CAP, (nofile - DESCRIPTOR_RESERVE) // 2))


def bind_error(what: str, host: str, port: int, exc: OSError) -> OSError:
    """The one-line error for a port that cannot be bound, e.g. "gRPC port
    50051 on 127.0.0.1 is already in use" (``errno`` kept)."""
    if exc.errno == errno.EADDRINUSE:
        text = f"{what} port {port} on {host} is already in use"
    else:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        text = f"{what} port {port} on {host} cannot be bound: {reason}"
    err = OSError(text)
    err.errno = exc.errno
    return err


def raise_open_file_limit() -> int:
    """Raises the soft ``RLIMIT_NOFILE`` to the hard limit (as the Go runtime
    does at start) and returns the soft limit now in force; a refusal leaves
    it as it was."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The limits of one server (both ports); see the module docstring.
    ``max_connections`` 0 is resolved by :meth:`per_port`."""

    max_connections: int = 0
    header_timeout_seconds: float = 10.0
    idle_timeout_seconds: float = 60.0
    max_connection_age_seconds: float = 0.0
    max_concurrent_streams: int = 4096

    def per_port(self) -> int:
        """The connection cap of each port (``max_connections`` or the automatic one)."""
        return self.max_connections or auto_max_connections()


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def grpc_options(limits: ConnectionLimits) -> list[tuple[str, int]]:
    """The grpc-core channel arguments that enforce ``limits`` on the gRPC port."""
    options = [
        ("grpc.max_allowed_incoming_connections", limits.per_port()),
        ("grpc.server_handshake_timeout_ms", _ms(limits.header_timeout_seconds)),
        ("grpc.max_concurrent_streams", limits.max_concurrent_streams),
        ("grpc.http2.min_ping_interval_without_data_ms", _ms(MIN_CLIENT_PING_SECONDS)),
        ("grpc.http2.max_ping_strikes", 2),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.keepalive_time_ms", _ms(SERVER_PING_SECONDS)),
        ("grpc.keepalive_timeout_ms", _ms(SERVER_PING_TIMEOUT_SECONDS)),
    ]
    if limits.idle_timeout_seconds > 0:
        options.append(("grpc.max_connection_idle_ms", _ms(limits.idle_timeout_seconds)))
    if limits.max_connection_age_seconds > 0:
        options.append(("grpc.max_connection_age_ms", _ms(limits.max_connection_age_seconds)))
        # Calls in flight at the GOAWAY finish however long they take.
        options.append(("grpc.max_connection_age_grace_ms", 2**31 - 1))
    return options
