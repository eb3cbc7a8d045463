"""Who is calling: the :class:`Principal` an authenticator produces, and the
:class:`PeerIdentity` a verified client certificate names.

Every authenticator — API keys, bearer JWTs, and client certificates (mTLS) —
turns a credential into the same record, so what comes after authentication
(ownership, tenant binding, scopes, limits, audit) never asks how the caller
proved who it is (spec §7, §13).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

__all__ = ["API_KEY_ISSUER", "PeerIdentity", "Principal"]

#: The issuer of every principal authenticated by an API key of this server.
API_KEY_ISSUER = "urn:a2a-grpc:api-key"


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller.

    ``issuer`` is who vouches for the identity: a JWT's ``iss``,
    :data:`API_KEY_ISSUER` for API keys, or — for an mTLS authenticator — the
    trust domain of a SPIFFE id (``spiffe://example.org``) or the issuing CA's
    subject. ``subject`` is the identity within that issuer (a JWT's ``sub``,
    an API key's subject, a certificate's SPIFFE id, SAN or subject DN).
    ``scheme`` is the name of the security scheme in the Agent Card's
    ``securitySchemes`` that authenticated it; ``scopes`` are what it was
    granted; ``tenant`` is the tenant the credential is bound to (None: the
    caller names it). ``attributes`` holds what else the authenticator knows
    (JWT claims without the token, certificate fields, an API key's id) — never
    a secret.
    """

    issuer: str
    subject: str
    scheme: str
    scopes: frozenset[str] = frozenset()
    tenant: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def owner(self) -> str:
        """The task owner this caller is (``CallContext.user``): the issuer,
        percent-encoded so it holds no ``#``, then ``#`` and the subject; two
        issuers' equal subjects never collide."""
        return f"{quote(self.issuer, safe=':/.@-_~')}#{self.subject}"

    def has_scopes(self, required: frozenset[str] | set[str]) -> bool:
        """True when every scope of ``required`` was granted."""
        return required <= self.scopes


@dataclass(frozen=True, slots=True)
class PeerIdentity:
    """Who a verified client certificate names.

    ``subject`` is the RFC 4514 distinguished name (``CN=alice,O=Example``),
    ``spiffe_id`` the first URI SAN starting ``spiffe://`` ("" when none),
    ``uris`` / ``dns_names`` all URI and DNS SANs, ``fingerprint`` the
    SHA-256 of the DER certificate (hex). :attr:`name` is the one string to
    use as the caller's identity.
    """

    subject: str
    spiffe_id: str = ""
    uris: tuple[str, ...] = ()
    dns_names: tuple[str, ...] = ()
    fingerprint: str = ""

    @property
    def name(self) -> str:
        """The identity: the SPIFFE id, else the first DNS SAN, else the subject."""
        return self.spiffe_id or (self.dns_names[0] if self.dns_names else "") or self.subject
