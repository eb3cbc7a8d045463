"""Signed Agent Cards: detached JWS over the card's RFC 8785 canonical form (spec §8.4).

Signing (server): :class:`CardSigner` holds an EC (P-256/384/521), RSA or
Ed25519 private key and puts one ``AgentCardSignature`` in the card's
``signatures``: ``protected`` = base64url of ``{"alg", "kid", "typ": "JOSE"
[, "jku"]}`` (keys sorted), ``signature`` = base64url of the signature over
``protected + "." + base64url(canonical card)``. The payload is not sent; the
verifier rebuilds it (spec §8.4.2).

Canonical form (spec §8.4.1, :func:`canonical_card`): the card's ProtoJSON
without ``signatures``, fields with presence (``optional``, messages) when
set, REQUIRED fields always (empty ones too), every other field only when not
its default; then JCS (RFC 8785, the ``rfc8785`` package).

Verifying (client, :func:`verify_card`): the keys are :class:`TrustedKeys`
(PEM public keys, certificates, JWK sets: ``a2a-grpc card --trust``) plus the
JWK sets of ``jku`` URLs that are ``https`` on the card's own host. A
signature whose ``kid`` names a known key must verify; when there are keys, at
least one signature must verify with one of them; otherwise the card is
refused. ``require=True`` also refuses a card without a verified signature
(unsigned, or no key to check it: spec §8.4.3). The algorithm must be the key's own (no ``none``, no
HS*, no RSA/EC confusion).

The JWS itself is PyJWT's (``jwt.api_jws``): a compact JWS of the canonical
card whose payload segment is dropped to sign, and put back to verify. (Not
PyJWT's ``is_payload_detached``: that is RFC 7797's unencoded payload, ``b64:
false``, which signs other bytes.) Keys come from ``cryptography`` (PEM files)
or from JWKs (``jwt.PyJWK``).

Needs ``cryptography``, ``rfc8785`` and ``PyJWT`` (extra ``tls``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from google.protobuf.descriptor import FieldDescriptor

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import is_required, pb

__all__ = ["CardSigner", "TrustedKeys", "canonical_card", "jku_urls", "verify_card"]

_EC_ALGS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_RSA_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
#: ``Ed25519`` is the fully-specified name of EdDSA over Ed25519 (RFC 9864).
_EDDSA_ALGS = ("EdDSA", "Ed25519")
#: The JWK members of a public key (what a JWK set serves, and its RFC 7638 thumbprint).
_PUBLIC_MEMBERS = ("crv", "e", "kty", "n", "x", "y")
#: JWK key types and curves this module verifies with.
_JWK_KINDS = {"EC": ("P-256", "P-384", "P-521"), "RSA": (None,), "OKP": ("Ed25519",)}


@functools.cache
def _jws() -> Any:
    """PyJWT's JWS codec, with the algorithms it has plus ``Ed25519`` (RFC 9864)."""
    from jwt import algorithms, api_jws

    jws = api_jws.PyJWS()
    jws.register_algorithm("Ed25519", algorithms.OKPAlgorithm())
    return jws


def _b64(data: bytes) -> str:
    from jwt.utils import base64url_encode

    return base64url_encode(data).decode("ascii")


# ------------------------------------------------------------- canonical form
def _required_default(f: FieldDescriptor) -> Any:
    """The JSON a REQUIRED field has when it holds its default."""
    if f.is_repeated:
        return {} if f.message_type is not None and f.message_type.GetOptions().map_entry else []
    if f.type == f.TYPE_MESSAGE:
        return _fill_required({}, f.message_type)
    if f.type == f.TYPE_ENUM and f.enum_type is not None:
        return f.enum_type.values_by_number[0].name
    if f.type == f.TYPE_BOOL:
        return False
    if f.type in (f.TYPE_STRING, f.TYPE_BYTES):
        return ""
    if f.type in (f.TYPE_INT64, f.TYPE_UINT64, f.TYPE_SINT64, f.TYPE_FIXED64, f.TYPE_SFIXED64):
        return "0"
    return 0


