"""The TLS and card-signing options of ``a2a-grpc serve`` and the client commands.

``serve_tls_options`` adds ``--tls-cert``, ``--tls-key``, ``--tls-client-ca``,
``--require-client-cert``, ``--grpc-mtls-port``, ``--sign-card``,
``--sign-card-kid`` and ``--sign-card-jku`` (each with its ``A2A_GRPC_*``
variable) and hands the command ``tls`` (a :class:`~a2a_grpc.bindings.tls.ServerTLS`
or None) and ``card_signer`` (a :class:`~a2a_grpc.protocol.cardsign.CardSigner` or
None). ``client_tls_options`` adds ``--cert``, ``--key`` and ``--ca`` and hands
``tls`` (a :class:`~a2a_grpc.bindings.tls.ClientTLS` or None). See docs/tls.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["client_tls_options", "serve_tls_options"]

#: Existence is checked when the files are read, with a message naming what each file is for.
_FILE = click.Path(dir_okay=False, path_type=Path)


def _server_tls(
    cert: Path | None, key: Path | None, client_ca: Path | None, require: bool, mtls_port: int | None
) -> Any:
    """The ServerTLS the options describe (None without --tls-cert); a bad
    combination or unusable file is a ClickException."""
    if cert is None and key is None:
        if client_ca is not None or require or mtls_port is not None:
            raise click.ClickException(
                "--tls-client-ca, --require-client-cert and --grpc-mtls-port need --tls-cert"
            )
        return None
    if cert is None or key is None:
        raise click.ClickException("TLS needs both --tls-cert and --tls-key")
    from a2a_grpc.bindings.tls import ServerTLS

    tls = ServerTLS(cert, key, client_ca, require_client_cert=require, mtls_grpc_port=mtls_port)
    try:
        tls.check()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    return tls


def _signer(key: Path | None, kid: str | None, jku: str | None) -> Any:
    if key is None:
        if kid or jku:
            raise click.ClickException("--sign-card-kid and --sign-card-jku need --sign-card")
        return None
    try:
        from a2a_grpc.protocol.cardsign import CardSigner

        return CardSigner.from_pem(key, kid=kid, jku=jku)
    except ImportError:
        raise click.ClickException("--sign-card needs the extra: pip install 'a2a-grpc[tls]'") from None
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


_SERVE_OPTIONS = (
    click.option(
        "--tls-cert",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_TLS_CERT",
        show_envvar=True,
        help="PEM certificate chain: serve both ports over TLS (with --tls-key).",
    ),
    click.option(
        "--tls-key",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_TLS_KEY",
        show_envvar=True,
        help="PEM private key of --tls-cert.",
    ),
    click.option(
        "--tls-client-ca",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_TLS_CLIENT_CA",
        show_envvar=True,
        help="PEM CA bundle of accepted client certificates (mTLS); HTTP asks for one, optionally.",
    ),
    click.option(
        "--require-client-cert/--no-require-client-cert",
        default=False,
        envvar="A2A_GRPC_REQUIRE_CLIENT_CERT",
        show_envvar=True,
        help="Refuse connections without a client certificate from --tls-client-ca, on both ports.",
    ),
    click.option(
        "--grpc-mtls-port",
        type=click.IntRange(0, 65535),
        default=None,
        envvar="A2A_GRPC_GRPC_MTLS_PORT",
        show_envvar=True,
        help="Second gRPC port that requires client certificates (listed in the card); 0 = any free port.",
    ),
    click.option(
        "--sign-card",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_SIGN_CARD",
        show_envvar=True,
        help="PEM private key (EC P-256, RSA, Ed25519) signing the Agent Card (JWS over JCS, spec §8.4).",
    ),
    click.option(
        "--sign-card-kid",
        default=None,
        envvar="A2A_GRPC_SIGN_CARD_KID",
        show_envvar=True,
        help="kid of the card signature [default: the key's RFC 7638 thumbprint].",
    ),
    click.option(
        "--sign-card-jku",
        default=None,
        envvar="A2A_GRPC_SIGN_CARD_JKU",
        show_envvar=True,
        help="jku of the card signature: https URL of a JWK set holding the public key.",
    ),
)

_CLIENT_OPTIONS = (
    click.option(
        "--ca",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_CA",
        show_envvar=True,
        help="PEM CA bundle to trust for https/TLS (instead of the system roots).",
    ),
    click.option(
        "--cert",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_CLIENT_CERT",
        show_envvar=True,
        help="PEM client certificate for mTLS (with --key).",
    ),
    click.option(
        "--key",
        type=_FILE,
        default=None,
        envvar="A2A_GRPC_CLIENT_KEY",
        show_envvar=True,
        help="PEM private key of --cert.",
    ),
)


def _decorate(wrapper: Callable[..., Any], options: tuple[Callable[..., Any], ...]) -> Callable[..., Any]:
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def serve_tls_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the server TLS / mTLS / card-signing options; passes ``tls`` and
    ``card_signer``. A signed card with a wildcard ``--host`` needs
    ``--public-url``: its URLs are fixed at start-up (ClickException otherwise)."""

    @functools.wraps(fn)
    def wrapper(
        *args: Any,
        tls_cert: Path | None,
        tls_key: Path | None,
        tls_client_ca: Path | None,
        require_client_cert: bool,
        grpc_mtls_port: int | None,
        sign_card: Path | None,
        sign_card_kid: str | None,
        sign_card_jku: str | None,
        **kwargs: Any,
    ) -> Any:
        kwargs["tls"] = _server_tls(tls_cert, tls_key, tls_client_ca, require_client_cert, grpc_mtls_port)
        kwargs["card_signer"] = _signer(sign_card, sign_card_kid, sign_card_jku)
        if (
            sign_card is not None
            and kwargs.get("host") in ("0.0.0.0", "::", "")
            and not kwargs.get("public_url")
        ):
            raise click.ClickException(
                "--sign-card with a wildcard --host needs --public-url (and --public-grpc): "
                "a signed card's URLs are fixed at start-up, never taken from a request's Host header"
            )
        return fn(*args, **kwargs)

    return _decorate(wrapper, _SERVE_OPTIONS)


def client_tls_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--cert``, ``--key`` and ``--ca``; passes ``tls`` (None when none is given)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, ca: Path | None, cert: Path | None, key: Path | None, **kwargs: Any) -> Any:
        tls = None
        if ca or cert or key:
            from a2a_grpc.bindings.tls import ClientTLS

            tls = ClientTLS(ca=ca, cert=cert, key=key)
            try:
                tls.check()
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--cert/--key/--ca") from None
        kwargs["tls"] = tls
        return fn(*args, **kwargs)

    return _decorate(wrapper, _CLIENT_OPTIONS)
