"""``a2a-grpc registry``: serve the agent registry and talk to it.

* ``registry serve``: the registry on gRPC (reflection, health), JSON-RPC and
  HTTP+JSON, with periodic health checks; every option has an
  ``A2A_GRPC_REGISTRY_*`` environment variable;
* ``registry add URL`` / ``remove AGENT_ID`` / ``list`` / ``find --skill …``
  / ``watch``: the client side. ``--registry`` (``$A2A_GRPC_REGISTRY``) is
  ``grpc://HOST:PORT`` or the registry's ``http://`` URL (JSON-RPC; ``watch``
  needs gRPC).

Exit codes as the other client commands: 0 success, 1 an error
(``error: REASON: message``), 130 interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any

import click
from rich.table import Table

from a2a_grpc.cli._client_cmds import make_console, run
from a2a_grpc.protocol import protojson

__all__ = ["registry"]

_DEFAULT_REGISTRY = "grpc://127.0.0.1:50061"
_HEALTH = {0: "unknown", 1: "healthy", 2: "unhealthy"}


@click.group()
def registry() -> None:
    """The agent registry: serve it, add/remove agents, list/find/watch them."""


def _env(name: str) -> dict[str, Any]:
    return {"envvar": f"A2A_GRPC_REGISTRY_{name}", "show_envvar": True}


@registry.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, **_env("HOST"), help="Address to bind.")
@click.option(
    "--grpc-port",
    type=click.IntRange(0, 65535),
    default=50061,
    show_default=True,
    **_env("GRPC_PORT"),
    help="gRPC port (0 = any free port).",
)
@click.option(
    "--http-port",
    type=click.IntRange(0, 65535),
    default=8061,
    show_default=True,
    **_env("HTTP_PORT"),
    help="HTTP port for JSON-RPC and HTTP+JSON (0 = any free port).",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    **_env("STORE"),
    help="memory, sqlite:///PATH or postgresql://... [default: sqlite:///DATA_DIR/registry.db]",
)
@click.option(
    "--allow-private/--no-allow-private",
    default=False,
    **_env("ALLOW_PRIVATE"),
    help="Admit agents on loopback and private addresses (development).",
)
@click.option(
    "--allow",
    multiple=True,
    **_env("ALLOW"),
    help="CIDR or host name admitted despite the SSRF guard (repeatable).",
)
@click.option(
    "--check-interval",
    type=click.FloatRange(0.05),
    default=30.0,
    show_default=True,
    **_env("CHECK_INTERVAL"),
    help="Seconds between health checks of each agent.",
)
@click.option(
    "--check-jitter",
    type=click.FloatRange(0.0, 0.99),
    default=0.1,
    show_default=True,
    **_env("CHECK_JITTER"),
    help="Random extra delay of each check, as a share of the interval.",
)
@click.option(
    "--failure-threshold",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    **_env("FAILURE_THRESHOLD"),
    help="Failed checks in a row that make an agent unhealthy.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1),
    default=10.0,
    show_default=True,
    **_env("TIMEOUT"),
    help="Seconds a card fetch or gRPC health check may take.",
)
@click.option(
    "--trust",
    "trust",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    **_env("TRUST"),
    help="Public key, certificate or JWK set whose card signatures are checked at registration (repeatable).",
)
@click.option(
    "--require-signed-cards/--no-require-signed-cards",
    default=False,
    **_env("REQUIRE_SIGNED_CARDS"),
    help="Refuse agents whose card has no signature that verifies with a --trust key.",
)
def serve_registry(
    host: str,
    grpc_port: int,
    http_port: int,
    store_url: str | None,
    allow_private: bool,
    allow: tuple[str, ...],
    check_interval: float,
    check_jitter: float,
    failure_threshold: int,
    timeout: float,
    trust: tuple[str, ...],
    require_signed_cards: bool,
) -> None:
    """Serve the agent registry until SIGINT/SIGTERM."""
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from a2a_grpc.registry._server import RegistryConfig, RegistryServer

    if store_url is None:
        from a2a_grpc.store import default_store_url

        store_url = default_store_url().replace("a2a-grpc.db", "registry.db")
    try:
        config = RegistryConfig(
            host=host,
            grpc_port=grpc_port,
            http_port=http_port,
            store_url=store_url,
            allow_private=allow_private,
            allow=allow,
            check_interval_seconds=check_interval,
            check_jitter=check_jitter,
            failure_threshold=failure_threshold,
            fetch_timeout_seconds=timeout,
            trusted_keys=_trusted(trust),
            require_signed_cards=require_signed_cards,
        )
        server = RegistryServer(config)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await server.start()
        click.echo("agent registry is serving:", err=True)
        click.echo(f"  GRPC      {server.grpc_target}", err=True)
        click.echo(f"  JSONRPC   {server.http_url}/", err=True)
        click.echo(f"  HTTP+JSON {server.http_url}/v1/agents", err=True)
        await stop.wait()
        await server.stop()

    try:
        asyncio.run(main())
    except OSError as exc:
        raise click.ClickException(f"cannot start: {exc}") from None


def _trusted(paths: tuple[str, ...]) -> Any:
    """The ``--trust`` keys (None without any); ValueError for a bad file."""
    if not paths:
        return None
    from a2a_grpc.protocol.cardsign import TrustedKeys

    return TrustedKeys.from_files(paths)


_registry_option = click.option(
    "--registry",
    "registry_url",
    default=_DEFAULT_REGISTRY,
    show_default=True,
    envvar="A2A_GRPC_REGISTRY",
    show_envvar=True,
    help="The registry: grpc://HOST:PORT or its http:// URL.",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print ProtoJSON.")


def _client(url: str) -> Any:
    from a2a_grpc.registry._client import RegistryClient

    return RegistryClient(url)


def _show(agents: list[Any], as_json: bool) -> None:
    if as_json:
        for agent in agents:
            click.echo(protojson.dumps(protojson.to_dict(agent)))
        return
    table = Table("agent id", "name", "health", "skills", "base URL")
    for a in agents:
        table.add_row(
            a.agent_id,
            a.card.name,
            _HEALTH.get(a.health, "?"),
            ", ".join(s.id for s in a.card.skills),
            a.base_url,
        )
    make_console().print(table)


@registry.command("add")
@click.argument("url")
@_registry_option
@_json_option
def add(url: str, registry_url: str, as_json: bool) -> None:
    """Register the agent at base URL URL (the registry fetches its card)."""

    async def go() -> None:
        async with _client(registry_url) as client:
            _show([await client.register(url)], as_json)

    run(go())


@registry.command("remove")
@click.argument("agent_id")
@_registry_option
def remove(agent_id: str, registry_url: str) -> None:
    """Deregister AGENT_ID."""

    async def go() -> None:
        async with _client(registry_url) as client:
            await client.deregister(agent_id)
        click.echo(f"removed {agent_id}")

    run(go())


@registry.command("list")
@_registry_option
@_json_option
def list_agents(registry_url: str, as_json: bool) -> None:
    """Every registered agent."""

    async def go() -> None:
        async with _client(registry_url) as client:
            _show(await client.list(), as_json)

    run(go())


@registry.command("find")
@click.option("--skill", default="", help="Skill id.")
@click.option("--tag", default="", help="Skill tag.")
@click.option("--input-mode", default="", help="Accepted input media type.")
@click.option("--output-mode", default="", help="Produced output media type.")
@click.option("--binding", default="", help="GRPC, JSONRPC or HTTP+JSON.")
@click.option("--healthy/--any", "healthy_only", default=True, show_default=True)
@click.option("--query", default="", help="Free text over names, descriptions and skills.")
@_registry_option
@_json_option
def find(registry_url: str, as_json: bool, **filters: Any) -> None:
    """The agents matching every filter given."""

    async def go() -> None:
        async with _client(registry_url) as client:
            _show(await client.list(**filters), as_json)

    run(go())


@registry.command("watch")
@click.option(
    "--existing/--new-only", default=True, show_default=True, help="Start with the registered agents."
)
@_registry_option
def watch(existing: bool, registry_url: str) -> None:
    """Print the registry's changes as they happen (one JSON object a line)."""

    async def go() -> None:
        async with _client(registry_url) as client:
            async for change in await client.watch(include_existing=existing):
                click.echo(protojson.dumps(protojson.to_dict(change)))

    run(go())
