"""What the two HTTP bindings (JSON-RPC and HTTP+JSON) share: one aiohttp
session per transport, timeouts, the connection probe, ProtoJSON decoding
and turning transport failures into A2AError."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from google.protobuf import message as _message

from a2a_grpc.client._base import CallOptions, Transport
from a2a_grpc.client._card import tls_hint
from a2a_grpc.client._sse import SSEEvent, iter_sse
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson

__all__ = ["HttpTransport", "parse_message", "to_json"]

#: Media types of successful JSON answers (digest §7.5): both are accepted.
JSON_TYPES = ("application/json", "application/a2a+json")
SSE_TYPE = "text/event-stream"


def to_json(msg: _message.Message) -> dict[str, Any]:
    """ProtoJSON of a request (camelCase names, enums by name, defaults left
    out — digest §3.0), by the project's one codec."""
    return protojson.to_dict(msg)


def parse_message(raw: Any, cls: type[_message.Message], *, what: str) -> _message.Message:
    """A proto from decoded ProtoJSON (:func:`a2a_grpc.protocol.protojson.parse`),
    ignoring unknown members (newer servers may add fields). ``null`` is the
    empty message (e.g. an Empty result, digest A10). A mismatch (an enum name
    the enum does not have among them) raises A2AError(INVALID_AGENT_RESPONSE)."""
    out = cls()
    if raw is None:
        return out
    try:
        return protojson.parse(raw, out)
    except A2AError as exc:
        raise A2AError(
            ErrorCode.INVALID_AGENT_RESPONSE, f"{what}: not a valid {cls.__name__}: {exc.message}"
        ) from None


def decode_json(body: bytes) -> Any:
    """Decoded JSON, or None when ``body`` is not JSON."""
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class HttpTransport(Transport):
    """Base of the JSON-RPC and HTTP+JSON transports. The aiohttp session is
    created lazily in the running loop. Unary calls are bounded by their
    ``timeout`` (seconds, the whole exchange); streams by their ``timeout``
    when one is given, else only the connection by ``connect_timeout``."""

    def __init__(self, url: str, options: CallOptions, *, connect_timeout: float = 10.0) -> None:
        super().__init__(url if "://" in url else "http://" + url, options)
        self.connect_timeout = connect_timeout
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        """The transport's session (created on first use)."""
        if self._session is None or self._session.closed:
            tls = self.options.tls
            connector = aiohttp.TCPConnector(ssl=tls.ssl_context()) if tls is not None else None
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def probe(self, timeout: float) -> None:
        """Opens and closes a TCP connection to the URL's host and port."""
        parts = urlsplit(self.url)
        host = parts.hostname or "localhost"
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        except TimeoutError:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{self.url}: no connection after {timeout:g}s") from None
        except OSError as exc:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{self.url}: {exc.strerror or exc}") from None
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    def client_timeout(self, timeout: float | None) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(total=timeout, sock_connect=self.connect_timeout)

    @contextlib.asynccontextmanager
    async def request(
        self,
        verb: str,
        url: str,
        *,
        timeout: float | None,
        json_body: Any = None,
        params: list[tuple[str, str]] | None = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """One HTTP exchange with the A2A headers; aiohttp failures become
        A2AError(UNAVAILABLE), timeouts A2AError(DEADLINE_EXCEEDED)."""
        headers = {**self.options.http_headers(), "Accept": accept}
        data = None
        if json_body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(json_body).encode()
        try:
            async with self.session().request(
                verb, url, data=data, params=params, headers=headers, timeout=self.client_timeout(timeout)
            ) as resp:
                yield resp
        except TimeoutError:
            limit = f"{timeout:g}s" if timeout is not None else f"{self.connect_timeout:g}s (connect)"
            raise A2AError(ErrorCode.DEADLINE_EXCEEDED, f"{verb} {url}: no answer within {limit}") from None
        except aiohttp.ClientPayloadError as exc:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{verb} {url}: connection lost: {exc}") from None
        except aiohttp.ClientConnectorError as exc:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{verb} {url}: {exc}") from None
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            # Connected, then hung up on or reset during set-up.
            raise A2AError(ErrorCode.UNAVAILABLE, f"{verb} {url}: {exc}{tls_hint(url)}") from None
        except aiohttp.ClientError as exc:
            raise A2AError(ErrorCode.UNAVAILABLE, f"{verb} {url}: {exc}") from None

    @staticmethod
    def is_sse(resp: aiohttp.ClientResponse) -> bool:
        return resp.content_type == SSE_TYPE

    @staticmethod
    async def events(resp: aiohttp.ClientResponse) -> AsyncIterator[SSEEvent]:
        async for event in iter_sse(resp.content.iter_any()):
            yield event

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
