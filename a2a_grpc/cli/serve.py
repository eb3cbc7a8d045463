"""``a2a-grpc serve``: run an agent over gRPC, JSON-RPC and HTTP+JSON.

Every option can also be set by an environment variable (``A2A_GRPC_*``,
shown in ``--help``). Defaults bind 127.0.0.1 only: gRPC on 50051, HTTP on
8080, the code-review agent, and the embedded SQLite store under ./data (or
``$A2A_GRPC_DATA_DIR``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from google.protobuf import json_format

from a2a_grpc.card import BINDINGS
from a2a_grpc.handler import HandlerConfig
from a2a_grpc.types import pb

if TYPE_CHECKING:
    from a2a_grpc.connlimits import ConnectionLimits
    from a2a_grpc.executor import AgentExecutor
    from a2a_grpc.store.base import Store

__all__ = ["serve"]


def _default_store() -> str:
    from a2a_grpc.store import default_store_url

    return default_store_url()


@click.command()
@click.option(
    "--agent",
    default="code-review",
    show_default=True,
    envvar="A2A_GRPC_AGENT",
    show_envvar=True,
    help="Built-in agent (code-review, echo) or package.module:attribute naming an AgentExecutor.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    envvar="A2A_GRPC_HOST",
    show_envvar=True,
    help="Address to bind both servers to (0.0.0.0 for all interfaces).",
)
@click.option(
    "--grpc-port",
    type=click.IntRange(0, 65535),
    default=50051,
    show_default=True,
    envvar="A2A_GRPC_GRPC_PORT",
    show_envvar=True,
    help="gRPC port (0 = any free port).",
)
@click.option(
    "--http-port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    envvar="A2A_GRPC_HTTP_PORT",
    show_envvar=True,
    help="HTTP port for JSON-RPC, HTTP+JSON and the Agent Card (0 = any free port).",
)
@click.option(
    "--public-url",
    default=None,
    envvar="A2A_GRPC_PUBLIC_URL",
    show_envvar=True,
    help="HTTP base URL advertised in the Agent Card (default http://HOST:HTTP_PORT).",
)
@click.option(
    "--public-grpc",
    default=None,
    envvar="A2A_GRPC_PUBLIC_GRPC",
    show_envvar=True,
    help="gRPC host:port advertised in the Agent Card (default HOST:GRPC_PORT).",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    envvar="A2A_GRPC_STORE",
    show_envvar=True,
    help="memory, sqlite:///PATH or postgresql://... "
    "[default: sqlite:///DATA_DIR/a2a-grpc.db, DATA_DIR being $A2A_GRPC_DATA_DIR or ./data]",
)
@click.option(
    "--interfaces",
    default=",".join(BINDINGS),
    show_default=True,
    envvar="A2A_GRPC_INTERFACES",
    show_envvar=True,
    help="Preference order of the card's interfaces.",
)
@click.option(
    "--push/--no-push",
    default=False,
    envvar="A2A_GRPC_PUSH",
    show_envvar=True,
    help="Declare and deliver push notifications (webhooks).",
)
@click.option(
    "--push-allow",
    multiple=True,
    envvar="A2A_GRPC_PUSH_ALLOW",
    show_envvar=True,
    help="CIDR or host name webhooks may target despite the SSRF guard (repeatable).",
)
@click.option(
    "--push-timeout",
    type=click.FloatRange(0.1),
    default=10.0,
    show_default=True,
    envvar="A2A_GRPC_PUSH_TIMEOUT",
    show_envvar=True,
    help="Seconds one webhook POST may take.",
)
@click.option(
    "--push-max-attempts",
    type=click.IntRange(1),
    default=8,
    show_default=True,
    envvar="A2A_GRPC_PUSH_MAX_ATTEMPTS",
    show_envvar=True,
    help="Delivery attempts before a notification becomes a dead letter.",
)
@click.option(
    "--push-max-backoff",
    type=click.FloatRange(0.0),
    default=300.0,
    show_default=True,
    envvar="A2A_GRPC_PUSH_MAX_BACKOFF",
    show_envvar=True,
    help="Longest wait between two attempts, seconds (exponential backoff with jitter up to it).",
)
@click.option(
    "--strict-version/--no-strict-version",
    default=False,
    envvar="A2A_GRPC_STRICT_VERSION",
    show_envvar=True,
    help="Treat a missing A2A-Version as 0.3 (refused) as the spec says.",
)
@click.option(
    "--extended-card",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    envvar="A2A_GRPC_EXTENDED_CARD",
    show_envvar=True,
    help="JSON file with the extended Agent Card served by GetExtendedAgentCard.",
)
@click.option(
    "--max-message-bytes",
    type=click.IntRange(1024),
    default=16 * 1024 * 1024,
    show_default=True,
    envvar="A2A_GRPC_MAX_MESSAGE_BYTES",
    show_envvar=True,
    help="Largest request/response, bytes.",
)
@click.option(
    "--grace",
    type=float,
    default=5.0,
    show_default=True,
    envvar="A2A_GRPC_GRACE",
    show_envvar=True,
    help="Shutdown grace period, seconds.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    envvar="A2A_GRPC_MAX_CONNECTIONS",
    show_envvar=True,
    help="Open connections per port; 0 = from the open-file limit (half of it less a reserve).",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(0.0),
    default=10.0,
    show_default=True,
    envvar="A2A_GRPC_HEADER_TIMEOUT",
    show_envvar=True,
    help="Seconds a new connection has for the gRPC handshake or its first HTTP request head (0 = none).",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(0.0),
    default=60.0,
    show_default=True,
    envvar="A2A_GRPC_IDLE_TIMEOUT",
    show_envvar=True,
    help="Seconds a connection with no request in flight stays open (HTTP keep-alive, gRPC max_connection_idle).",
)
@click.option(
    "--max-connection-age",
    type=click.FloatRange(0.0),
    default=0.0,
    show_default=True,
    envvar="A2A_GRPC_MAX_CONNECTION_AGE",
    show_envvar=True,
    help="Seconds after which a gRPC connection is asked to go away (GOAWAY; calls finish); 0 = never.",
)
@click.option(
    "--max-concurrent-streams",
    type=click.IntRange(1),
    default=4096,
    show_default=True,
    envvar="A2A_GRPC_MAX_CONCURRENT_STREAMS",
    show_envvar=True,
    help="gRPC calls at once per connection.",
)
@click.option(
    "--max-task-bytes",
    type=click.IntRange(0),
    default=256 * 1024 * 1024,
    show_default=True,
    envvar="A2A_GRPC_MAX_TASK_BYTES",
    show_envvar=True,
    help="Largest task (serialized) an agent may grow with artifacts; beyond it the task fails (0 = no limit).",
)
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    envvar="A2A_GRPC_LOG_LEVEL",
    show_envvar=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
)
def serve(
    agent: str,
    host: str,
    grpc_port: int,
    http_port: int,
    public_url: str | None,
    public_grpc: str | None,
    store_url: str | None,
    interfaces: str,
    push: bool,
    push_allow: tuple[str, ...],
    push_timeout: float,
    push_max_attempts: int,
    push_max_backoff: float,
    strict_version: bool,
    extended_card: Path | None,
    max_message_bytes: int,
    grace: float,
    log_level: str,
    **connection_options: Any,
) -> None:
    """Serve an agent over gRPC, JSON-RPC and HTTP+JSON until SIGINT/SIGTERM."""
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from a2a_grpc.server import A2AServer, ServerConfig

    executor, order, store, ext = _load(agent, interfaces, store_url, extended_card)
    dispatcher = None
    if push:
        from a2a_grpc.push import PushDispatcher

        dispatcher = PushDispatcher(
            store,
            allow=push_allow,
            timeout_seconds=push_timeout,
            max_attempts=push_max_attempts,
            max_backoff_seconds=push_max_backoff,
        )
    config = ServerConfig(
        host=host,
        grpc_port=grpc_port,
        http_port=http_port,
        public_url=public_url,
        public_grpc=public_grpc,
        max_message_bytes=max_message_bytes,
        grace_seconds=grace,
        freeze_gc=True,
        interface_order=order,
        handler=HandlerConfig(
            strict_version=strict_version, max_task_bytes=connection_options.pop("max_task_bytes")
        ),
        connections=_connection_limits(**connection_options),
    )
    server = A2AServer(executor, store, config, push=dispatcher, extended_card=ext)
    try:
        _run(server)
    except OSError as exc:
        raise click.ClickException(f"cannot start: {exc}") from None


def _connection_limits(
    max_connections: int,
    header_timeout: float,
    idle_timeout: float,
    max_connection_age: float,
    max_concurrent_streams: int,
) -> ConnectionLimits:
    """The connection options as ConnectionLimits; raises the soft open-file
    limit to the hard one first, so that the automatic caps use it."""
    from a2a_grpc.connlimits import ConnectionLimits, raise_open_file_limit

    raise_open_file_limit()
    return ConnectionLimits(
        max_connections=max_connections,
        header_timeout_seconds=header_timeout,
        idle_timeout_seconds=idle_timeout,
        max_connection_age_seconds=max_connection_age,
        max_concurrent_streams=max_concurrent_streams,
    )


def _load(
    agent: str, interfaces: str, store_url: str | None, extended_card: Path | None
) -> tuple[AgentExecutor, list[str], Store, pb.AgentCard | None]:
    """The agent, the interface order, the store and the extended card the
    options name; a bad option is a ClickException (exit status 1)."""
    from a2a_grpc.agents import load_agent
    from a2a_grpc.store import open_store

    try:
        executor = load_agent(agent)
        order = [b.strip() for b in interfaces.split(",") if b.strip()]
        unknown = [b for b in order if b not in BINDINGS]
        if unknown:
            raise ValueError(f"unknown interface(s) {', '.join(unknown)}; choose from {', '.join(BINDINGS)}")
        store = open_store(store_url or _default_store())
        ext = None
        if extended_card is not None:
            ext = json_format.Parse(extended_card.read_text(), pb.AgentCard(), ignore_unknown_fields=True)
    except (ValueError, OSError, json_format.ParseError, json.JSONDecodeError) as exc:
        raise click.ClickException(str(exc)) from None
    return executor, order, store, ext


def _run(server: object) -> None:
    from a2a_grpc.server import A2AServer

    assert isinstance(server, A2AServer)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await server.start()
        card = server.card
        click.echo(f"{card.name} is serving:", err=True)
        for iface in card.supported_interfaces:
            click.echo(f"  {iface.protocol_binding:<9} {iface.url}", err=True)
        if server.http_port is not None:
            click.echo(
                f"  card      http://{server.config.host}:{server.http_port}/.well-known/agent-card.json",
                err=True,
            )
        sys.stderr.flush()
        await stop.wait()
        click.echo("shutting down…", err=True)
        await server.stop()

    # The loop must not run inside ``except ImportError``: every traceback
    # would be chained to "No module named 'uvloop'".
    try:
        import uvloop
    except ImportError:
        run = asyncio.run
    else:
        run = uvloop.run
    run(main())
