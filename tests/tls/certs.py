"""A throw-away certificate authority for the TLS tests, made with ``cryptography``.

:func:`make_pki` writes, under a directory, a CA, a server certificate for
``localhost`` / ``127.0.0.1``, a client certificate naming a SPIFFE id, and a
client certificate issued by a second CA the server does not trust.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SPIFFE_ID = "spiffe://example.org/ns/test/sa/alice"


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    rogue_ca: Path
    rogue_cert: Path
    rogue_key: Path
    dns_cert: Path
    dns_key: Path


def _name(cn: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "a2a-grpc tests"),
        ]
    )


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )


def _ca(cn: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
    cn: str,
    sans: list[x509.GeneralName],
    *,
    server: bool,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    ca_cert, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def _save(
    directory: Path, stem: str, pair: tuple[x509.Certificate, ec.EllipticCurvePrivateKey]
) -> tuple[Path, Path]:
    cert_path, key_path = directory / f"{stem}.pem", directory / f"{stem}.key"
    cert_path.write_bytes(pair[0].public_bytes(serialization.Encoding.PEM))
    _write_key(pair[1], key_path)
    return cert_path, key_path


def make_pki(directory: Path) -> Pki:
    """Writes the test PKI under ``directory`` and returns its paths."""
    ca = _ca("a2a-grpc test CA")
    rogue = _ca("rogue CA")
    server = _leaf(
        ca,
        "localhost",
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
        server=True,
    )
    client = _leaf(
        ca,
        "alice",
        [x509.UniformResourceIdentifier(SPIFFE_ID), x509.DNSName("alice.example.org")],
        server=False,
    )
    dns_only = _leaf(ca, "bob", [x509.DNSName("bob.example.org")], server=False)
    rogue_client = _leaf(
        rogue, "mallory", [x509.UniformResourceIdentifier("spiffe://evil/mallory")], server=False
    )
    ca_path, _ = _save(directory, "ca", ca)
    rogue_ca_path, _ = _save(directory, "rogue-ca", rogue)
    server_cert, server_key = _save(directory, "server", server)
    client_cert, client_key = _save(directory, "client", client)
    dns_cert, dns_key = _save(directory, "bob", dns_only)
    rogue_cert, rogue_key = _save(directory, "rogue", rogue_client)
    return Pki(
        ca_path,
        server_cert,
        server_key,
        client_cert,
        client_key,
        rogue_ca_path,
        rogue_cert,
        rogue_key,
        dns_cert,
        dns_key,
    )