def _fill_required(raw: dict[str, Any], desc: Any) -> dict[str, Any]:
    """``raw`` (ProtoJSON of a message of descriptor ``desc``) with every REQUIRED field
    present, recursively through the nested messages it holds."""
    for f in desc.fields:
        name = f.json_name
        if name not in raw:
            if is_required(f):
                raw[name] = _required_default(f)
            continue
        msg = f.message_type
        if msg is None or msg.full_name.startswith("google.protobuf."):
            continue
        value = raw[name]
        if msg.GetOptions().map_entry:
            inner = msg.fields_by_name["value"].message_type
            if inner is not None and not inner.full_name.startswith("google.protobuf."):
                for item in value.values():
                    _fill_required(item, inner)
        elif f.is_repeated:
            for item in value:
                _fill_required(item, msg)
        else:
            _fill_required(value, msg)
    return raw


def canonical_card(card: pb.AgentCard) -> bytes:
    """The bytes a card signature covers (spec §8.4.1): the card without
    ``signatures``, presence rules applied, RFC 8785 JCS."""
    import rfc8785

    unsigned = pb.AgentCard()
    unsigned.CopyFrom(card)
    unsigned.ClearField("signatures")
    raw = _fill_required(protojson.to_dict(unsigned), pb.AgentCard.DESCRIPTOR)
    try:
        return rfc8785.dumps(raw)
    except rfc8785.IntegerDomainError:
        return rfc8785.dumps(_doubles(raw))


def _doubles(value: Any) -> Any:
    """``value`` with its integers as floats. JCS writes every number as a
    double (RFC 8785 §3.2.2.3), and the ``rfc8785`` package refuses an ``int``
    beyond ±(2**53 - 1): a whole number of a Struct (which ProtoJSON writes
    as an integer up to ±2**53) is written as the double it is."""
    if isinstance(value, dict):
        return {k: _doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_doubles(v) for v in value]
    return float(value) if type(value) is int else value


# --------------------------------------------------------------------- keys
def _alg_of(key: Any) -> str:
    """The JWS algorithm a key signs with: ES256/384/512, RS256 or EdDSA."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        if key.curve.name not in _EC_ALGS:
            raise ValueError(f"EC curve {key.curve.name} is not supported (P-256, P-384, P-521)")
        return _EC_ALGS[key.curve.name]
    if isinstance(key, (rsa.RSAPrivateKey, rsa.RSAPublicKey)):
        if key.key_size < 2048:
            raise ValueError(f"an RSA key of {key.key_size} bits is too small (2048 at least)")
        return "RS256"
    if isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey)):
        return "EdDSA"
    raise ValueError(f"{type(key).__name__} cannot sign Agent Cards: use an EC P-256, RSA or Ed25519 key")


def _accepts(public_key: Any, alg: str) -> bool:
    """Whether ``alg`` is an algorithm of this key's type (no confusion)."""
    try:
        own = _alg_of(public_key)
    except ValueError:
        return False
    if own == "RS256":
        return alg in _RSA_ALGS
    if own == "EdDSA":
        return alg in _EDDSA_ALGS
    return alg == own


def _public_jwk(key: Any) -> dict[str, str]:
    """The public JWK (RFC 7517) of a private or public key, without ``kid``
    (PyJWT's ``to_jwk``); ValueError for a key that has none."""
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from jwt import InvalidKeyError, algorithms

    pub = key.public_key() if hasattr(key, "public_key") else key
    kind: Any = (
        algorithms.ECAlgorithm
        if isinstance(pub, ec.EllipticCurvePublicKey)
        else algorithms.RSAAlgorithm
        if isinstance(pub, rsa.RSAPublicKey)
        else algorithms.OKPAlgorithm
    )
    try:
        jwk = kind.to_jwk(pub, as_dict=True)
    except InvalidKeyError as exc:
        raise ValueError(f"{type(pub).__name__} has no JWK: {exc}") from None
    return {k: str(jwk[k]) for k in _PUBLIC_MEMBERS if k in jwk}


