"""The agent the console looks at, reached with the console's credentials.

:class:`Agent` connects :class:`~a2a_grpc.client.A2AClient` to the target's
card (A2A 1.0, or 0.3 when that is all the card offers) on first use and
again after the connection failed. In *forward* mode (the console mounted in
``a2a-grpc serve --auth``) each browser request's own ``Authorization`` /
``X-API-Key`` goes with its calls instead, so tasks stay the caller's; a
small cache keeps one client per credential.

:meth:`Agent.card` reads the public card as served (the raw JSON is kept for
the page) and says whether its signatures verify, the way the client checks
them (spec §8.4.3, :mod:`a2a_grpc.protocol.cardsign`).
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp

from a2a_grpc.client import A2AClient, Credentials, parse_card
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["FORWARDED_HEADERS", "Agent"]

#: The request headers forward mode passes on to the agent.
FORWARDED_HEADERS = ("Authorization", "X-API-Key")
_WELL_KNOWN = "/.well-known/agent-card.json"
_MAX_CLIENTS = 16


class Agent:
    """Calls into the agent at ``url()`` (see the module docstring)."""

    def __init__(
        self,
        url: Callable[[], str],
        *,
        credentials: Credentials | None = None,
        forward: bool = False,
        bindings: tuple[str, ...] = ("grpc", "jsonrpc", "rest"),
        tls: Any = None,
        trusted: Any = None,
        timeout: float = 60.0,
    ) -> None:
        self.url = url
        self.credentials = credentials
        self.forward = forward
        self.bindings = bindings
        self.tls = tls
        self.trusted = trusted
        self.timeout = timeout
        self._clients: OrderedDict[tuple[tuple[str, str], ...], A2AClient] = OrderedDict()
        self._connecting = asyncio.Lock()  # one connect at a time: two would leak a client

    def _headers(self, request_headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        if not self.forward:
            return ()
        return tuple((h, request_headers[h]) for h in FORWARDED_HEADERS if request_headers.get(h))

    async def client(self, request_headers: Mapping[str, str]) -> A2AClient:
        """The client for a browser request (connected on first use). Raises
        what :meth:`A2AClient.connect` raises (UNAVAILABLE, INVALID_AGENT_RESPONSE …)."""
        key = self._headers(request_headers)
        async with self._connecting:
            client = self._clients.get(key)
            if client is None:
                client = await A2AClient.connect(
                    self.url(),
                    bindings=self.bindings,
                    timeout=self.timeout,
                    headers=dict(key),
                    tls=self.tls,
                    credentials=self.credentials,
                    trusted_keys=self.trusted,
                )
                self._clients[key] = client
                while len(self._clients) > _MAX_CLIENTS:
                    await self._clients.popitem(last=False)[1].close()
            self._clients.move_to_end(key)
            return client

    async def forget(self, request_headers: Mapping[str, str]) -> None:
        """Drops the client of these headers (after UNAVAILABLE: reconnect next time)."""
        client = self._clients.pop(self._headers(request_headers), None)
        if client is not None:
            await client.close()

    async def close(self) -> None:
        """Closes every client."""
        while self._clients:
            await self._clients.popitem()[1].close()

    def describe(self) -> dict[str, Any]:
        """The interface in use (``{}`` before the first call)."""
        if not self._clients:
            return {}
        iface = next(reversed(self._clients.values())).interface
        return {
            "binding": iface.protocol_binding,
            "url": iface.url,
            "protocolVersion": iface.protocol_version,
        }

    async def card(self) -> dict[str, Any]:
        """``{"card": ProtoJSON, "raw": as served, "signature": {state, detail}}``;
        ``state`` is ``unsigned``, ``verified``, ``unverified`` (signed, but no
        key to check it: ``--trust``) or ``invalid``. Raises A2AError
        (UNAVAILABLE, INVALID_AGENT_RESPONSE) when there is no valid card."""
        url = self.url().rstrip("/") + _WELL_KNOWN
        raw = await self._get_json(url)
        card = parse_card(raw, source=f"agent card at {url}")
        return {"card": protojson.to_dict(card), "raw": raw, "signature": await self._signature(card, url)}

    async def _get_json(self, url: str) -> Any:
        ssl = self.tls.ssl_context() if self.tls is not None else True
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.get(url, timeout=aiohttp.ClientTimeout(total=self.timeout), ssl=ssl) as resp,
            ):
                body = await resp.read()
                if resp.status != 200:
                    raise A2AError(
                        ErrorCode.INVALID_AGENT_RESPONSE, f"no agent card at {url} (HTTP {resp.status})"
                    )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{url}: {exc or type(exc).__name__}") from None
        try:
            return json.loads(body)
        except ValueError:
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"agent card at {url}: not JSON") from None

    async def _signature(self, card: pb.AgentCard, url: str) -> dict[str, str]:
        if not card.signatures:
            return {"state": "unsigned", "detail": "the card carries no signature"}
        try:
            from a2a_grpc.protocol.cardsign import TrustedKeys, jku_urls, verify_card
        except ImportError:
            return {"state": "unverified", "detail": "verifying signatures needs the extra a2a-grpc[tls]"}
        keys = (
            TrustedKeys(dict(self.trusted.by_kid), list(self.trusted.anonymous))
            if self.trusted
            else TrustedKeys()
        )
        for jku in jku_urls(card, url):
            try:
                keys.add_jwks(await self._get_json(jku), source=jku)
            except (A2AError, ValueError) as exc:
                return {"state": "unverified", "detail": f"cannot use the keys at {jku}: {exc}"}
        try:
            verified = verify_card(card, keys, source=f"agent card at {url}")
        except A2AError as exc:
            return {"state": "invalid", "detail": exc.message}
        if verified:
            return {
                "state": "verified",
                "detail": f"{verified} of {len(card.signatures)} signature(s) verified",
            }
        return {"state": "unverified", "detail": "signed, but no trusted key to check it (--trust KEYS)"}
