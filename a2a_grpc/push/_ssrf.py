"""SSRF guard for push-notification webhooks (spec §13.2, digest §11.4).

A webhook URL comes from a client, and the agent POSTs to it from inside its
own network. Without a guard a client can make the agent call its metadata
service (169.254.169.254), a database on localhost or anything on the private
network. The guard is on by default and works in two places:

* **Create time** (:meth:`AddressPolicy.check_url`): the URL must be plain
  ``http``/``https`` without userinfo; the host must be a DNS name or a
  canonical IP literal (``2130706433``, ``0177.0.0.1`` and ``0x7f.1`` — other
  spellings of 127.0.0.1 — are refused outright); every address the name
  resolves to must be public.
* **Every delivery** (:class:`GuardedResolver`): aiohttp asks this resolver for
  the addresses to connect to. It resolves again and checks every address
  again, and the connection is made only to addresses it returned, so a name
  that re-resolves to a private address after the create-time check (DNS
  rebinding) is caught at the moment of connecting.

Blocked: loopback, RFC 1918 private, CGNAT 100.64/10, link-local (169.254/16
including the cloud metadata address, fe80::/10), unspecified, multicast,
broadcast, reserved (240/4), benchmark (198.18/15) and documentation ranges,
the IETF protocol-assignment blocks, ULA fc00::/7, deprecated site-local
fec0::/10, discard 100::/64, Teredo and ORCHID. IPv6 forms that carry an IPv4
address (IPv4-mapped ``::ffff:a.b.c.d``, 6to4 ``2002::/16``, NAT64
``64:ff9b::/96`` and ``64:ff9b:1::/48``) are judged by the embedded IPv4
address; the deprecated IPv4-compatible form ``::a.b.c.d`` is refused.

An allow-list of networks (``10.1.2.0/24``, ``127.0.0.1``) and host names
(``hooks.internal``, ``*.corp.example``) admits trusted private targets.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

__all__ = [
    "AddressPolicy",
    "BlockedAddressError",
    "GetAddrInfo",
    "GuardedResolver",
    "Target",
    "UnsafeURLError",
    "blocked_reason",
    "header_value_problem",
    "scheme_problem",
    "split_allow",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: ``loop.getaddrinfo``-shaped coroutine: (host, port, family) -> getaddrinfo tuples.
GetAddrInfo = Callable[[str, int, int], Awaitable[list[tuple[Any, ...]]]]


class UnsafeURLError(ValueError):
    """The webhook URL is malformed or points somewhere push must not go.

    ``str(err)`` is a reason fit to show the client (it never echoes
    credentials: userinfo is refused before anything else is looked at)."""


class BlockedAddressError(UnsafeURLError):
    """A host resolved to (or is) an address the policy blocks."""


_V4_BLOCKED: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "'this network' / unspecified"),
    ("10.0.0.0/8", "private (RFC 1918)"),
    ("100.64.0.0/10", "carrier-grade NAT (RFC 6598)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (incl. cloud metadata 169.254.169.254)"),
    ("172.16.0.0/12", "private (RFC 1918)"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "private (RFC 1918)"),
    ("198.18.0.0/15", "benchmarking (RFC 2544)"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved / broadcast"),
)
_V6_BLOCKED: tuple[tuple[str, str], ...] = (
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "deprecated IPv4-compatible IPv6"),
    ("100::/64", "discard-only"),
    ("2001::/32", "Teredo tunnel"),
    ("2001:2::/48", "benchmarking"),
    ("2001:10::/28", "ORCHID"),
    ("2001:20::/28", "ORCHIDv2"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "SRv6 SIDs"),
    ("fc00::/7", "unique local (ULA)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "deprecated site-local"),
    ("ff00::/8", "multicast"),
)
_V4_NETS = [(ipaddress.IPv4Network(n), why) for n, why in _V4_BLOCKED]
_V6_NETS = [(ipaddress.IPv6Network(n), why) for n, why in _V6_BLOCKED]
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))

# A host made only of digits, hex digits, 'x' and dots is an IPv4 spelling to
# inet_aton() (2130706433, 0177.0.0.1, 0x7f.1, 127.1), not a DNS name.
_NUMERIC_HOST = re.compile(r"^[0-9a-fx.]+$", re.IGNORECASE)
_LOOKS_NUMERIC = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_DNS_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in net for net in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address, or None when it is.

    IPv6 forms that embed an IPv4 address are judged by that address too."""
    if isinstance(ip, ipaddress.IPv4Address):
        for net, why in _V4_NETS:
            if ip in net:
                return f"{ip} is {why}"
        return None
    v4 = _embedded_v4(ip)
    if v4 is not None:
        inner = blocked_reason(v4)
        return None if inner is None else f"{ip} embeds {inner}"
    for net6, why6 in _V6_NETS:
        if ip in net6:
            return f"{ip} is {why6}"
    return None


