"""``a2a-grpc serve``: run an agent over gRPC, JSON-RPC and HTTP+JSON.

Every option can also be set by an environment variable (``A2A_GRPC_*``,
shown in ``--help``). Defaults bind 127.0.0.1 only: gRPC on 50051, HTTP on
8080, the code-review agent, and the embedded SQLite store under ./data (or
``$A2A_GRPC_DATA_DIR``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from a2a_grpc.cli._cluster_opts import cluster_options
from a2a_grpc.cli._conn_opts import connection_options
from a2a_grpc.cli._ops import operations_options, server_settings
from a2a_grpc.cli._optgroup import option_group
from a2a_grpc.cli._tls_opts import serve_tls_options
from a2a_grpc.core._card import BINDINGS
from a2a_grpc.core._handler import HandlerConfig
from a2a_grpc.errors import A2AError
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

if TYPE_CHECKING:
    from a2a_grpc.auth._policy import AuthPolicy
    from a2a_grpc.bindings._connlimits import ConnectionLimits
    from a2a_grpc.cluster._leases import ClusterConfig
    from a2a_grpc.core._executor import AgentExecutor
    from a2a_grpc.core.ports import Store

__all__ = ["serve"]


def _default_store() -> str:
    from a2a_grpc.store import default_store_url

    return default_store_url()


def _push_settings(values: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """The ``--push-*`` options as one ``push_settings`` (allow, timeout,
    attempts, backoff), None without ``--push``."""
    settings = tuple(values[name] for name in _PUSH[1:])
    return {"push_settings": settings if values["push"] else None}


_PUSH = ("push", "push_allow", "push_timeout", "push_max_attempts", "push_max_backoff")


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
    "--lenient-version/--strict-version",
    default=False,
    envvar="A2A_GRPC_LENIENT_VERSION",
    show_envvar=True,
    help="Serve a v1.0 request without A2A-Version as 1.0 (default: strict, as the spec says: a missing"
    " header means 0.3, so a v1.0 method without it is refused with VersionNotSupportedError).",
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
    "--register-with",
    default=None,
    envvar="A2A_GRPC_REGISTER_WITH",
    show_envvar=True,
    help="Agent registry to register with once serving (grpc://HOST:PORT or its http:// URL).",
)
@click.option(
    "--registry",
    "registry_url",
    default=None,
    envvar="A2A_GRPC_REGISTRY",
    show_envvar=True,
    help="Agent registry the orchestrator agent finds its delegates in (grpc://HOST:PORT or http://).",
)
@click.option(
    "--auth",
    "auth_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar="A2A_GRPC_AUTH",
    show_envvar=True,
    help="TOML auth configuration (API keys, bearer JWT; docs/auth.md). Without it every caller is anonymous.",
)
@click.option(
    "--audit-log",
    default=None,
    envvar="A2A_GRPC_AUDIT_LOG",
    show_envvar=True,
    help="Append the audit log (JSON lines: task changes, cancels, push configs, refused calls; docs/auth.md) "
    "to this file; - for stderr.",
)
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    envvar="A2A_GRPC_LOG_LEVEL",
    show_envvar=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
)
@serve_tls_options
@operations_options
@click.option(
    "--cancel-grace",
    type=click.FloatRange(0.0),
    default=5.0,
    show_default=True,
    envvar="A2A_GRPC_CANCEL_GRACE",
    show_envvar=True,
    help="Seconds CancelTask waits for the agent to stop; in cluster mode, after that it forces CANCELED "
    "on a task another replica runs.",
)
@cluster_options
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    envvar="A2A_GRPC_WORKERS",
    show_envvar=True,
    help="Cluster mode on all cores: start N replica processes sharing both ports (SO_REUSEPORT) under a "
    "supervisor that restarts a dead one (needs --store postgresql://...).",
)
@click.option(
    "--console/--no-console",
    default=False,
    envvar="A2A_GRPC_CONSOLE",
    show_envvar=True,
    help="Also serve the web console (docs/console.md) for this agent, on 127.0.0.1:--console-port.",
)
@click.option(
    "--console-port",
    type=click.IntRange(0, 65535),
    default=8090,
    show_default=True,
    envvar="A2A_GRPC_CONSOLE_PORT",
    show_envvar=True,
    help="The web console's port on 127.0.0.1 (0 = any free port).",
)
@connection_options
@option_group(_PUSH, _push_settings)
def serve(
    agent: str,
    host: str,
    grpc_port: int,
    http_port: int,
    public_url: str | None,
    public_grpc: str | None,
    store_url: str | None,
    interfaces: str,
    push_settings: tuple[tuple[str, ...], float, int, float] | None,
    lenient_version: bool,
    extended_card: Path | None,
    max_message_bytes: int,
    grace: float,
    register_with: str | None,
    registry_url: str | None,
    auth_file: Path | None,
    console: bool,
    console_port: int,
    log_level: str,
    cancel_grace: float,
    cluster_config: ClusterConfig | None,
    workers: int,
    connections: ConnectionLimits,
    max_task_bytes: int,
    tls: Any = None,
    card_signer: Any = None,
    **ops: Any,
) -> None:
    """Serve an agent over gRPC, JSON-RPC and HTTP+JSON until SIGINT/SIGTERM."""
    if console and (tls is not None or workers > 1):
        raise click.ClickException(
            "--console serves a plain-HTTP, single-process server (no --tls-cert, --workers)"
        )
    ports = _workers(workers, host, (grpc_port, http_port), store_url, grace, ops, cluster_config)
    if ports is None:
        return  # this process was the --workers supervisor
    settings = {"audit": _open_audit(ops), **server_settings(log_level, **ops)}  # logs, metrics, traces
    from a2a_grpc.server import A2AServer, ServerConfig

    executor, order, store, ext = _load(agent, interfaces, store_url, extended_card, cluster=cluster_config)
    _use_registry(executor, agent, registry_url)
    dispatcher = _dispatcher(store, *push_settings) if push_settings else None
    handler = HandlerConfig(
        strict_version=not lenient_version, cancel_grace_seconds=cancel_grace, max_task_bytes=max_task_bytes
    )
    config = ServerConfig(
        **_listening(host, ports, public_url, public_grpc, shared=workers > 1),
        max_message_bytes=max_message_bytes,
        grace_seconds=grace,
        freeze_gc=True,
        interface_order=order,
        handler=handler,
        cluster=cluster_config,
        connections=connections,
        tls=tls,
        card_signer=card_signer,
        auth=_load_auth(auth_file),
        **settings,
    )
    try:
        server = A2AServer(executor, store, config, push=dispatcher, extended_card=ext)
        _run(server, register_with, console_port if console else None)
    except (ValueError, OSError) as exc:  # a configuration the server refuses, a port in use
        raise click.ClickException(f"cannot start: {exc}") from None


def _listening(
    host: str, ports: tuple[int, int], public_url: str | None, public_grpc: str | None, *, shared: bool
) -> dict[str, Any]:
    """The ServerConfig fields of where the server listens; ``shared``: a
    ``--workers`` worker, binding its ports with SO_REUSEPORT."""
    return {
        "host": host,
        "grpc_port": ports[0],
        "http_port": ports[1],
        "public_url": public_url,
        "public_grpc": public_grpc,
        "reuse_port": shared,
    }


def _workers(
    workers: int,
    host: str,
    ports: tuple[int, int],
    store_url: str | None,
    grace: float,
    ops: dict[str, Any],
    cluster: ClusterConfig | None,
) -> tuple[int, int] | None:
    """``--workers``: None once this process, the supervisor, has stopped its
    workers; in a worker, the shared ports to bind (its cluster config takes
    the worker's replica id); otherwise ``ports``."""
    from a2a_grpc.cluster._workers import worker_settings

    worker = worker_settings()
    if worker is None:
        if workers == 1:
            return ports
        _supervise(workers, host, ports, store_url, grace, ops)
        return None
    if cluster is None:
        raise click.ClickException("a --workers worker needs cluster mode (--cluster)")
    cluster.replica_id = worker["replica_id"]
    return worker["grpc_port"], worker["http_port"]


def _supervise(
    workers: int,
    host: str,
    ports: tuple[int, int],
    store_url: str | None,
    grace: float,
    ops: dict[str, Any],
) -> None:
    """``--workers N``: creates the store's schema, then runs the supervisor
    (a2a_grpc.cluster._workers) over N copies of this command line; a store
    that is not PostgreSQL (or cannot be reached), or a separate metrics
    port, is a one-line ClickException."""
    import asyncio
    import socket

    from a2a_grpc.cluster._workers import supervise

    scheme = (store_url or "").split(":", 1)[0].split("+", 1)[0].lower()
    if scheme not in ("postgresql", "postgres"):
        what = "SQLite serves one process only" if scheme in ("", "sqlite") else f"not --store {store_url}"
        raise click.ClickException(f"--workers needs a cluster store: --store postgresql://... ({what})")
    if ops.get("metrics_port") is not None:
        raise click.ClickException("--workers cannot share --metrics-port; metrics are on the HTTP port")
    base = click.get_current_context().params.get("replica_id") or socket.gethostname()
    try:
        asyncio.run(_create_schema(store_url or ""))  # once, before the workers would race to
        supervise(sys.argv[1:], workers, host, ports, base, grace)
    except OSError as exc:
        raise click.ClickException(f"cannot start: {exc}") from None


async def _create_schema(store_url: str) -> None:
    """Opens and closes the cluster store once (it creates its tables)."""
    from a2a_grpc.cluster._store import ClusterStore

    store = ClusterStore(store_url)
    await store.open()
    await store.close()


def _dispatcher(store: Store, allow: tuple[str, ...], timeout: float, attempts: int, backoff: float) -> Any:
    """The push dispatcher ``--push`` asks for."""
    from a2a_grpc.push import PushDispatcher

    return PushDispatcher(
        store, allow=allow, timeout_seconds=timeout, max_attempts=attempts, max_backoff_seconds=backoff
    )


def _load(
    agent: str,
    interfaces: str,
    store_url: str | None,
    extended_card: Path | None,
    *,
    cluster: ClusterConfig | None = None,
) -> tuple[AgentExecutor, list[str], Store, pb.AgentCard | None]:
    """The agent, the interface order, the store (the cluster store with
    ``cluster``) and the extended card the options name; a bad option is a
    ClickException (exit status 1)."""
    from a2a_grpc.agents import load_agent
    from a2a_grpc.store import open_store

    try:
        executor = load_agent(agent)
        order = [b.strip() for b in interfaces.split(",") if b.strip()]
        unknown = [b for b in order if b not in BINDINGS]
        if unknown:
            raise ValueError(f"unknown interface(s) {', '.join(unknown)}; choose from {', '.join(BINDINGS)}")
        if cluster is not None and store_url:
            from a2a_grpc.cluster._store import ClusterStore

            store: Store = ClusterStore(store_url, idle_transaction_timeout=cluster.lease_ttl)
        else:
            store = open_store(store_url or _default_store())
        ext = None
        if extended_card is not None:
            ext = protojson.parse(protojson.loads(extended_card.read_text()), pb.AgentCard())
    except (ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    except A2AError as exc:  # the extended card's JSON (PARSE_ERROR, INVALID_PARAMS)
        raise click.ClickException(f"--extended-card {extended_card}: {exc.message}") from None
    return executor, order, store, ext


def _load_auth(path: Path | None) -> AuthPolicy | None:
    """The policy of ``--auth`` (None without it); a bad file is a ClickException."""
    if path is None:
        return None
    from a2a_grpc.auth import AuthConfigError, load_policy

    try:
        return load_policy(path)
    except (AuthConfigError, OSError) as exc:
        raise click.ClickException(f"--auth: {exc}") from None


def _open_audit(ops: dict[str, Any]) -> Any:
    """The audit log of ``--audit-log`` (popped from ``ops``; None without it);
    an unwritable file is a ClickException."""
    target = ops.pop("audit_log", None)
    if not target:
        return None
    from a2a_grpc.auth._audit import open_audit_log

    try:
        return open_audit_log(target)
    except OSError as exc:
        raise click.ClickException(f"--audit-log: {exc}") from None


def _use_registry(executor: AgentExecutor, agent: str, registry_url: str | None) -> None:
    """Hands ``--registry`` to an agent that finds its delegates there (one
    with a ``use_registry`` method, like the orchestrator); it needs one."""
    use = getattr(executor, "use_registry", None)
    if use is None:
        if registry_url:
            raise click.ClickException(f"--registry: the {agent} agent does not use a registry")
        return
    if not registry_url:
        raise click.ClickException(f"the {agent} agent needs --registry URL (or A2A_GRPC_REGISTRY)")
    use(registry_url)


async def _register(server: object, registry_url: str) -> None:
    """Registers the running server's base URL with the registry; a failure
    is printed and serving goes on (the registry's checks pick it up when
    it is registered later)."""
    from a2a_grpc.errors import A2AError
    from a2a_grpc.registry._client import RegistryClient
    from a2a_grpc.server import A2AServer

    assert isinstance(server, A2AServer)
    base = server.config.public_url or f"http://{server.config.host}:{server.http_port}"
    try:
        async with RegistryClient(registry_url) as client:
            agent = await client.register(base)
        click.echo(f"  registered with {registry_url} as {agent.agent_id}", err=True)
    except A2AError as exc:
        click.echo(
            f"warning: cannot register with {registry_url}: {exc.code.reason}: {exc.message}", err=True
        )


async def _start_console(server: object, port: int) -> Any:
    """``--console``: the web console for this server on 127.0.0.1:``port``,
    with its store (dead letters) and ``/metrics``; behind ``--auth`` each
    browser request's own credentials go with its calls (and the store,
    which A2A's auth does not guard, stays out). Answers the runner.

    Until the gateway mounts features' HTTP apps, the console has its own
    loopback port; once it does, this is one mount of :func:`console_app`."""
    from aiohttp import web

    from a2a_grpc.console import console_app
    from a2a_grpc.server import A2AServer

    assert isinstance(server, A2AServer)
    auth = server.config.auth is not None
    base = f"http://127.0.0.1:{server.http_port}"
    metrics = (
        None
        if server.metrics is None
        else f"http://127.0.0.1:{server.metrics_port or server.http_port}/metrics"
    )
    app = console_app(base, forward_auth=auth, store=None if auth else server.store, metrics_url=metrics)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    click.echo(f"  console   http://127.0.0.1:{runner.addresses[0][1]}/", err=True)
    return runner


def _run(server: object, register_with: str | None = None, console_port: int | None = None) -> None:
    from a2a_grpc.server import A2AServer, run_loop

    assert isinstance(server, A2AServer)

    serving = False
    console: Any = None

    async def started(server: A2AServer) -> None:
        nonlocal serving, console
        serving = True
        card = server.card
        click.echo(f"{card.name} is serving:", err=True)
        for iface in card.supported_interfaces:
            click.echo(f"  {iface.protocol_binding:<9} {iface.url}", err=True)
        if server.http_port is not None:
            click.echo(
                f"  card      {'https' if server.config.tls else 'http'}://{server.config.host}:"
                f"{server.http_port}/.well-known/agent-card.json",
                err=True,
            )
        if register_with:
            await _register(server, register_with)
        if server.metrics is not None:
            port = server.metrics_port if server.metrics_port is not None else server.http_port
            click.echo(f"  metrics   http://{server.config.host}:{port}/metrics", err=True)
        if console_port is not None:
            console = await _start_console(server, console_port)
        sys.stderr.flush()

    async def main() -> None:
        try:
            await server.serve_forever(on_started=started)
        finally:
            if console is not None:
                await console.cleanup()
            if serving:  # a failed start is one line, nothing more
                click.echo("shutting down…", err=True)

    run_loop(main())
