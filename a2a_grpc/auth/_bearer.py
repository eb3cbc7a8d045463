"""Bearer JWTs (card: ``HTTPAuthSecurityScheme`` Bearer/JWT, or
``OpenIdConnectSecurityScheme`` when an OpenID discovery URL is configured).

A token is accepted when its ``alg`` is one of the allowed ones (asymmetric
only: RS*, PS*, ES*, EdDSA; ``none`` and the HMAC algorithms are refused when
the configuration is loaded, so a public key can never be used as an HMAC
secret), its ``kid`` names a key of the issuer's JWKS whose type fits that
algorithm, the signature verifies, and ``iss``, ``aud``, ``exp`` (and ``nbf``,
``iat``) check out within ``leeway`` seconds. PyJWT does the cryptography; a
token already verified is remembered (by its SHA-256) until it expires, as
long as the key that verified it is in the current key set.

The key set (:class:`JwksCache`) is fetched with aiohttp, never blocking the
event loop: at start-up, again in the background once older than
``max_age`` seconds, and at once for a ``kid`` it does not know — at most once
per ``min_refresh`` seconds. A failed fetch keeps the last good set.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import ipaddress
import json
import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from a2a_grpc.auth._base import AuthConfigError, BadCredential
from a2a_grpc.context import CallContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.principal import Principal
from a2a_grpc.types import pb

__all__ = ["ASYMMETRIC_ALGORITHMS", "JwksCache", "JwtAuthenticator"]

log = logging.getLogger("a2a_grpc.auth")

#: The algorithms a configuration may allow, with the JWK key type each needs.
ASYMMETRIC_ALGORITHMS: Mapping[str, str] = {
    **{f"RS{n}": "RSA" for n in (256, 384, 512)},
    **{f"PS{n}": "RSA" for n in (256, 384, 512)},
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
}
_VERIFIED_MAX = 4096
_SETTINGS = {
    "type",
    "description",
    "issuer",
    "audience",
    "jwks_url",
    "discovery_url",
    "algorithms",
    "leeway_seconds",
    "scopes_claim",
    "tenant_claim",
    "jwks_min_refresh_seconds",
    "jwks_max_age_seconds",
}


def _check_url(url: str, where: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    loopback = host == "localhost"
    with contextlib.suppress(ValueError):
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise AuthConfigError(f"{where} must be an https:// URL (http:// only on a loopback address)")
    return url


class JwksCache:
    """The issuer's signing keys, by ``kid``. ``fetches`` counts the JWKS
    downloads (discovery documents not included)."""

    def __init__(
        self,
        *,
        jwks_url: str = "",
        discovery_url: str = "",
        issuer: str = "",
        min_refresh: float = 60.0,
        max_age: float = 300.0,
        timeout: float = 5.0,
    ) -> None:
        self.jwks_url = jwks_url
        self.discovery_url = discovery_url
        self.issuer = issuer
        self.min_refresh = min_refresh
        self.max_age = max_age
        self.timeout = timeout
        self.keys: dict[str, tuple[Any, str]] = {}
        self.fetches = 0
        self._fetched_at = 0.0  # monotonic time of the last good fetch
        self._unknown_at = -float("inf")  # ... of the last refresh for an unknown kid
        self._lock = asyncio.Lock()
        self._session: Any = None
        self._background: asyncio.Task[None] | None = None

    async def _get_json(self, url: str) -> Any:
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        async with self._session.get(url, headers={"Accept": "application/json"}) as resp:
            resp.raise_for_status()
            return await resp.json(content_type=None)

    async def _jwks_url(self) -> str:
        if self.jwks_url:
            return self.jwks_url
        doc = await self._get_json(self.discovery_url)
        uri = doc.get("jwks_uri") if isinstance(doc, dict) else None
        if not isinstance(uri, str):
            raise ValueError("the discovery document has no jwks_uri")
        if self.issuer and doc.get("issuer") != self.issuer:
            raise ValueError("the discovery document names another issuer")
        self.jwks_url = _check_url(uri, "jwks_uri")
        return uri

    async def refresh(self) -> bool:
        """Downloads the key set; True when it succeeded. A failure is logged
        and keeps the previous keys."""
        import jwt

        async with self._lock:
            try:
                data = await self._get_json(await self._jwks_url())
                self.fetches += 1
                keys: dict[str, Any] = {}
                for raw in data.get("keys", []) if isinstance(data, dict) else []:
                    with contextlib.suppress(jwt.PyJWKError, jwt.InvalidKeyError, KeyError, ValueError):
                        if raw.get("use", "sig") == "sig":
                            keys[str(raw.get("kid", ""))] = (jwt.PyJWK(raw), str(raw.get("alg", "")))
            except Exception as exc:  # aiohttp's errors, bad JSON, timeouts: keep the last good set
                log.warning(
                    "JWKS of %s not refreshed (%s); keeping %d key(s)",
                    self.issuer,
                    type(exc).__name__,
                    len(self.keys),
                )
                return False
            self.keys, self._fetched_at = keys, time.monotonic()
            return True

    async def key(self, kid: str | None) -> tuple[Any, str] | None:
        """``(PyJWK, its "alg" or "")`` for ``kid`` (None: the only key, when
        there is one), or None. An unknown ``kid`` refreshes the set first unless the last
        attempt is less than ``min_refresh`` seconds old."""
        now = time.monotonic()
        if now - self._fetched_at > self.max_age and self._background is None:
            self._background = asyncio.ensure_future(self._refresh_in_background())
        found = self._find(kid)
        if found is None and now - self._unknown_at >= self.min_refresh:
            self._unknown_at = now
            await self.refresh()
            found = self._find(kid)
        return found

    async def _refresh_in_background(self) -> None:
        try:
            await self.refresh()
        finally:
            self._background = None

    def _find(self, kid: str | None) -> tuple[Any, str] | None:
        if kid is None:
            return next(iter(self.keys.values())) if len(self.keys) == 1 else None
        return self.keys.get(kid)

    async def close(self) -> None:
        if self._background is not None:
            self._background.cancel()
            with contextlib.suppress(BaseException):
                await self._background
        if self._session is not None:
            await self._session.close()


def _header(token: str) -> dict[str, Any]:
    """The JOSE header of a compact JWS, unverified (PyJWT checks it again
    when it verifies): PyJWT's own reader validates every segment character
    by character (~0.4 ms a token). Raises BadCredential("malformed bearer token")."""
    head, sep, _rest = token.partition(".")
    try:
        if not sep or not head.isascii():
            raise ValueError
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except ValueError:  # bad base64, bad JSON, not UTF-8
        raise BadCredential("malformed bearer token") from None
    if not isinstance(header, dict):
        raise BadCredential("malformed bearer token")
    return header


def _scopes(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    for name in (claim, "scp") if claim != "scp" else (claim,):
        value = claims.get(name)
        if isinstance(value, str):
            return frozenset(value.split())
        if isinstance(value, list):
            return frozenset(str(v) for v in value)
    return frozenset()


class JwtAuthenticator:
    """Serves the scheme ``name``: ``Authorization: Bearer <JWT>`` from one
    issuer for one audience (see the module docstring)."""

    def __init__(
        self,
        name: str,
        *,
        issuer: str,
        audience: str,
        keys: JwksCache,
        algorithms: tuple[str, ...] = ("RS256", "ES256", "EdDSA"),
        leeway: float = 30.0,
        scopes_claim: str = "scope",
        tenant_claim: str = "",
        description: str = "",
    ) -> None:
        self.name = name
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self.algorithms = algorithms
        self.leeway = leeway
        self.scopes_claim = scopes_claim
        self.tenant_claim = tenant_claim
        self.description = description
        # Tokens already verified (by SHA-256), until they expire: a client
        # reusing its token pays for the signature check once. An entry holds
        # the key that verified it, so a key set refresh ends its use.
        self._verified: dict[bytes, tuple[Any, float, Principal]] = {}

    @classmethod
    def from_config(cls, name: str, table: Mapping[str, Any]) -> JwtAuthenticator:
        """From ``[schemes.NAME]`` with ``type = "jwt"`` (docs/auth.md)."""
        where = f"schemes.{name}"
        unknown = set(table) - _SETTINGS
        if unknown:
            raise AuthConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
        issuer, audience = table.get("issuer"), table.get("audience")
        if not isinstance(issuer, str) or not issuer:
            raise AuthConfigError(f"{where}.issuer is required")
        if not isinstance(audience, str) or not audience:
            raise AuthConfigError(f"{where}.audience is required")
        jwks_url, discovery = str(table.get("jwks_url", "")), str(table.get("discovery_url", ""))
        if bool(jwks_url) == bool(discovery):
            raise AuthConfigError(f"{where}: give exactly one of jwks_url and discovery_url")
        algorithms = tuple(table.get("algorithms", ("RS256", "ES256", "EdDSA")))
        refused = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if refused or not algorithms:
            raise AuthConfigError(
                f"{where}.algorithms: {', '.join(map(str, refused)) or 'none given'} not allowed; "
                f"choose from {', '.join(ASYMMETRIC_ALGORITHMS)} (never none or HS*)"
            )
        keys = JwksCache(
            jwks_url=_check_url(jwks_url, f"{where}.jwks_url") if jwks_url else "",
            discovery_url=_check_url(discovery, f"{where}.discovery_url") if discovery else "",
            issuer=issuer,
            min_refresh=float(table.get("jwks_min_refresh_seconds", 60.0)),
            max_age=float(table.get("jwks_max_age_seconds", 300.0)),
        )
        return cls(
            name,
            issuer=issuer,
            audience=audience,
            keys=keys,
            algorithms=algorithms,
            leeway=float(table.get("leeway_seconds", 30.0)),
            scopes_claim=str(table.get("scopes_claim", "scope")),
            tenant_claim=str(table.get("tenant_claim", "")),
            description=str(table.get("description", "")),
        )

    def security_scheme(self) -> pb.SecurityScheme:
        """OpenIdConnect with the discovery URL when one is configured, else
        HTTP Bearer with ``bearerFormat: JWT`` (spec §4.5)."""
        if self.keys.discovery_url:
            return pb.SecurityScheme(
                open_id_connect_security_scheme=pb.OpenIdConnectSecurityScheme(
                    description=self.description, open_id_connect_url=self.keys.discovery_url
                )
            )
        return pb.SecurityScheme(
            http_auth_security_scheme=pb.HTTPAuthSecurityScheme(
                description=self.description, scheme="Bearer", bearer_format="JWT"
            )
        )

    def challenge(self, bad: BadCredential | None = None) -> str:
        """RFC 6750 §3: ``Bearer realm=...`` (and ``error=...`` for a bad token)."""
        text = f'Bearer realm="{self.name}"'
        if bad is not None:
            text += f', error="{bad.error}", error_description="{bad.reason}"'
        return text

    def presented(self, call: CallContext) -> bool:
        value = call.header("authorization") or ""
        return value[:7].lower() == "bearer "

    async def authenticate(self, call: CallContext) -> Principal:
        """The token's principal; raises BadCredential with the failed check
        (expired, wrong issuer or audience, algorithm, unknown key, bad
        signature), UNAVAILABLE when no key set was ever fetched."""
        import jwt

        token = (call.header("authorization") or "")[7:].strip()
        header = _header(token)
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise BadCredential("signing algorithm not allowed")
        kid = header.get("kid")
        found = await self.keys.key(kid if isinstance(kid, str) else None)
        if found is None:
            if not self.keys.keys:
                raise A2AError(ErrorCode.UNAVAILABLE, f"the signing keys of {self.name} are not available")
            raise BadCredential("unknown signing key")
        key, key_alg = found
        if key.key_type != ASYMMETRIC_ALGORITHMS[alg] or key_alg not in (alg, ""):
            raise BadCredential("signing key does not fit the algorithm")
        digest = hashlib.sha256(token.encode()).digest()
        cached = self._verified.get(digest)
        if cached is not None and cached[0] is key and time.time() <= cached[1] + self.leeway:
            return cached[2]
        claims = self._decode(jwt, token, key, alg)
        tenant = claims.get(self.tenant_claim) if self.tenant_claim else None
        principal = Principal(
            issuer=str(claims["iss"]),
            subject=str(claims["sub"]),
            scheme=self.name,
            scopes=_scopes(claims, self.scopes_claim),
            tenant=tenant if isinstance(tenant, str) else None,
            attributes={k: v for k, v in claims.items() if k not in ("iss", "sub")},
        )
        if len(self._verified) >= _VERIFIED_MAX:
            del self._verified[next(iter(self._verified))]
        self._verified[digest] = (key, float(claims["exp"]), principal)
        return principal

    def _decode(self, jwt: Any, token: str, key: Any, alg: str) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "sub", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise BadCredential("token expired") from None
        except jwt.ImmatureSignatureError:
            raise BadCredential("token not yet valid") from None
        except jwt.InvalidAudienceError:
            raise BadCredential("token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise BadCredential("token from another issuer") from None
        except jwt.MissingRequiredClaimError as exc:
            raise BadCredential(f"token lacks the {exc.claim} claim") from None
        except jwt.InvalidTokenError:
            raise BadCredential("invalid token signature") from None
        return claims

    async def start(self) -> None:
        await self.keys.refresh()

    async def close(self) -> None:
        await self.keys.close()

    def summary(self) -> str:
        kind = "OpenID Connect" if self.keys.discovery_url else "Bearer JWT"
        return f"{self.name} ({kind} from {self.issuer}, audience {self.audience})"
