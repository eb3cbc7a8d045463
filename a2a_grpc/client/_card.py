"""Agent Card discovery for clients: fetch, validate, choose an interface.

The card lives at ``/.well-known/agent-card.json`` (digest §8.1). A client
parses ``supportedInterfaces`` in the card's order and takes the first entry
whose binding and protocol version it supports (spec §8.3.2, digest §8.2).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp

from a2a_grpc.client import _v03 as v03
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import is_required, pb

if TYPE_CHECKING:
    from a2a_grpc.bindings.tls import ClientTLS
    from a2a_grpc.protocol.cardsign import TrustedKeys

__all__ = [
    "BINDINGS",
    "PROTOCOL_VERSION",
    "WELL_KNOWN_PATH",
    "binding_key",
    "card_url",
    "check_signatures",
    "fetch_card",
    "is_grpc_url",
    "matching_interfaces",
    "parse_card",
    "tls_hint",
]

#: The path of the public Agent Card (RFC 8615 well-known URI, spec §8.2).
WELL_KNOWN_PATH = "/.well-known/agent-card.json"
#: The A2A version this client speaks (sent as ``A2A-Version``).
PROTOCOL_VERSION = "1.0"
#: Short binding names accepted by the client and the CLI → the card's
#: ``protocolBinding`` strings (digest §8.2).
BINDINGS: Mapping[str, str] = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
_BY_PROTOCOL = {v: k for k, v in BINDINGS.items()}
log = logging.getLogger(__name__)


def binding_key(name: str) -> str:
    """The short name (``grpc``, ``jsonrpc``, ``rest``) of a binding given
    either way (``GRPC``, ``HTTP+JSON``, ``rest`` ...); raises ValueError."""
    if name.lower() in BINDINGS:
        return name.lower()
    key = _BY_PROTOCOL.get(name.upper())
    if key is None:
        raise ValueError(f"unknown binding {name!r}; expected one of {', '.join(BINDINGS)}")
    return key


def is_grpc_url(url: str) -> bool:
    """True for ``grpc://…`` and ``grpcs://…``: a gRPC endpoint given
    directly, without an Agent Card to discover it."""
    return url.strip().lower().startswith(("grpc://", "grpcs://"))


def card_url(base_url: str) -> str:
    """The well-known card URL of an agent's base URL. A URL that already
    names a ``.json`` document is used as is."""
    base = base_url.strip()
    if "://" not in base:
        base = "http://" + base
    if base.split("?", 1)[0].endswith(".json"):
        return base
    return base.rstrip("/") + WELL_KNOWN_PATH


def _missing(raw: Any, desc: Any, path: str) -> list[str]:
    """The JSON paths of REQUIRED singular fields absent from ``raw``,
    recursively through nested messages that are present."""
    if not isinstance(raw, Mapping):
        return []
    out: list[str] = []
    for field in desc.fields:
        present = field.json_name in raw or field.name in raw
        value = raw.get(field.json_name, raw.get(field.name))
        here = f"{path}.{field.json_name}" if path else field.json_name
        if field.type != field.TYPE_MESSAGE:
            if is_required(field) and not field.is_repeated and not present:
                out.append(here)
            continue
        msg = field.message_type
        if msg.GetOptions().map_entry:
            value_field = msg.fields_by_name["value"]
            if value_field.type == value_field.TYPE_MESSAGE and isinstance(value, Mapping):
                for k, v in value.items():
                    out.extend(_missing(v, value_field.message_type, f"{here}[{k}]"))
        elif field.is_repeated:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    out.extend(_missing(item, msg, f"{here}[{i}]"))
        elif not present:
            if is_required(field):
                out.append(here)
        elif not msg.full_name.startswith("google.protobuf."):
            out.extend(_missing(value, msg, here))
    return out


def parse_card(raw: Any, *, source: str = "agent card") -> pb.AgentCard:
    """Validates and parses a card given as decoded JSON.

    A v0.3 card (``url`` / ``preferredTransport`` / ``additionalInterfaces``,
    ``protocolVersion`` 0.3.x, no ``supportedInterfaces``) is read into the
    v1.0 card first, its interfaces with ``protocolVersion`` 0.3 (legacy digest
    §2.6, §6.4, C10; :func:`a2a_grpc.client._v03.card_up`).
    Unknown members are ignored (cards often carry v0.3 leftovers). Every
    REQUIRED field of the proto (``google.api.field_behavior``) that is not a
    list must be present, in nested messages too (lists may be left out: ProtoJSON
    writers drop empty ones), and ``supportedInterfaces`` must hold at least
    one entry. Spec §8 / digest §3.26-3.27.

    Raises ``A2AError(INVALID_AGENT_RESPONSE)`` naming what is wrong.
    """
    if not isinstance(raw, Mapping):
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{source}: not a JSON object")
    if v03.is_legacy_card(raw):
        raw = v03.card_up(raw, source=source)
    try:
        card = protojson.parse(dict(raw), pb.AgentCard())
    except A2AError as exc:
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{source}: {exc.message}") from None
    missing = _missing(raw, pb.AgentCard.DESCRIPTOR, "")
    if missing:
        raise A2AError(
            ErrorCode.INVALID_AGENT_RESPONSE,
            f"{source}: missing required field{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
        )
    if not card.supported_interfaces:
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{source}: supportedInterfaces is empty")
    for i, iface in enumerate(card.supported_interfaces):
        if not iface.url or not iface.protocol_binding:
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{source}: supportedInterfaces[{i}] needs a url and a protocolBinding",
            )
    return card


def _version_matches(version: str, wanted: str) -> bool:
    """Major.Minor comparison; a patch number is ignored (spec §14.2.1)."""
    return version.split(".")[:2] == wanted.split(".")[:2]


def matching_interfaces(
    card: pb.AgentCard, bindings: Iterable[str], *, version: str = PROTOCOL_VERSION
) -> list[pb.AgentInterface]:
    """The card's interfaces the caller may use, in the card's order (its
    preference order, spec §8.3.2): binding in ``bindings`` (short names or
    protocolBinding strings) and ``protocolVersion`` Major.Minor == ``version``.
    The caller's order of ``bindings`` does not reorder them."""
    allowed = {BINDINGS[binding_key(b)] for b in bindings}
    return [
        iface
        for iface in card.supported_interfaces
        if iface.protocol_binding.upper() in allowed and _version_matches(iface.protocol_version, version)
    ]


