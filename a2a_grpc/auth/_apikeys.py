"""API keys (card: ``APIKeySecurityScheme``, header ``X-API-Key`` by default).

Each key has its own subject, scopes, optional tenant and expiry, and can be
revoked. The configuration stores only a SHA-256 digest of each secret (the
secrets are 256-bit random strings, so a fast hash is enough: there is nothing
to guess), and a presented key is compared with :func:`hmac.compare_digest`.

A secret reads ``a2a_<id>_<random>``: ``id`` (12 hex digits) finds the key's
entry without comparing against every digest; a secret of another shape, or
whose id is unknown, still costs one digest comparison.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from a2a_grpc.auth._base import AuthConfigError, BadCredential
from a2a_grpc.context import CallContext
from a2a_grpc.principal import API_KEY_ISSUER, Principal
from a2a_grpc.types import pb

__all__ = ["DEFAULT_HEADER", "ApiKey", "ApiKeyAuthenticator", "digest", "new_secret"]

DEFAULT_HEADER = "X-API-Key"
_PREFIX = "a2a_"
_ID_LEN = 12
_DUMMY = hashlib.sha256(b"no such key").digest()


def new_secret() -> tuple[str, str]:
    """A fresh ``(key id, secret)``; the secret is shown once and never stored."""
    key_id = secrets.token_hex(_ID_LEN // 2)
    return key_id, f"{_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def digest(secret: str) -> str:
    """The stored form of a secret: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()


def _key_id(secret: str) -> str:
    if secret.startswith(_PREFIX) and len(secret) > len(_PREFIX) + _ID_LEN:
        return secret[len(_PREFIX) : len(_PREFIX) + _ID_LEN]
    return ""


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One configured key: its id, the principal it stands for, its expiry
    (None: never) and whether it is revoked; ``sha256`` is the digest."""

    id: str
    subject: str
    sha256: bytes
    scopes: frozenset[str] = frozenset()
    tenant: str | None = None
    expires: datetime | None = None
    revoked: bool = False
    rate: str | None = None
    concurrency: int | None = None


def _when(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    raise AuthConfigError(f"{where}.expires must be a TOML date or date-time (2027-01-31T00:00:00Z)")


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AuthConfigError(f"{where} must be a list of strings")
    return value


def parse_key(entry: Mapping[str, Any], where: str) -> ApiKey:
    """An :class:`ApiKey` from one ``[[schemes.NAME.keys]]`` table."""
    unknown = set(entry) - {
        "id",
        "subject",
        "hash",
        "scopes",
        "tenant",
        "expires",
        "revoked",
        "note",
        "created",
        "rate",
        "concurrency",
    }
    if unknown:
        raise AuthConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    key_id, subject, hashed = entry.get("id"), entry.get("subject"), entry.get("hash")
    if not isinstance(key_id, str) or len(key_id) != _ID_LEN:
        raise AuthConfigError(f"{where}.id must be the {_ID_LEN}-character key id")
    if not isinstance(subject, str) or not subject:
        raise AuthConfigError(f"{where}.subject is required")
    if not isinstance(hashed, str) or not hashed.startswith("sha256:") or len(hashed) != 71:
        raise AuthConfigError(f"{where}.hash must be 'sha256:' and 64 hex digits")
    try:
        raw = bytes.fromhex(hashed[7:])
    except ValueError:
        raise AuthConfigError(f"{where}.hash must be 'sha256:' and 64 hex digits") from None
    tenant = entry.get("tenant")
    if tenant is not None and not isinstance(tenant, str):
        raise AuthConfigError(f"{where}.tenant must be a string")
    return ApiKey(
        id=key_id,
        subject=subject,
        sha256=raw,
        scopes=frozenset(_strings(entry.get("scopes", []), f"{where}.scopes")),
        tenant=tenant,
        expires=_when(entry.get("expires"), where),
        revoked=bool(entry.get("revoked", False)),
        **_key_limits(entry, where),
    )


def _key_limits(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The key's own ``rate`` and ``concurrency`` (a2a_grpc.auth._limits)."""
    out: dict[str, Any] = {}
    if "rate" in entry:
        from a2a_grpc.auth._limits import parse_rate

        parse_rate(entry["rate"], f"{where}.rate")
        out["rate"] = entry["rate"]
    if "concurrency" in entry:
        value = entry["concurrency"]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise AuthConfigError(f"{where}.concurrency must be a positive integer")
        out["concurrency"] = value
    return out