def _parse_ip(text: str) -> IPAddress:
    """An address from getaddrinfo/yarl text, without an IPv6 zone (``%eth0``)."""
    return ipaddress.ip_address(text.split("%", 1)[0])


def _normalise_host(host: str) -> str:
    return host.rstrip(".").lower()


def _check_host_name(raw_host: str) -> None:
    """Checks a URL host that is not an IP literal: a valid DNS name, not a
    numeric IPv4 spelling such as ``0x7f.1`` or ``2130706433``.

    Raises BlockedAddressError for a non-canonical IPv4 spelling,
    UnsafeURLError for anything else that is not a host name."""
    name = _normalise_host(raw_host)
    labels = name.split(".")
    if _NUMERIC_HOST.match(name) and all(_LOOKS_NUMERIC.match(label) for label in labels if label):
        try:
            meant = socket.inet_ntoa(socket.inet_aton(name))
        except OSError:
            meant = None
        if meant is not None:
            raise BlockedAddressError(
                f"the webhook host {raw_host!r} is a non-canonical IPv4 spelling (it means {meant}); "
                "write IPv4 addresses as four decimal numbers"
            )
        raise UnsafeURLError(f"the webhook host {raw_host!r} is not a valid host name or IP address")
    if len(name) > 253 or not all(_DNS_LABEL.match(label) for label in labels):
        raise UnsafeURLError(f"the webhook host {raw_host!r} is not a valid host name")


@dataclass(frozen=True, slots=True)
class Target:
    """What a checked webhook URL connects to."""

    url: URL
    host: str  # ASCII (IDNA) host name or IP literal, as aiohttp will resolve it
    port: int
    ip: IPAddress | None  # set when the host is an IP literal