async def fetch_card(
    base_url: str,
    *,
    timeout: float = 30.0,
    headers: Mapping[str, str] | None = None,
    session: aiohttp.ClientSession | None = None,
    tls: ClientTLS | None = None,
    trusted: TrustedKeys | None = None,
    require_signature: bool = False,
) -> pb.AgentCard:
    """GETs and validates the public Agent Card of ``base_url``.

    ``tls`` gives the CA to trust (and a client certificate) for ``https``.
    The card's signatures are checked when it has any (spec §8.4.3, see
    :func:`check_signatures`) with the ``trusted`` keys and those of a
    ``jku`` on the card's own ``https`` host; ``require_signature`` refuses a
    card without a verified one.

    Raises ``A2AError``: UNAVAILABLE when the server cannot be reached or
    does not answer HTTP/1.1 (the message suggests ``grpc://`` for a gRPC
    port), DEADLINE_EXCEEDED after ``timeout`` seconds, UNAUTHENTICATED /
    PERMISSION_DENIED on 401/403, INVALID_AGENT_RESPONSE when there is no card
    or it is not a valid AgentCard (see :func:`parse_card`),
    UNSUPPORTED_OPERATION for a ``grpc://`` URL (A2A publishes cards over
    HTTP only; spec §8.2).
    """
    if is_grpc_url(base_url):
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"{base_url} is a gRPC endpoint: A2A serves the public Agent Card over HTTP only "
            "(give the agent's HTTP URL, or call GetExtendedAgentCard over gRPC)",
        )
    url = card_url(base_url)
    status, body = await _get(url, timeout, headers, session, tls)
    if status != 200:
        code = ErrorCode.from_http_status(status)
        if code not in (
            ErrorCode.UNAUTHENTICATED,
            ErrorCode.PERMISSION_DENIED,
            ErrorCode.RESOURCE_EXHAUSTED,
            ErrorCode.UNAVAILABLE,
            ErrorCode.DEADLINE_EXCEEDED,
        ):
            code = ErrorCode.INVALID_AGENT_RESPONSE
        raise A2AError(code, f"no agent card at {url} (HTTP {status})")
    try:
        raw = json.loads(body)
    except ValueError:
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"agent card at {url}: not JSON") from None
    card = parse_card(raw, source=f"agent card at {url}")
    if card.signatures or require_signature:
        await check_signatures(card, url, trusted, require=require_signature, timeout=timeout, tls=tls)
    return card


