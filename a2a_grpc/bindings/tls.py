"""TLS and mutual TLS for both ports, and the identity a client certificate carries.

Server side, :class:`ServerTLS` turns PEM files into ``grpc`` server
credentials and an :class:`ssl.SSLContext` for the HTTP gateway, so gRPC,
JSON-RPC, HTTP+JSON and the Agent Card are all served over TLS. Client side,
:class:`ClientTLS` does the same for channels and aiohttp sessions (a CA to
trust, and optionally a client certificate for mTLS).

A verified client certificate becomes a :class:`PeerIdentity` — its SPIFFE id
(URI SAN ``spiffe://…``), DNS SANs and subject — available to every
interceptor and operation as ``CallContext.peer_identity`` (spec §7.4
MutualTlsSecurityScheme, §13.1). See docs/tls.md.

grpc.aio either requires and verifies client certificates on a port or does
not ask for them at all (``ssl_server_credentials(require_client_auth=False)``
sends no CertificateRequest), so "mTLS or bearer" on gRPC is served by a
second gRPC port that requires certificates (``ServerTLS.mtls_grpc_port``);
the HTTP port asks for an optional certificate and verifies any it gets.

``cryptography`` (extra ``tls``) is imported only to read certificates.
"""

from __future__ import annotations

import functools
import hashlib
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from a2a_grpc.principal import PeerIdentity

__all__ = [
    "ClientTLS",
    "PeerIdentity",
    "ServerTLS",
    "describe",
    "identity_from_der",
    "identity_from_pem",
    "peer_identity",
]

#: The auth-context key under which grpc-core puts the peer's PEM certificate.
_GRPC_PEM_KEY = "x509_pem_cert"
_SPIFFE = "spiffe://"


@functools.lru_cache(maxsize=1024)
def identity_from_der(der: bytes) -> PeerIdentity:
    """The :class:`PeerIdentity` of a DER certificate (cached: a connection
    presents the same certificate on every call). Raises ValueError when the
    bytes are not a certificate."""
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    uris: tuple[str, ...] = ()
    dns: tuple[str, ...] = ()
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        pass
    else:
        uris = tuple(san.get_values_for_type(x509.UniformResourceIdentifier))
        dns = tuple(san.get_values_for_type(x509.DNSName))
    spiffe = next((u for u in uris if u.lower().startswith(_SPIFFE)), "")
    return PeerIdentity(
        subject=cert.subject.rfc4514_string(),
        spiffe_id=spiffe,
        uris=uris,
        dns_names=dns,
        fingerprint=hashlib.sha256(der).hexdigest(),
    )


@functools.lru_cache(maxsize=1024)
def identity_from_pem(pem: bytes | str) -> PeerIdentity:
    """:func:`identity_from_der` of the first certificate of a PEM text
    (cached too: grpc-core hands over the PEM on every call)."""
    if isinstance(pem, str):
        pem = pem.encode("ascii")
    return identity_from_der(ssl.PEM_cert_to_DER_cert(pem.decode("ascii")))


def peer_identity(context: Any) -> PeerIdentity | None:
    """The verified client certificate's identity of one call, or None.

    ``context`` is a ``grpc.aio.ServicerContext`` (the certificate comes from
    its ``auth_context()``) or the gateway's context (``peer_certificate()``:
    the DER certificate of the TLS connection). Both servers verify the
    certificate against the client CA before the call gets here.
    """
    getter = getattr(context, "peer_certificate", None)
    if getter is not None:
        der = getter()
        return identity_from_der(der) if der else None
    auth = getattr(context, "auth_context", None)
    if auth is None:
        return None
    pems = auth().get(_GRPC_PEM_KEY)
    if not pems:
        return None
    return identity_from_pem(pems[0])