class AddressPolicy:
    """Which webhook targets are allowed: public addresses, plus the allow-list.

    ``allow`` entries are networks or single addresses (``"127.0.0.1"``,
    ``"10.0.0.0/8"``, ``"::1"``) or host names (``"hooks.internal"``, or
    ``"*.corp.example"`` for every name under ``corp.example``); a value may
    hold several entries separated by commas or whitespace. An allowed host
    name admits whatever it resolves to. Raises ValueError for an entry that
    is neither.

    ``getaddrinfo`` replaces the event loop's resolver (tests use it to play a
    DNS server that changes its answers).
    """

    def __init__(
        self,
        allow: Iterable[str] = (),
        *,
        getaddrinfo: GetAddrInfo | None = None,
        resolve_timeout_seconds: float = 10.0,
    ) -> None:
        nets: list[IPNetwork] = []
        hosts: set[str] = set()
        suffixes: list[str] = []
        for raw in split_allow(list(allow)):
            entry = raw.strip()
            if not entry:
                raise ValueError("empty allow-list entry")
            try:
                nets.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = _normalise_host(entry)
            wildcard = name.startswith("*.")
            if wildcard:
                name = name[2:]
            if not name or not all(_DNS_LABEL.match(label) for label in name.split(".")):
                raise ValueError(f"allow-list entry {raw!r} is neither a CIDR, an IP address nor a host name")
            if wildcard:
                suffixes.append("." + name)
            else:
                hosts.add(name)
        self.allowed_networks: tuple[IPNetwork, ...] = tuple(nets)
        self.allowed_hosts: frozenset[str] = frozenset(hosts)
        self.allowed_suffixes: tuple[str, ...] = tuple(suffixes)
        self._getaddrinfo = getaddrinfo
        self.resolve_timeout_seconds = resolve_timeout_seconds

    # --- pieces ----------------------------------------------------------------

    def host_allowed(self, host: str) -> bool:
        """True when ``host`` (a DNS name) is on the allow-list."""
        name = _normalise_host(host)
        return name in self.allowed_hosts or any(name.endswith(s) for s in self.allowed_suffixes)

    def address_reason(self, ip: IPAddress) -> str | None:
        """Why connecting to ``ip`` is refused, or None when it is allowed."""
        if any(ip.version == net.version and ip in net for net in self.allowed_networks):
            return None
        if isinstance(ip, ipaddress.IPv6Address):
            v4 = _embedded_v4(ip)
            if v4 is not None and any(v4 in net for net in self.allowed_networks if net.version == 4):
                return None
        return blocked_reason(ip)

    def parse_url(self, url: str) -> Target:
        """Checks the URL's shape (no DNS) and says what it connects to.

        Raises UnsafeURLError: not http/https, userinfo present, no host, a
        non-canonical numeric IPv4 spelling, an invalid host name, a bad port,
        control characters or whitespace, or an IP literal the policy blocks."""
        if not url:
            raise UnsafeURLError("the webhook URL is required")
        if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
            raise UnsafeURLError("the webhook URL contains whitespace or control characters")
        try:
            parsed = URL(url)
        except ValueError as err:
            raise UnsafeURLError(f"the webhook URL is not a valid URL ({err})") from None
        scheme = (parsed.scheme or "").lower()
        if scheme not in ("http", "https"):
            raise UnsafeURLError(f"the webhook URL scheme must be http or https, not {scheme or 'none'!r}")
        if (
            parsed.raw_user is not None
            or parsed.raw_password is not None
            or "@" in (parsed.raw_authority or "")
        ):
            raise UnsafeURLError(
                "the webhook URL must not contain userinfo ('user:password@'); use 'authentication'"
            )
        raw_host = parsed.raw_host
        if not raw_host:
            raise UnsafeURLError("the webhook URL has no host")
        try:
            port = parsed.port
        except ValueError as err:
            raise UnsafeURLError(f"the webhook URL has an invalid port ({err})") from None
        if not port:
            raise UnsafeURLError("the webhook URL has an invalid port (0)")
        host = parsed.host or raw_host
        ip: IPAddress | None = None
        try:
            ip = _parse_ip(host)
        except ValueError:
            ip = None
        if ip is None:
            _check_host_name(raw_host)
        else:
            reason = self.address_reason(ip)
            if reason is not None:
                raise BlockedAddressError(f"the webhook address is not allowed: {reason}")
        return Target(url=parsed, host=raw_host if ip is None else str(ip), port=port, ip=ip)

    async def resolve(self, host: str, port: int, family: int = socket.AF_UNSPEC) -> list[ResolveResult]:
        """Resolves ``host`` and checks every address (allow-listed host names
        skip the check). Returns aiohttp resolve results, in resolver order.

        Raises BlockedAddressError when any address is blocked, OSError
        (``socket.gaierror``) when the name does not resolve, TimeoutError
        after ``resolve_timeout_seconds``."""
        try:
            literal: IPAddress | None = _parse_ip(host)
        except ValueError:
            literal = None
        if literal is not None:
            reason = self.address_reason(literal)
            if reason is not None:
                raise BlockedAddressError(f"the webhook address is not allowed: {reason}")
            fam = socket.AF_INET if literal.version == 4 else socket.AF_INET6
            return [_result(host, str(literal), port, fam, 0)]
        if _NUMERIC_HOST.match(host) and all(_LOOKS_NUMERIC.match(p) for p in host.split(".") if p):
            raise BlockedAddressError(f"the webhook host {host!r} is a non-canonical IPv4 spelling")
        infos = await asyncio.wait_for(self._lookup(host, port, family), self.resolve_timeout_seconds)
        trusted = self.host_allowed(host)
        out: list[ResolveResult] = []
        seen: set[tuple[str, int]] = set()
        for fam, _type, proto, _canon, sockaddr in infos:
            if fam not in (socket.AF_INET, socket.AF_INET6):
                continue
            ip = _parse_ip(str(sockaddr[0]))
            if not trusted:
                reason = self.address_reason(ip)
                if reason is not None:
                    raise BlockedAddressError(
                        f"the webhook host {host!r} resolves to a blocked address: {reason}"
                    )
            text = str(ip)
            if fam == socket.AF_INET6 and len(sockaddr) > 3 and sockaddr[3]:
                text = f"{text}%{sockaddr[3]}"
            if (text, fam) in seen:
                continue
            seen.add((text, fam))
            out.append(_result(host, text, port, fam, proto))
        if not out:
            raise OSError(f"the webhook host {host!r} has no IPv4/IPv6 address")
        return out

    async def check_url(self, url: str) -> Target:
        """The full create-time check: :meth:`parse_url`, then resolve the host
        and check every address. Raises UnsafeURLError (BlockedAddressError
        for a blocked address) with a reason fit for the client."""
        target = self.parse_url(url)
        if target.ip is None:
            try:
                await self.resolve(target.host, target.port)
            except BlockedAddressError:
                raise
            except (OSError, TimeoutError) as err:
                raise UnsafeURLError(
                    f"the webhook host {target.host!r} cannot be resolved ({_short(err)})"
                ) from None
        return target

    async def _lookup(self, host: str, port: int, family: int) -> list[tuple[Any, ...]]:
        if self._getaddrinfo is not None:
            return await self._getaddrinfo(host, port, family)
        loop = asyncio.get_running_loop()
        return await loop.getaddrinfo(
            host, port, family=family, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )


