"""The mTLS security scheme: a verified client certificate is the credential.

The TLS layer (:mod:`a2a_grpc.bindings.tls`, ``--tls-client-ca``) verifies the
certificate chain on both ports; this authenticator turns the verified
certificate's :class:`~a2a_grpc.bindings.tls.PeerIdentity` into the caller's
:class:`~a2a_grpc.principal.Principal`, so it owns its tasks like any
other caller (spec §7, §13). The issuer is the SPIFFE trust domain of a
``spiffe://`` id, else the configured ``issuer`` (by default the scheme's own
URN); the subject is the SPIFFE id, else the first DNS SAN, else the subject
DN. The card declares it as a ``MutualTlsSecurityScheme``.

Configuration (``[schemes.NAME]`` of the auth file, ``type = "mtls"``)::

    [schemes.clientCert]
    type = "mtls"
    description = "A client certificate from our CA"
    scopes = ["tasks"]           # granted to every verified certificate
    issuer = "urn:example:ca"    # for certificates without a SPIFFE id
    tenant = "acme"              # optional: bind every caller to one tenant
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a_grpc.auth._base import AuthConfigError, BadCredential
from a2a_grpc.context import CallContext
from a2a_grpc.principal import Principal
from a2a_grpc.types import pb

__all__ = ["MtlsAuthenticator"]

_SETTINGS = {"type", "description", "scopes", "issuer", "tenant"}


class MtlsAuthenticator:
    """Serves the scheme ``name``: the call's verified client certificate."""

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        scopes: frozenset[str] = frozenset(),
        issuer: str = "",
        tenant: str | None = None,
    ) -> None:
        self.name = name
        self.description = description or "A client certificate the server's CA issued (mTLS)"
        self.scopes = scopes
        self.issuer = issuer or f"urn:a2a-grpc:mtls:{name}"
        self.tenant = tenant

    @classmethod
    def from_config(cls, name: str, table: Mapping[str, Any]) -> MtlsAuthenticator:
        """The authenticator of a ``[schemes.NAME]`` table; AuthConfigError
        for an unknown setting or a value of the wrong type."""
        unknown = set(table) - _SETTINGS
        if unknown:
            raise AuthConfigError(f"schemes.{name}: unknown setting(s) {', '.join(sorted(unknown))}")
        scopes = table.get("scopes", [])
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise AuthConfigError(f"schemes.{name}.scopes must be an array of strings")
        for key in ("description", "issuer", "tenant"):
            if key in table and not isinstance(table[key], str):
                raise AuthConfigError(f"schemes.{name}.{key} must be a string")
        return cls(
            name,
            description=table.get("description", ""),
            scopes=frozenset(scopes),
            issuer=table.get("issuer", ""),
            tenant=table.get("tenant"),
        )

    def security_scheme(self) -> pb.SecurityScheme:
        """A ``MutualTlsSecurityScheme`` (spec §4.5)."""
        return pb.SecurityScheme(
            mtls_security_scheme=pb.MutualTlsSecurityScheme(description=self.description)
        )

    def challenge(self, bad: BadCredential | None = None) -> str:
        """There is no HTTP challenge for TLS; the name tells the caller what to present."""
        return f'Mutual realm="{self.name}"'

    def presented(self, call: CallContext) -> bool:
        """True when the TLS layer verified a client certificate for the call."""
        return call.peer_identity is not None

    async def authenticate(self, call: CallContext) -> Principal:
        """The certificate's principal (the chain was verified by TLS)."""
        identity = call.peer_identity
        if identity is None:  # pragma: no cover - presented() was checked
            raise BadCredential("no client certificate", error="invalid_request")
        issuer = self.issuer
        if identity.spiffe_id:
            issuer = "spiffe://" + identity.spiffe_id.removeprefix("spiffe://").split("/", 1)[0]
        attributes = {"subjectDn": identity.subject, "fingerprint": identity.fingerprint}
        return Principal(issuer, identity.name, self.name, self.scopes, self.tenant, attributes)

    async def start(self) -> None:
        """Nothing to prepare: TLS verifies the chain."""

    async def close(self) -> None:
        """Nothing to release."""

    def summary(self) -> str:
        """``mtls: client certificates`` for the start-up line."""
        return f"mtls: client certificates (issuer {self.issuer} unless SPIFFE)"
