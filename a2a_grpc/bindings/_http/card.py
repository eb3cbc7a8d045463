"""The public Agent Card at ``/.well-known/agent-card.json`` (spec §8.1, §8.6).

The body is the ProtoJSON of the card returned by ``card_source()`` (the server
fills ``supportedInterfaces``), served as ``application/json`` with caching
headers: ``ETag`` (a strong tag from the content hash), ``Cache-Control:
public, max-age=N`` and ``Last-Modified`` (when this content was first served).
``If-None-Match`` (tag lists, weak tags, ``*``) — or, without it,
``If-Modified-Since`` — answers 304 Not Modified when the card is unchanged.
"""

from __future__ import annotations

import email.utils
import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from a2a_grpc.bindings._http.rest import error_response
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson

__all__ = ["CardEndpoint", "etag_matches"]

log = logging.getLogger(__name__)


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag[:2] in ("W/", "w/") else tag


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison of an ``If-None-Match`` value against ``etag``
    (RFC 9110 §13.1.2): ``*`` or any listed tag with the same opaque value."""
    want = _opaque(etag)
    for candidate in if_none_match.split(","):
        c = candidate.strip()
        if c == "*" or (c and _opaque(c) == want):
            return True
    return False


class CardEndpoint:
    """aiohttp handler serving ``card_source()`` with caching headers;
    ``render(card, request)`` turns the card into the JSON text served
    (default: its ProtoJSON); the answer varies by ``A2A-Version``."""

    def __init__(
        self,
        card_source: Callable[[], Any],
        *,
        max_age_seconds: int = 300,
        render: Callable[[Any, web.Request], str] | None = None,
    ) -> None:
        self.card_source = card_source
        self.render = render
        self.max_age_seconds = max_age_seconds
        self._etag = ""
        self._since = 0.0

    def _modified(self, etag: str) -> float:
        if etag != self._etag:
            self._etag, self._since = etag, float(int(time.time()))
        return self._since

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """GET/HEAD of the card; 304 on a matching conditional request."""
        try:
            card = self.card_source()
            text = self.render(card, request) if self.render is not None else protojson.to_json(card)
            body = text.encode("utf-8")
        except Exception:
            log.exception("agent card source failed")
            return error_response(A2AError(ErrorCode.INTERNAL, "agent card unavailable").to_status())
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        modified = self._modified(etag)
        headers = {
            "ETag": etag,
            "Cache-Control": f"public, max-age={self.max_age_seconds}",
            "Last-Modified": email.utils.formatdate(modified, usegmt=True),
            "Vary": "A2A-Version",
        }
        if_none_match = request.headers.get("If-None-Match")
        if if_none_match is not None:
            if etag_matches(if_none_match, etag):
                return web.Response(status=304, headers=headers)
        else:
            since = request.headers.get("If-Modified-Since")
            if since:
                try:
                    when = email.utils.parsedate_to_datetime(since).timestamp()
                except (TypeError, ValueError, IndexError):
                    when = None
                if when is not None and modified <= when:
                    return web.Response(status=304, headers=headers)
        return web.Response(body=body, content_type="application/json", charset="utf-8", headers=headers)