def _result(hostname: str, host: str, port: int, family: int, proto: int) -> ResolveResult:
    return ResolveResult(
        hostname=hostname,
        host=host,
        port=port,
        family=family,
        proto=proto,
        flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
    )


def _short(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if len(text) <= 120 else text[:117] + "..."


class GuardedResolver(AbstractResolver):
    """An aiohttp resolver that only ever hands out addresses the policy
    allows, so the address actually connected is the address checked.

    Use it with ``TCPConnector(resolver=..., use_dns_cache=False)`` so every
    new connection resolves (and checks) again. aiohttp does not call a
    resolver for IP-literal hosts: check those with
    :meth:`AddressPolicy.parse_url` before each request.
    """

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """Checked addresses of ``host``. Raises BlockedAddressError or OSError."""
        return await self._policy.resolve(host, port, family)

    async def close(self) -> None:
        """Nothing to release."""


def header_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent as an HTTP header value, or None.

    Refuses control characters (CR, LF, NUL, tab, DEL…: header injection) and
    non-ASCII text (its byte form on the wire is not agreed)."""
    for ch in value:
        code = ord(ch)
        if code < 0x20 or code == 0x7F:
            return f"must not contain control characters (found {ch!r})"
        if code > 0x7E:
            return "must be ASCII"
    return None


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def scheme_problem(scheme: str) -> str | None:
    """Why ``scheme`` is not an HTTP auth scheme token (RFC 9110 §11.1), or None."""
    if not scheme:
        return "is required when 'authentication' is set (e.g. 'Bearer')"
    if not _TOKEN.match(scheme):
        return (
            "must be an HTTP auth scheme token such as 'Bearer' or 'Basic' (no spaces or control characters)"
        )
    return None


def split_allow(values: Sequence[str]) -> list[str]:
    """Allow-list values as given on a command line or in an environment
    variable: each may hold several entries separated by commas or whitespace."""
    return [part for value in values for part in value.replace(",", " ").split()]