def _thumbprint(key: Any) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256, base64url) of a key: the default ``kid``."""
    members = json.dumps(_public_jwk(key), separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(members.encode()).digest())


def _jwk_key(jwk: Mapping[str, Any]) -> Any:
    """The public key of a JWK (``jwt.PyJWK``; its ``alg`` is not used: the
    key's type decides, see :func:`_accepts`); ValueError for a kind this
    module does not verify with."""
    import jwt

    kty = jwk.get("kty")
    if kty not in _JWK_KINDS:
        raise ValueError(f"unsupported JWK type {kty!r}")
    if kty != "RSA" and jwk.get("crv") not in _JWK_KINDS[kty]:
        raise ValueError(f"unusable JWK: unsupported curve {jwk.get('crv')!r} for {kty}")
    try:
        key = jwt.PyJWK({k: v for k, v in jwk.items() if k != "alg"}).key
    except (jwt.PyJWTError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"unusable JWK: {exc}") from None
    return key.public_key() if hasattr(key, "public_key") else key


# ------------------------------------------------------------------ signing
class CardSigner:
    """Signs Agent Cards with one private key (spec §8.4.2).

    ``key`` is a ``cryptography`` private key (EC P-256/384/521, RSA ≥ 2048
    bits, Ed25519); ``kid`` defaults to its RFC 7638 thumbprint; ``jku``, when
    given, is put in the protected header (the URL of a JWK set holding the
    public key). Raises ValueError for an unsupported key.
    """

    def __init__(self, key: Any, *, kid: str | None = None, jku: str | None = None) -> None:
        self.key = key
        self.alg = _alg_of(key)
        self.kid = kid or _thumbprint(key)
        self.jku = jku

    @classmethod
    def from_pem(cls, path: Path | str, *, kid: str | None = None, jku: str | None = None) -> CardSigner:
        """Loads an unencrypted PEM private key (PKCS#8, SEC1 or PKCS#1);
        ValueError when it cannot be read or is not a supported key."""
        from cryptography.hazmat.primitives import serialization

        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ValueError(f"cannot read the card signing key {path}: {exc.strerror or exc}") from None
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path} is not an unencrypted PEM private key: {exc}") from None
        return cls(key, kid=kid, jku=jku)

    def jwks(self) -> dict[str, Any]:
        """The public JWK set of this signer (what ``jku`` should serve)."""
        return {"keys": [{**_public_jwk(self.key), "kid": self.kid, "alg": self.alg, "use": "sig"}]}

    def sign(self, card: pb.AgentCard) -> pb.AgentCard:
        """A copy of ``card`` whose ``signatures`` hold this signer's one
        signature (earlier signatures are dropped: they covered other content)."""
        header = {"kid": self.kid, "typ": "JOSE"} | ({"jku": self.jku} if self.jku else {})
        compact = _jws().encode(canonical_card(card), self.key, algorithm=self.alg, headers=header)
        protected, _payload, signature = compact.split(".")
        out = pb.AgentCard()
        out.CopyFrom(card)
        del out.signatures[:]
        out.signatures.append(pb.AgentCardSignature(protected=protected, signature=signature))
        return out


# ---------------------------------------------------------------- verifying
@dataclass(slots=True)
class TrustedKeys:
    """Public keys a client trusts for card signatures: ``by_kid`` match a
    signature's ``kid``; ``anonymous`` ones (PEM keys and certificates, which
    carry no kid — they are also named by their RFC 7638 thumbprint, the
    default ``kid`` of :class:`CardSigner`) are tried on signatures whose
    ``kid`` names no trusted key."""

    by_kid: dict[str, Any] = field(default_factory=dict)
    anonymous: list[Any] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.by_kid or self.anonymous)

    def add_jwks(self, jwks: Any, *, source: str = "JWK set") -> None:
        """Adds the keys of a JWK set (``{"keys": [...]}``) or of one JWK;
        ValueError when it is neither. A JWK without ``kid`` is anonymous."""
        keys = jwks.get("keys") if isinstance(jwks, Mapping) and "keys" in jwks else [jwks]
        if not isinstance(keys, list) or not all(isinstance(k, Mapping) for k in keys):
            raise ValueError(f"{source}: not a JWK or JWK set")
        for jwk in keys:
            key = _jwk_key(jwk)
            if jwk.get("kid"):
                self.by_kid[str(jwk["kid"])] = key
            else:
                self.anonymous.append(key)

    def add_file(self, path: Path | str) -> None:
        """Adds a PEM public key, certificate or private key (its public
        half), or a JSON JWK / JWK set; ValueError when the file is none."""
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization

        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ValueError(f"cannot read trusted key {path}: {exc.strerror or exc}") from None
        if data.lstrip().startswith(b"{"):
            try:
                self.add_jwks(json.loads(data), source=str(path))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not JSON: {exc}") from None
            return
        try:
            if b"CERTIFICATE-----" in data:
                key: Any = x509.load_pem_x509_certificate(data).public_key()
            elif b"PRIVATE KEY-----" in data:
                key = serialization.load_pem_private_key(data, password=None).public_key()
            else:
                key = serialization.load_pem_public_key(data)
            self.by_kid.setdefault(_thumbprint(key), key)
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{path}: not a PEM public key, certificate or JWK set: {exc}") from None
        self.anonymous.append(key)

    @classmethod
    def from_files(cls, paths: Iterable[Path | str]) -> TrustedKeys:
        """:meth:`add_file` of each path."""
        keys = cls()
        for p in paths:
            keys.add_file(p)
        return keys


def _header(sig: pb.AgentCardSignature) -> dict[str, Any] | None:
    """The protected header of a signature (PyJWT reads it); None when malformed."""
    import jwt

    try:
        header = _jws().get_unverified_header(f"{sig.protected}..")
    except jwt.PyJWTError:
        return None
    return header if isinstance(header, dict) else None


def jku_urls(card: pb.AgentCard, card_url: str) -> list[str]:
    """The ``jku`` URLs of the card's signatures a client may fetch keys
    from: ``https`` and on the host the card itself came from (a key the card
    names elsewhere proves nothing)."""
    host = (urlsplit(card_url).hostname or "").lower()
    out: list[str] = []
    for sig in card.signatures:
        jku = str((_header(sig) or {}).get("jku") or "")
        parts = urlsplit(jku)
        if parts.scheme == "https" and (parts.hostname or "").lower() == host and jku not in out:
            out.append(jku)
    return out


def _verifies(compact: str, key: Any, alg: str) -> bool:
    """Whether a compact JWS verifies with ``key`` under ``alg`` (PyJWT's
    ``decode_complete``); ValueError when it is malformed."""
    import jwt

    try:
        _jws().decode_complete(compact, key, algorithms=[alg])
    except jwt.InvalidSignatureError:
        return False
    except jwt.PyJWTError as exc:
        raise ValueError(str(exc)) from None
    return True


def _check_one(sig: pb.AgentCardSignature, payload: str, trusted: TrustedKeys) -> str:
    """``ok``; ``bad`` (malformed, or the key its ``kid`` names says it is
    wrong); ``unverified`` (kid-less trusted keys tried, none verifies) or
    ``unknown`` (no trusted key to try)."""
    header = _header(sig)
    if header is None or not isinstance(header.get("alg"), str):
        return "bad"
    alg, kid = header["alg"], header.get("kid")
    named = trusted.by_kid.get(kid) if isinstance(kid, str) else None
    keys = [named] if named is not None else trusted.anonymous
    usable = [k for k in keys if _accepts(k, alg)]
    if not usable:
        return "bad" if named is not None else "unknown"
    compact = f"{sig.protected}.{payload}.{sig.signature}"
    try:
        if any(_verifies(compact, k, alg) for k in usable):
            return "ok"
    except ValueError:
        return "bad"
    return "bad" if named is not None else "unverified"


def verify_card(
    card: pb.AgentCard, trusted: TrustedKeys, *, require: bool = False, source: str = "agent card"
) -> int:
    """Checks the card's signatures against ``trusted`` (spec §8.4.3);
    returns how many verified.

    Raises ``A2AError(INVALID_AGENT_RESPONSE)`` when a signature is malformed
    or does not verify with the key its ``kid`` names (the card was altered,
    or signed by someone else), or when there are trusted keys and none
    verifies any of them; with ``require``, also when the card has no signature or none
    verifies with a trusted key."""
    payload = _b64(canonical_card(card)) if card.signatures else ""
    verdicts = [_check_one(sig, payload, trusted) for sig in card.signatures]
    for i, verdict in enumerate(verdicts):
        if verdict == "bad":
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{source}: signature {i} ({_describe(card.signatures[i])}) does not verify: "
                "the card was altered or signed with another key; refused",
            )
    verified = verdicts.count("ok")
    if card.signatures and not verified and trusted:
        raise A2AError(
            ErrorCode.INVALID_AGENT_RESPONSE,
            f"{source}: no signature verifies with a trusted key (the card was altered or "
            "signed by an untrusted key); refused",
        )
    if require and not verified:
        why = (
            "it is not signed"
            if not card.signatures
            else "no trusted key for " + ", ".join(_describe(s) for s in card.signatures)
        )
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{source}: no verified signature ({why}); refused")
    return verified


def _describe(sig: pb.AgentCardSignature) -> str:
    header = _header(sig) or {}
    return f"alg {header.get('alg', '?')}, kid {header.get('kid', '?')}"