class ApiKeyAuthenticator:
    """Serves the scheme ``name``: keys sent in the ``header`` header.

    Raises BadCredential("invalid API key") for an unknown or wrong key, and
    ("API key revoked" / "API key expired") for a right one that is no longer
    valid; the key itself never appears in a message or a log."""

    def __init__(
        self, name: str, keys: list[ApiKey], *, header: str = DEFAULT_HEADER, description: str = ""
    ) -> None:
        self.name = name
        self.header = header
        self.description = description
        self.keys = {k.id: k for k in keys}
        if len(self.keys) != len(keys):
            raise AuthConfigError(f"schemes.{name}: two keys share an id")

    @classmethod
    def from_config(cls, name: str, table: Mapping[str, Any]) -> ApiKeyAuthenticator:
        """From ``[schemes.NAME]`` with ``type = "apiKey"`` (docs/auth.md)."""
        unknown = set(table) - {"type", "header", "description", "keys"}
        if unknown:
            raise AuthConfigError(f"schemes.{name}: unknown setting(s) {', '.join(sorted(unknown))}")
        header = table.get("header", DEFAULT_HEADER)
        if not isinstance(header, str) or not header or not header.isascii() or " " in header:
            raise AuthConfigError(f"schemes.{name}.header must be a header name")
        entries = table.get("keys", [])
        if not isinstance(entries, list):
            raise AuthConfigError(f"schemes.{name}.keys must be an array of tables ([[schemes.{name}.keys]])")
        keys = [parse_key(e, f"schemes.{name}.keys[{i}]") for i, e in enumerate(entries)]
        return cls(name, keys, header=header, description=str(table.get("description", "")))

    def security_scheme(self) -> pb.SecurityScheme:
        """``apiKeySecurityScheme`` in the header (spec §4.5.2)."""
        return pb.SecurityScheme(
            api_key_security_scheme=pb.APIKeySecurityScheme(
                description=self.description, location="header", name=self.header
            )
        )

    def challenge(self, bad: BadCredential | None = None) -> str:
        return f'ApiKey header="{self.header}"'

    def presented(self, call: CallContext) -> bool:
        return call.header(self.header) is not None

    async def authenticate(self, call: CallContext) -> Principal:
        """The key's principal; raises BadCredential (see the class)."""
        presented = (call.header(self.header) or "").strip()
        key = self.keys.get(_key_id(presented))
        wanted = key.sha256 if key is not None else _DUMMY
        matches = hmac.compare_digest(hashlib.sha256(presented.encode()).digest(), wanted)
        if key is None or not matches:
            raise BadCredential("invalid API key")
        if key.revoked:
            raise BadCredential("API key revoked")
        if key.expires is not None and key.expires <= datetime.now(UTC):
            raise BadCredential("API key expired")
        return Principal(
            issuer=API_KEY_ISSUER,
            subject=key.subject,
            scheme=self.name,
            scopes=key.scopes,
            tenant=key.tenant,
            attributes={
                "keyId": key.id,
                **({"rate": key.rate} if key.rate else {}),
                **({"concurrency": key.concurrency} if key.concurrency else {}),
            },
        )

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def summary(self) -> str:
        live = sum(1 for k in self.keys.values() if not k.revoked)
        return f"{self.name} (API key in {self.header}, {live} key{'s' if live != 1 else ''})"
