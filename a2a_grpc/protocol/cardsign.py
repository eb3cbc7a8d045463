"""Signed Agent Cards: detached JWS over the card's RFC 8785 canonical form (spec §8.4).

Signing (server): :class:`CardSigner` holds an EC (P-256/384/521), RSA or
Ed25519 private key and puts one ``AgentCardSignature`` in the card's
``signatures``: ``protected`` = base64url of ``{"alg", "kid", "typ": "JOSE"
[, "jku"]}``, ``signature`` = base64url of the signature over
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

Needs ``cryptography`` and ``rfc8785`` (extra ``tls``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import is_required, pb

__all__ = [
    "CardSigner",
    "TrustedKeys",
    "canonical_card",
    "jku_urls",
    "public_jwk",
    "thumbprint",
    "verify_card",
]

_EC_ALGS = {"secp256r1": ("ES256", 32), "secp384r1": ("ES384", 48), "secp521r1": ("ES512", 66)}
_RSA_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_EDDSA_ALGS = ("EdDSA", "Ed25519")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


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
    raw = json_format.MessageToDict(unsigned)
    return rfc8785.dumps(_fill_required(raw, pb.AgentCard.DESCRIPTOR))


# --------------------------------------------------------------------- keys
def _alg_of(key: Any) -> str:
    """The JWS algorithm a key signs with: ES256/384/512, RS256 or EdDSA."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        if key.curve.name not in _EC_ALGS:
            raise ValueError(f"EC curve {key.curve.name} is not supported (P-256, P-384, P-521)")
        return _EC_ALGS[key.curve.name][0]
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


def _hash(alg: str) -> Any:
    from cryptography.hazmat.primitives import hashes

    return {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[-3:]]


def _sign(key: Any, alg: str, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

    if alg.startswith("ES"):
        r, s = utils.decode_dss_signature(key.sign(data, ec.ECDSA(_hash(alg))))
        size = _EC_ALGS[key.curve.name][1]
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")
    if alg.startswith("RS"):
        return bytes(key.sign(data, padding.PKCS1v15(), _hash(alg)))
    return bytes(key.sign(data))


def _verify(key: Any, alg: str, data: bytes, signature: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

    try:
        if alg.startswith("ES"):
            size = _EC_ALGS[key.curve.name][1]
            if len(signature) != 2 * size:
                return False
            r, s = int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
            key.verify(utils.encode_dss_signature(r, s), data, ec.ECDSA(_hash(alg)))
        elif alg.startswith("RS"):
            key.verify(signature, data, padding.PKCS1v15(), _hash(alg))
        elif alg.startswith("PS"):
            pss = padding.PSS(mgf=padding.MGF1(_hash(alg)), salt_length=padding.PSS.DIGEST_LENGTH)
            key.verify(signature, data, pss, _hash(alg))
        else:
            key.verify(signature, data)
    except InvalidSignature:
        return False
    return True


def _int_b64(n: int, size: int | None = None) -> str:
    return _b64(n.to_bytes(size or (n.bit_length() + 7) // 8, "big"))


def public_jwk(key: Any) -> dict[str, str]:
    """The public JWK (RFC 7517) of a private or public key, without ``kid``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    pub = key.public_key() if hasattr(key, "public_key") else key
    if isinstance(pub, ec.EllipticCurvePublicKey):
        nums, size = pub.public_numbers(), _EC_ALGS[pub.curve.name][1]
        crv = "P-" + {"secp256r1": "256", "secp384r1": "384", "secp521r1": "521"}[pub.curve.name]
        return {"kty": "EC", "crv": crv, "x": _int_b64(nums.x, size), "y": _int_b64(nums.y, size)}
    if isinstance(pub, rsa.RSAPublicKey):
        rn = pub.public_numbers()
        return {"kty": "RSA", "n": _int_b64(rn.n), "e": _int_b64(rn.e)}
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": _b64(raw)}


def thumbprint(key: Any) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256, base64url) of a key: the default ``kid``."""
    jwk = public_jwk(key)
    members = {k: jwk[k] for k in sorted(jwk) if k in ("crv", "e", "kty", "n", "x", "y")}
    return _b64(hashlib.sha256(json.dumps(members, separators=(",", ":")).encode()).digest())


def _jwk_key(jwk: Mapping[str, Any]) -> Any:
    """A public key from a JWK; ValueError for a kind this module does not verify."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    def num(name: str) -> int:
        return int.from_bytes(_unb64(str(jwk[name])), "big")

    try:
        kty = jwk.get("kty")
        if kty == "EC":
            curve = {"P-256": ec.SECP256R1(), "P-384": ec.SECP384R1(), "P-521": ec.SECP521R1()}[jwk["crv"]]
            return ec.EllipticCurvePublicNumbers(num("x"), num("y"), curve).public_key()
        if kty == "RSA":
            return rsa.RSAPublicNumbers(num("e"), num("n")).public_key()
        if kty == "OKP" and jwk.get("crv") == "Ed25519":
            return ed25519.Ed25519PublicKey.from_public_bytes(_unb64(str(jwk["x"])))
    except (KeyError, ValueError, binascii.Error) as exc:
        raise ValueError(f"unusable JWK: {exc}") from None
    raise ValueError(f"unsupported JWK type {kty!r}")


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
        self.kid = kid or thumbprint(key)
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
        return {"keys": [{**public_jwk(self.key), "kid": self.kid, "alg": self.alg, "use": "sig"}]}

    def sign(self, card: pb.AgentCard) -> pb.AgentCard:
        """A copy of ``card`` whose ``signatures`` hold this signer's one
        signature (earlier signatures are dropped: they covered other content)."""
        header: dict[str, str] = {"alg": self.alg, "kid": self.kid, "typ": "JOSE"}
        if self.jku:
            header["jku"] = self.jku
        protected = _b64(json.dumps(header, separators=(",", ":")).encode())
        data = f"{protected}.{_b64(canonical_card(card))}".encode("ascii")
        out = pb.AgentCard()
        out.CopyFrom(card)
        del out.signatures[:]
        out.signatures.append(
            pb.AgentCardSignature(protected=protected, signature=_b64(_sign(self.key, self.alg, data)))
        )
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
            self.by_kid.setdefault(thumbprint(key), key)
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
    try:
        header = json.loads(_unb64(sig.protected))
    except (ValueError, binascii.Error, UnicodeDecodeError):
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
    try:
        signature = _unb64(sig.signature)
    except (ValueError, binascii.Error):
        return "bad"
    data = f"{sig.protected}.{payload}".encode("ascii")
    if any(_verify(k, alg, data, signature) for k in usable):
        return "ok"
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