def _read(path: Path | str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class ServerTLS:
    """TLS for both ports of an A2AServer.

    ``cert`` / ``key``: PEM certificate chain and private key of the server.
    ``client_ca``: PEM bundle of the CAs whose client certificates are
    accepted. ``require_client_cert``: both ports refuse a connection without
    a certificate from ``client_ca`` (needs ``client_ca``). Without it, the
    HTTP port asks for an optional certificate (and verifies any it gets);
    the gRPC port does not ask, and ``mtls_grpc_port`` (needs ``client_ca``)
    opens a second gRPC port that requires one, listed in the Agent Card as
    a second GRPC interface.
    """

    cert: Path | str
    key: Path | str
    client_ca: Path | str | None = None
    require_client_cert: bool = False
    mtls_grpc_port: int | None = None

    def check(self) -> None:
        """Raises ValueError for a combination that cannot work or a file
        that cannot be read or parsed as PEM."""
        if self.require_client_cert and self.client_ca is None:
            raise ValueError(
                "--require-client-cert needs --tls-client-ca (the CAs client certificates come from)"
            )
        if self.mtls_grpc_port is not None and self.client_ca is None:
            raise ValueError("--grpc-mtls-port needs --tls-client-ca")
        if self.mtls_grpc_port is not None and self.require_client_cert:
            raise ValueError(
                "--grpc-mtls-port is for optional client certificates; drop --require-client-cert"
            )
        _read(self.cert, "TLS certificate")
        _read(self.key, "TLS key")
        self._client_ca()
        self.ssl_context()

    def _client_ca(self) -> bytes | None:
        return None if self.client_ca is None else _read(self.client_ca, "client CA bundle")

    def grpc_credentials(self, *, require_client_cert: bool | None = None) -> grpc.ServerCredentials:
        """Server credentials of a gRPC port; ``require_client_cert``
        overrides the configured choice (the second, mTLS-only port)."""
        required = self.require_client_cert if require_client_cert is None else require_client_cert
        pair = (_read(self.key, "TLS key"), _read(self.cert, "TLS certificate"))
        return grpc.ssl_server_credentials(
            [pair], root_certificates=self._client_ca() if required else None, require_client_auth=required
        )

    def ssl_context(self) -> ssl.SSLContext:
        """The HTTP port's context: TLS 1.2+, client certificates required,
        optional (verified when given) or not asked for, as configured."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(str(self.cert), str(self.key))
            ca = self._client_ca()
            if ca is not None:
                ctx.load_verify_locations(cadata=ca.decode("ascii", "replace"))
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"TLS certificate, key or client CA unusable: {exc}") from None
        if self.client_ca is None:
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx.verify_mode = ssl.CERT_REQUIRED if self.require_client_cert else ssl.CERT_OPTIONAL
        return ctx


@dataclass(frozen=True, slots=True)
class ClientTLS:
    """TLS settings of a client: ``ca`` (PEM bundle to trust instead of the
    system roots), and ``cert`` / ``key`` (PEM client certificate and key,
    for mTLS). ``ClientTLS()`` is plain TLS with the system roots."""

    ca: Path | str | None = None
    cert: Path | str | None = None
    key: Path | str | None = None

    def check(self) -> None:
        """Raises ValueError when only one of cert/key is given or a file is unusable."""
        if (self.cert is None) != (self.key is None):
            raise ValueError("a client certificate needs both --cert and --key")
        for path, what in (
            (self.ca, "CA bundle"),
            (self.cert, "client certificate"),
            (self.key, "client key"),
        ):
            if path is not None:
                _read(path, what)
        self.ssl_context()

    def grpc_credentials(self) -> grpc.ChannelCredentials:
        """Channel credentials for ``grpc.aio.secure_channel``."""
        return grpc.ssl_channel_credentials(
            root_certificates=None if self.ca is None else _read(self.ca, "CA bundle"),
            private_key=None if self.key is None else _read(self.key, "client key"),
            certificate_chain=None if self.cert is None else _read(self.cert, "client certificate"),
        )

    def ssl_context(self) -> ssl.SSLContext:
        """The context for aiohttp (``ssl=``): server verified against ``ca``
        or the system roots, host name checked, client certificate attached."""
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        try:
            if self.ca is not None:
                ctx.load_verify_locations(cafile=str(self.ca))
            if self.cert is not None:
                ctx.load_cert_chain(str(self.cert), None if self.key is None else str(self.key))
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"TLS CA, client certificate or key unusable: {exc}") from None
        return ctx


def describe(tls: ServerTLS | None, ports: Sequence[int]) -> str:
    """One start-up line saying how the ports are protected."""
    if tls is None:
        return "TLS off: both ports are plaintext"
    if tls.require_client_cert:
        mode = "client certificates required"
    elif tls.client_ca is not None:
        mode = "client certificates optional on HTTP"
        if tls.mtls_grpc_port is not None:
            mode += f", required on gRPC port {ports[-1]}"
    else:
        mode = "no client certificates"
    return f"TLS on ({mode})"