async def check_signatures(
    card: pb.AgentCard,
    url: str,
    trusted: TrustedKeys | None,
    *,
    require: bool = False,
    timeout: float = 30.0,
    tls: ClientTLS | None = None,
) -> int:
    """Verifies the signatures of a card fetched from ``url`` (spec §8.4.3)
    with ``trusted`` plus the JWK sets of its ``jku`` URLs that are ``https``
    on ``url``'s host (a set that cannot be fetched is skipped); returns how
    many verified. Raises ``A2AError(INVALID_AGENT_RESPONSE)`` as
    :func:`a2a_grpc.protocol.cardsign.verify_card` does."""
    try:
        from a2a_grpc.protocol.cardsign import TrustedKeys, jku_urls, verify_card
    except ImportError:  # pragma: no cover - the extra is part of dev
        if not require:
            log.debug("agent card at %s is signed; install a2a-grpc[tls] to verify it", url)
            return 0
        raise A2AError(
            ErrorCode.INVALID_AGENT_RESPONSE, "verifying card signatures needs the extra a2a-grpc[tls]"
        ) from None
    keys = TrustedKeys(dict(trusted.by_kid), list(trusted.anonymous)) if trusted else TrustedKeys()
    for jku in jku_urls(card, url):
        try:
            status, body = await _get(jku, timeout, None, None, tls)
            if status == 200:
                keys.add_jwks(json.loads(body), source=jku)
        except (A2AError, ValueError) as exc:
            log.warning("agent card at %s: cannot use the keys at %s: %s", url, jku, exc)
    return verify_card(card, keys, require=require, source=f"agent card at {url}")


async def _get(
    url: str,
    timeout: float,
    headers: Mapping[str, str] | None,
    session: aiohttp.ClientSession | None,
    tls: ClientTLS | None = None,
) -> tuple[int, bytes]:
    """GETs ``url``: (HTTP status, body); transport failures as A2AError
    (see :func:`fetch_card`)."""
    own = session is None
    sess = session or aiohttp.ClientSession()
    try:
        async with sess.get(
            url,
            headers={"Accept": "application/json", **(headers or {})},
            timeout=aiohttp.ClientTimeout(total=timeout),
            ssl=tls.ssl_context() if tls is not None else True,
        ) as resp:
            return resp.status, await resp.read()
    except TimeoutError:
        raise A2AError(
            ErrorCode.DEADLINE_EXCEEDED, f"agent card at {url}: no answer in {timeout:g}s"
        ) from None
    except aiohttp.ClientConnectorError as exc:
        raise A2AError(ErrorCode.UNAVAILABLE, f"agent card at {url}: {exc}") from None
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
        raise A2AError(ErrorCode.UNAVAILABLE, f"agent card at {url}: {exc}{tls_hint(url)}") from None
    except aiohttp.ClientResponseError as exc:
        if "bad status line" not in str(exc.message).lower():
            raise A2AError(ErrorCode.UNAVAILABLE, f"agent card at {url}: {exc.message}") from None
        raise A2AError(ErrorCode.UNAVAILABLE, _not_http(url)) from None
    except aiohttp.ClientError as exc:
        raise A2AError(ErrorCode.UNAVAILABLE, f"agent card at {url}: {exc}") from None
    finally:
        if own:
            await sess.close()


def tls_hint(url: str) -> str:
    """Why a server may hang up right after connecting: a TLS port spoken to
    in plaintext, or one that wants a client certificate (docs/tls.md)."""
    if url.lower().startswith("http://"):
        return " (if the port serves TLS, use https:// and --ca)"
    return " (the server may require a client certificate it trusts: --cert/--key)"


def _not_http(url: str) -> str:
    """The one-line explanation for a server that answered an HTTP/1.1
    request with something else — typically a gRPC port (HTTP/2 only)."""
    parts = urlsplit(url)
    return (
        f"{parts.scheme}://{parts.netloc} does not answer HTTP/1.1, so it serves no Agent Card; "
        f"if it is a gRPC port, use grpc://{parts.netloc}"
    )


def describe_interfaces(interfaces: Sequence[pb.AgentInterface]) -> str:
    """``GRPC 127.0.0.1:50051, JSONRPC http://...`` for error messages."""
    return ", ".join(f"{i.protocol_binding} {i.url}" for i in interfaces) or "none"
