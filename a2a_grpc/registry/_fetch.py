"""Fetching and validating an agent's card for the registry.

:class:`CardFetcher` GETs ``base_url + /.well-known/agent-card.json``
(:func:`a2a_grpc.client._card.card_url`) through the webhook SSRF guard
(:mod:`a2a_grpc.push._ssrf`): the base URL must be http/https without
userinfo, and every address its host resolves to — checked again when
connecting, against DNS rebinding — must be public unless the policy's
allow-list admits it. With an ETag from an earlier fetch it sends
``If-None-Match``, so an unchanged card costs a 304 and no body.

The card is validated by :func:`a2a_grpc.client._card.parse_card` (REQUIRED
fields, at least one interface with url and protocolBinding) and by
:func:`check_card` (at least one skill, unique skill ids, known bindings,
interface URLs with a scheme and host). It is stored as fetched: its URLs
are never rewritten.

``verify`` is the signed-card policy hook: a callable given the parsed card
that raises ``A2AError`` to refuse it (for example one that verifies
``signatures`` and, when required, refuses unsigned cards). None accepts
every valid card.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from a2a_grpc.client._card import BINDINGS, card_url, parse_card
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.push._ssrf import AddressPolicy, GuardedResolver, UnsafeURLError
from a2a_grpc.types import pb

__all__ = ["CardFetcher", "Fetched", "check_card", "open_policy"]

#: Allow-list entries admitting every address (``--allow-private``).
_EVERYWHERE = ("0.0.0.0/0", "::/0")


def open_policy(allow_private: bool, allow: tuple[str, ...] = ()) -> AddressPolicy:
    """The SSRF policy of the registry: public addresses, plus ``allow``
    entries (CIDRs, addresses, host names), or everything when
    ``allow_private``. Raises ValueError for a bad entry."""
    return AddressPolicy((*allow, *(_EVERYWHERE if allow_private else ())))


@dataclass(frozen=True, slots=True)
class Fetched:
    """The result of one fetch: ``card`` is None when the server answered
    304 Not Modified to ``If-None-Match``."""

    card: pb.AgentCard | None
    etag: str
    raw: bytes


def check_card(card: pb.AgentCard, source: str) -> None:
    """The registry's checks beyond :func:`parse_card`: skills present with
    unique ids, interfaces of a known binding with an absolute URL. Raises
    ``A2AError(INVALID_AGENT_RESPONSE)`` naming the first problem."""
    if not card.skills:
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{source}: the card declares no skills")
    seen: set[str] = set()
    for i, skill in enumerate(card.skills):
        if skill.id in seen:
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{source}: skills[{i}].id {skill.id!r} repeats")
        seen.add(skill.id)
    known = set(BINDINGS.values())
    for i, iface in enumerate(card.supported_interfaces):
        if iface.protocol_binding.upper() not in known:
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{source}: supportedInterfaces[{i}].protocolBinding {iface.protocol_binding!r} is not "
                f"one of {', '.join(sorted(known))}",
            )
        url = iface.url if "://" in iface.url else "grpc://" + iface.url
        parts = urlsplit(url)
        if not parts.hostname:
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{source}: supportedInterfaces[{i}].url {iface.url!r} has no host",
            )


class CardFetcher:
    """GETs agent cards under an SSRF ``policy``; ``verify`` is the
    signed-card hook (see the module docstring)."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        timeout: float = 10.0,
        verify: Callable[[pb.AgentCard], None] | None = None,
    ) -> None:
        self.policy = policy
        self.timeout = timeout
        self.verify = verify
        self._session: aiohttp.ClientSession | None = None

    async def check_base_url(self, base_url: str) -> str:
        """The card URL of ``base_url`` after the SSRF checks (DNS included).
        Raises ``A2AError(INVALID_PARAMS)`` on ``base_url``."""
        if not base_url.strip():
            raise A2AError.invalid_params(FieldViolation("base_url", "is required"))
        url = card_url(base_url)
        try:
            await self.policy.check_url(url)
        except UnsafeURLError as err:
            text = str(err).replace("the webhook URL", "the URL").replace("webhook ", "")
            raise A2AError.invalid_params(FieldViolation("base_url", text)) from None
        return url

    async def fetch(self, base_url: str, etag: str = "") -> Fetched:
        """Fetches and validates the card of ``base_url``; with ``etag``, a
        304 answer gives ``Fetched(card=None)``. Raises A2AError:
        INVALID_PARAMS for a refused URL, UNAVAILABLE / DEADLINE_EXCEEDED
        when the agent cannot be reached, INVALID_AGENT_RESPONSE for a
        missing or invalid card."""
        url = await self.check_base_url(base_url)
        headers = {"Accept": "application/json"}
        if etag:
            headers["If-None-Match"] = etag
        try:
            async with self._client().get(
                url, headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout), allow_redirects=False
            ) as resp:
                status, body, tag = resp.status, await resp.read(), resp.headers.get("ETag", "")
        except TimeoutError:
            raise A2AError(ErrorCode.DEADLINE_EXCEEDED, f"{url}: no answer in {self.timeout:g}s") from None
        except aiohttp.ClientError as exc:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{url}: {exc or type(exc).__name__}") from None
        if status == 304 and etag:
            return Fetched(None, tag or etag, b"")
        if status != 200:
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"no agent card at {url} (HTTP {status})")
        try:
            raw = json.loads(body)
        except ValueError:
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"agent card at {url}: not JSON") from None
        card = parse_card(raw, source=f"agent card at {url}")
        check_card(card, f"agent card at {url}")
        if self.verify is not None:
            self.verify(card)
        return Fetched(card, tag, body)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(resolver=GuardedResolver(self.policy))
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def close(self) -> None:
        """Closes the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None
