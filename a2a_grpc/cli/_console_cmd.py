"""``a2a-grpc console URL``: the web console (:mod:`a2a_grpc.console`) for the agent at URL.

It listens on 127.0.0.1 only — it acts with the credentials it was given
(``--api-key`` / ``--token``, their ``A2A_GRPC_*`` variables, or
``--api-key-file`` / ``--token-file``), which never reach the browser — and
prints the address to open. ``--store`` adds the dead-letter panel (the
server's store, as for ``a2a-grpc admin``), ``--registry`` the registry
panel; the charts read the agent's ``/metrics`` (``--metrics-url``,
``--no-metrics``). docs/console.md describes the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from a2a_grpc.cli._client_cmds import credential_options
from a2a_grpc.cli._tls_opts import client_tls_options
from a2a_grpc.client import BINDINGS, Credentials

__all__ = ["console"]

#: Where ``a2a-grpc console`` listens unless told otherwise.
DEFAULT_PORT = 8090


def _secret(value: str, path: Path | None, option: str) -> str:
    """The secret of ``--x`` or, when given, the first line of ``--x-file``."""
    if path is None:
        return value
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint=option) from None


def _trusted(paths: tuple[Path, ...]) -> Any:
    if not paths:
        return None
    from a2a_grpc.protocol.cardsign import TrustedKeys

    try:
        return TrustedKeys.from_files(paths)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--trust") from None


@click.command()
@click.argument("url")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    envvar="A2A_GRPC_CONSOLE_PORT",
    show_envvar=True,
    help="Port on 127.0.0.1 (0 = any free port).",
)
@click.option(
    "--binding",
    type=click.Choice(sorted(BINDINGS)),
    default=None,
    help="Talk to the agent over this binding only (default: the card's first reachable interface).",
)
@credential_options
@click.option(
    "--api-key-file", type=click.Path(dir_okay=False, path_type=Path), help="Read the API key from this file."
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the bearer token from this file.",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    help="The agent's store (sqlite:///PATH or postgresql://...), for the dead-letter panel.",
)
@click.option(
    "--registry", "registry_url", default=None, help="Agent registry (grpc://HOST:PORT or http://)."
)
@click.option("--metrics-url", default="", help="Prometheus endpoint of the agent [default: URL/metrics].")
@click.option("--no-metrics", is_flag=True, help="No charts (do not read /metrics).")
@click.option(
    "--trust",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="KEYS",
    help="PEM public key, certificate or JWK set trusted for card signatures (repeatable).",
)
@client_tls_options
def console(
    url: str,
    port: int,
    binding: str | None,
    api_key: str,
    token: str,
    api_key_file: Path | None,
    token_file: Path | None,
    store_url: str | None,
    registry_url: str | None,
    metrics_url: str,
    no_metrics: bool,
    trust: tuple[Path, ...],
    tls: Any = None,
) -> None:
    """Serve a web console for the A2A agent at URL (v1.0 or v0.3) on 127.0.0.1."""
    from a2a_grpc.console import console_app

    credentials = Credentials(
        _secret(api_key, api_key_file, "--api-key-file"), _secret(token, token_file, "--token-file")
    )
    store = None
    if store_url:
        from a2a_grpc.store import open_store

        try:
            store = open_store(store_url)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--store") from None
    try:
        app = console_app(
            url,
            credentials=credentials or None,
            bindings=(binding,) if binding else tuple(BINDINGS),
            tls=tls,
            trusted_keys=_trusted(trust),
            store=store,
            store_owned=True,
            registry_url=registry_url,
            metrics_url=None if no_metrics else metrics_url,
        )
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    _run(app, port, url)


def _run(app: Any, port: int, url: str) -> None:
    """Serves ``app`` on 127.0.0.1:``port`` until SIGINT/SIGTERM."""
    import asyncio
    import signal

    from aiohttp import web

    from a2a_grpc.server import run_loop

    async def main() -> None:
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
        bound = runner.addresses[0][1]
        click.echo(f"console for {url}: http://127.0.0.1:{bound}/", err=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    run_loop(main())
