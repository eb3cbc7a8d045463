"""Signed Agent Cards (spec §8.4): JCS canonical form, sign/verify for each key
type, tampering refused, the card served signed, the client and the CLI."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from google.protobuf import json_format

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.bindings.tls import ClientTLS, ServerTLS
from a2a_grpc.client import A2AClient
from a2a_grpc.client._card import fetch_card, parse_card
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol.cardsign import CardSigner, TrustedKeys, canonical_card, verify_card
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.tls.certs import Pki
from tests.tls.conftest import cli, running

KEY_TYPES = ("ec", "rsa", "ed25519")


def _card(**extra: object) -> pb.AgentCard:
    raw = {
        "name": "Example Agent",
        "description": "Résumé reviewer \u2014 “quotes”",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "https://agent.example.com/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "review", "name": "Review", "description": "Reviews", "tags": ["code"]}],
        **extra,
    }
    return json_format.ParseDict(raw, pb.AgentCard())


def _generate(kind: str) -> object:
    if kind == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    if kind == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ed25519.Ed25519PrivateKey.generate()


def _write(key: object, directory: Path, stem: str) -> tuple[Path, Path]:
    private, public = directory / f"{stem}.key", directory / f"{stem}.pub"
    private.write_bytes(
        key.private_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    directory = tmp_path_factory.mktemp("keys")
    out = {kind: _write(_generate(kind), directory, kind) for kind in KEY_TYPES}
    out["other"] = _write(_generate("ec"), directory, "other")
    return out


def _protected(card: pb.AgentCard) -> dict[str, object]:
    text = card.signatures[0].protected
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def test_canonical_form_follows_presence_rules_and_jcs() -> None:
    card = _card()
    card.capabilities.ClearField("streaming")
    card.description = ""
    card.signatures.append(pb.AgentCardSignature(protected="x", signature="y"))
    canonical = canonical_card(card).decode("utf-8")
    # Sorted keys, no whitespace, no signatures; REQUIRED description kept
    # though empty; the set-to-false optional pushNotifications kept, the unset
    # streaming and the unset optional documentationUrl/iconUrl dropped.
    assert canonical == (
        '{"capabilities":{"pushNotifications":false},"defaultInputModes":["text/plain"],'
        '"defaultOutputModes":["text/plain"],"description":"","name":"Example Agent",'
        '"skills":[{"description":"Reviews","id":"review","name":"Review","tags":["code"]}],'
        '"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0",'
        '"url":"https://agent.example.com/"}],"version":"1.0.0"}'
    )
    # Non-ASCII stays as UTF-8 (RFC 8785 §3.2.2.2), not \u escapes.
    assert "Résumé" in canonical_card(_card()).decode("utf-8")


def test_required_fields_appear_even_when_empty() -> None:
    canonical = json.loads(canonical_card(pb.AgentCard(name="n")))
    assert canonical == {
        "name": "n",
        "description": "",
        "version": "",
        "supportedInterfaces": [],
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
    }


@pytest.mark.parametrize("kind", KEY_TYPES)
def test_sign_verify_round_trip(keys: dict[str, tuple[Path, Path]], kind: str) -> None:
    private, public = keys[kind]
    signer = CardSigner.from_pem(private, kid=f"{kind}-1", jku="https://agent.example.com/jwks.json")
    signed = signer.sign(_card())
    assert len(signed.signatures) == 1
    header = _protected(signed)
    assert header == {
        "alg": {"ec": "ES256", "rsa": "RS256", "ed25519": "EdDSA"}[kind],
        "kid": f"{kind}-1",
        "typ": "JOSE",
        "jku": "https://agent.example.com/jwks.json",
    }
    # Trusted as a PEM public key, and as the signer's own JWK set.
    assert verify_card(signed, TrustedKeys.from_files([public]), require=True) == 1
    jwks = TrustedKeys()
    jwks.add_jwks(signer.jwks())
    assert verify_card(signed, jwks, require=True) == 1
    # The signature survives the JSON round trip a client does.
    again = parse_card(json_format.MessageToDict(signed))
    assert verify_card(again, jwks, require=True) == 1


def _tampered(signed: pb.AgentCard, how: str) -> pb.AgentCard:
    card = pb.AgentCard()
    card.CopyFrom(signed)
    sig = card.signatures[0]
    if how == "name":
        card.name = "Evil Agent"
    elif how == "url":
        card.supported_interfaces[0].url = "https://evil.example.com/"
    elif how == "skill":
        card.skills.add(id="exfiltrate", name="x", description="x")
    elif how == "optional-set-false":
        card.capabilities.extended_agent_card = False  # absent before: changes the canonical form
    elif how == "signature":
        raw = bytearray(base64.urlsafe_b64decode(sig.signature + "=" * (-len(sig.signature) % 4)))
        raw[5] ^= 1
        sig.signature = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    elif how in ("alg-none", "alg-hs256"):
        header = _protected(card) | {"alg": "none" if how == "alg-none" else "HS256"}
        sig.protected = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=").decode()
    elif how == "garbage-header":
        sig.protected = "not-base64-json"
    return card


@pytest.mark.parametrize(
    "how",
    ["name", "url", "skill", "optional-set-false", "signature", "alg-none", "alg-hs256", "garbage-header"],
)
@pytest.mark.parametrize("kind", KEY_TYPES)
def test_tampered_card_is_refused(keys: dict[str, tuple[Path, Path]], kind: str, how: str) -> None:
    signer = CardSigner.from_pem(keys[kind][0])  # kid: the key's thumbprint
    trusted = TrustedKeys.from_files([keys[kind][1]])
    card = _tampered(signer.sign(_card()), how)
    with pytest.raises(A2AError) as caught:
        verify_card(card, trusted)
    assert caught.value.code == ErrorCode.INVALID_AGENT_RESPONSE
    assert "refused" in caught.value.message


BEFORE = json.loads(Path(__file__).with_name("cardsign_before_pyjwt.json").read_text(encoding="utf-8"))


def _signed_before(kind: str) -> tuple[pb.AgentCard, TrustedKeys]:
    entry = BEFORE["signed"][kind]
    card = json_format.ParseDict(BEFORE["card"], pb.AgentCard())
    card.signatures.append(pb.AgentCardSignature(protected=entry["protected"], signature=entry["signature"]))
    trusted = TrustedKeys()
    trusted.add_jwks({**entry["jwk"], "kid": entry["kid"]})
    return card, trusted


@pytest.mark.parametrize("kind", sorted(BEFORE["signed"]))
def test_signatures_made_before_pyjwt_still_verify(kind: str) -> None:
    """Fixed keys and signatures from the hand-written JWS code (ES256 with a jku, ES384, RS256,
    EdDSA, and the PS256 and ``Ed25519``-named headers it also verified): still good, still
    bound to the card."""
    card, trusted = _signed_before(kind)
    assert verify_card(card, trusted, require=True) == 1
    card.capabilities.extensions[0].params["n"] = 19  # a Struct number inside the canonical form
    with pytest.raises(A2AError, match="does not verify"):
        verify_card(card, trusted)


def test_signing_gives_the_bytes_it_gave_before_pyjwt() -> None:
    """EdDSA is deterministic: the same key signing the same card makes the same protected header,
    kid (the RFC 7638 thumbprint) and signature as the hand-written code did."""
    before = BEFORE["signed"]["ed25519"]
    key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes.fromhex(BEFORE["ed25519_seed"]))
    signer = CardSigner(key)
    signed = signer.sign(json_format.ParseDict(BEFORE["card"], pb.AgentCard()))
    assert signer.kid == before["kid"]
    assert (signed.signatures[0].protected, signed.signatures[0].signature) == (
        before["protected"],
        before["signature"],
    )
    assert signer.jwks()["keys"] == [{**before["jwk"], "kid": before["kid"], "alg": "EdDSA", "use": "sig"}]
    # A detached JWS of the base64url payload, not RFC 7797's unencoded one.
    assert set(_protected(signed)) == {"alg", "kid", "typ"}


def test_untrusted_signer_and_missing_signatures(keys: dict[str, tuple[Path, Path]]) -> None:
    signed = CardSigner.from_pem(keys["ec"][0], kid="k").sign(_card())
    other = TrustedKeys.from_files([keys["other"][1]])
    with pytest.raises(A2AError, match="no signature verifies with a trusted key"):
        verify_card(signed, other)
    # No trusted key at all: unverifiable, accepted unless required.
    assert verify_card(signed, TrustedKeys()) == 0
    with pytest.raises(A2AError, match="no trusted key"):
        verify_card(signed, TrustedKeys(), require=True)
    with pytest.raises(A2AError, match="not signed"):
        verify_card(_card(), other, require=True)
    assert verify_card(_card(), other) == 0


def test_rotation_one_trusted_signature_is_enough(keys: dict[str, tuple[Path, Path]]) -> None:
    old = CardSigner.from_pem(keys["rsa"][0], kid="old").sign(_card())
    both = CardSigner.from_pem(keys["ec"][0], kid="new").sign(_card())
    both.signatures.extend(old.signatures)
    assert verify_card(both, TrustedKeys.from_files([keys["rsa"][1]]), require=True) == 1
    assert verify_card(both, TrustedKeys.from_files([keys["rsa"][1], keys["ec"][1]]), require=True) == 2


def test_bad_signing_keys_are_refused(tmp_path: Path, keys: dict[str, tuple[Path, Path]]) -> None:
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    with pytest.raises(ValueError, match="too small"):
        CardSigner(weak)
    with pytest.raises(ValueError, match="not supported"):
        CardSigner(ec.generate_private_key(ec.SECP256K1()))
    with pytest.raises(ValueError, match="not an unencrypted PEM private key"):
        CardSigner.from_pem(keys["ec"][1])  # a public key


async def test_served_card_is_signed_and_ignores_the_host_header(keys: dict[str, tuple[Path, Path]]) -> None:
    signer = CardSigner.from_pem(keys["ed25519"][0], kid="card-key")
    extended = _card(name="Extended Agent")
    cfg = ServerConfig(grpc_port=0, http_port=0, card_signer=signer)
    server = A2AServer(EchoAgent(), InMemoryTaskStore(), cfg, extended_card=extended)
    await server.start()
    trusted = TrustedKeys.from_files([keys["ed25519"][1]])
    try:
        base = f"http://127.0.0.1:{server.http_port}"
        bodies = []
        async with aiohttp.ClientSession() as session:
            for host in (f"127.0.0.1:{server.http_port}", "evil.example.com"):
                async with session.get(base + "/.well-known/agent-card.json", headers={"Host": host}) as resp:
                    assert resp.status == 200
                    bodies.append(await resp.read())
        assert bodies[0] == bodies[1]
        raw = json.loads(bodies[0])
        assert raw["signatures"][0]["protected"]
        card = parse_card(raw)
        assert all("evil" not in i.url for i in card.supported_interfaces)
        assert verify_card(card, trusted, require=True) == 1
        async with await A2AClient.connect(base, trusted_keys=trusted, require_signed_card=True) as client:
            ext = await client.get_extended_agent_card()
            assert ext.name == "Extended Agent"
            assert verify_card(ext, trusted, require=True) == 1
        with pytest.raises(A2AError, match="refused"):
            await A2AClient.connect(base, trusted_keys=TrustedKeys.from_files([keys["other"][1]]))
    finally:
        await server.stop(0.2)


@pytest.fixture
async def jwks_server(pki: Pki, keys: dict[str, tuple[Path, Path]]) -> AsyncIterator[tuple[str, CardSigner]]:
    """An https server on 127.0.0.1 serving the JWK set of an EC card signer."""
    signer = CardSigner.from_pem(keys["ec"][0], kid="jku-key")
    app = web.Application()

    async def jwks(_: web.Request) -> web.Response:
        return web.json_response(signer.jwks())

    app.router.add_get("/jwks.json", jwks)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(
        runner, "127.0.0.1", 0, ssl_context=ServerTLS(pki.server_cert, pki.server_key).ssl_context()
    )
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"https://127.0.0.1:{port}/jwks.json", signer
    finally:
        await runner.cleanup()


async def test_keys_from_a_jku_on_the_cards_own_host(pki: Pki, jwks_server: tuple[str, CardSigner]) -> None:
    jku, signer = jwks_server
    client_tls = ClientTLS(ca=pki.ca)
    tls = ServerTLS(pki.server_cert, pki.server_key)
    async with running(tls=tls, card_signer=CardSigner(signer.key, kid="jku-key", jku=jku)) as (server, _):
        base = f"https://127.0.0.1:{server.http_port}"
        card = await fetch_card(base, tls=client_tls, require_signature=True)
        assert card.signatures
    # A jku on another host than the card's proves nothing: not fetched.
    elsewhere = jku.replace("127.0.0.1", "localhost")
    async with running(tls=tls, card_signer=CardSigner(signer.key, kid="jku-key", jku=elsewhere)) as (
        server,
        _,
    ):
        base = f"https://127.0.0.1:{server.http_port}"
        with pytest.raises(A2AError, match="no trusted key"):
            await fetch_card(base, tls=client_tls, require_signature=True)


async def test_cli_card_verify(keys: dict[str, tuple[Path, Path]]) -> None:
    signer = CardSigner.from_pem(keys["rsa"][0])
    async with running(card_signer=signer) as (server, _):
        base = f"http://127.0.0.1:{server.http_port}"
        ok = await cli("card", base, "--verify", "--trust", keys["rsa"][1], "--json")
        assert ok.exit_code == 0, ok.output
        assert json.loads(ok.output)["signatures"]
        wrong = await cli("card", base, "--verify", "--trust", keys["other"][1])
        assert wrong.exit_code == 1
        assert "INVALID_AGENT_RESPONSE" in wrong.output and "refused" in wrong.output
        untrusted = await cli("card", base, "--verify")
        assert untrusted.exit_code == 1 and "no trusted key" in untrusted.output
    async with running() as (server, _):
        unsigned = await cli(
            "card", f"http://127.0.0.1:{server.http_port}", "--verify", "--trust", keys["rsa"][1]
        )
        assert unsigned.exit_code == 1 and "not signed" in unsigned.output


async def test_cli_serve_sign_card_checks(keys: dict[str, tuple[Path, Path]]) -> None:
    wildcard = await cli("serve", "--host", "0.0.0.0", "--sign-card", keys["ec"][0], "--grpc-port", "0")
    assert wildcard.exit_code == 1 and "--public-url" in wildcard.output
    public = await cli("serve", "--sign-card", keys["ec"][1], "--grpc-port", "0", "--http-port", "0")
    assert public.exit_code == 1 and "not an unencrypted PEM private key" in public.output


@pytest.mark.interop
async def test_the_official_sdk_canonicalises_our_served_card_the_same(
    keys: dict[str, tuple[Path, Path]],
) -> None:
    """The a2a-sdk's signing payload of our served card equals ours, so its
    verifier accepts our signatures (docs/tls.md names where the two differ:
    REQUIRED fields left empty, which a served card does not have)."""
    signer = CardSigner.from_pem(keys["ec"][0])
    async with running(card_signer=signer) as (server, _), aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{server.http_port}/.well-known/agent-card.json"
        async with session.get(url) as resp:
            body = await resp.read()
    script = Path(__file__).with_name("sdk_canonical.py")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(body), 60)
    assert proc.returncode == 0
    assert out == canonical_card(parse_card(json.loads(body)))
