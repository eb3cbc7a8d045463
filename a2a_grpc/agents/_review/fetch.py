"""Fetches a diff named by a file part's ``url`` (http or https only), with a size cap, a timeout
and, unless allowed, no requests to loopback, private, link-local or otherwise non-public
addresses (the agent must not become a proxy into the server's network)."""

from __future__ import annotations

import ipaddress
import socket

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

__all__ = ["FetchError", "fetch_text"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_REDIRECTS = 5


class FetchError(Exception):
    """The URL could not be fetched as text; the message says why, for the task's status."""


def _check_address(host: str, allow_private: bool) -> None:
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return
    if not allow_private and not addr.is_global:
        raise FetchError(f"refusing to fetch from non-public address {host}")


class _GuardedResolver(AbstractResolver):
    """Resolves like aiohttp's default resolver, then refuses non-public addresses; the check
    happens on the addresses actually connected to, so DNS cannot swap them afterwards."""

    def __init__(self, allow_private: bool) -> None:
        self._inner = aiohttp.DefaultResolver()
        self._allow_private = allow_private

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for r in results:
            _check_address(r["host"], self._allow_private)
        return results

    async def close(self) -> None:
        await self._inner.close()


async def fetch_text(url: str, *, max_bytes: int, timeout: float, allow_private: bool = False) -> str:
    """GETs ``url`` and returns the body decoded as UTF-8 (or the charset the server names).

    Follows up to 5 redirects (each target checked again). Raises :class:`FetchError` for a
    non-http(s) URL, a refused address, a connection failure, a status other than 200, a body over
    ``max_bytes`` bytes, an undecodable body, or when ``timeout`` seconds pass.
    """
    current = URL(url)
    connector = aiohttp.TCPConnector(resolver=_GuardedResolver(allow_private), use_dns_cache=False)
    client_timeout = aiohttp.ClientTimeout(total=timeout)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=client_timeout) as session:
            for _ in range(_MAX_REDIRECTS + 1):
                if current.scheme not in ("http", "https") or not current.host:
                    raise FetchError(f"only http and https URLs can be fetched, not {str(current)!r}")
                _check_address(current.host, allow_private)
                async with session.get(current, allow_redirects=False) as resp:
                    if resp.status in _REDIRECTS and "Location" in resp.headers:
                        current = current.join(URL(resp.headers["Location"]))
                        continue
                    if resp.status != 200:
                        raise FetchError(
                            f"GET {current} answered HTTP {resp.status} {resp.reason or ''}".rstrip()
                        )
                    if resp.content_length is not None and resp.content_length > max_bytes:
                        raise FetchError(
                            f"{current} is {resp.content_length} bytes; the limit is {max_bytes}"
                        )
                    body = bytearray()
                    async for chunk in resp.content.iter_chunked(64 * 1024):
                        body += chunk
                        if len(body) > max_bytes:
                            raise FetchError(f"{current} is larger than the limit of {max_bytes} bytes")
                    charset = resp.charset or "utf-8"
                    try:
                        return bytes(body).decode(charset)
                    except (UnicodeDecodeError, LookupError) as exc:
                        raise FetchError(f"{current} is not {charset} text: {exc}") from exc
            raise FetchError(f"{url} redirected more than {_MAX_REDIRECTS} times")
    except TimeoutError as exc:
        raise FetchError(f"fetching {current} took longer than {timeout:g} s") from exc
    except aiohttp.ClientError as exc:
        raise FetchError(f"cannot fetch {current}: {exc}") from exc
