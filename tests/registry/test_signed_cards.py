"""Registration checks signed Agent Cards (spec §8.4.3) with the registry's
trusted keys: a card signed with a trusted key is registered, a tampered one
is refused, and with ``require_signed_cards`` so are unsigned cards and cards
signed by a key the registry does not trust."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol.cardsign import CardSigner, TrustedKeys
from a2a_grpc.registry._client import RegistryClient
from a2a_grpc.registry._server import RegistryConfig, RegistryServer
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.registry.conftest import Done, card, skill, url_of


def _key_files(directory: Path, stem: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = directory / f"{stem}.key", directory / f"{stem}.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


@pytest.fixture
async def agents(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[A2AServer] = []

    async def start(name: str, signer: CardSigner | None) -> A2AServer:
        config = ServerConfig(grpc_port=0, http_port=0, card_signer=signer)
        srv = A2AServer(Done(card(name, skill("s1", "t"))), InMemoryTaskStore(), config)
        await srv.start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        await srv.stop(0.1)


async def _registry(tmp_path: Path, trusted: TrustedKeys, require: bool) -> RegistryServer:
    cfg = RegistryConfig(
        grpc_port=0,
        http_port=0,
        store_url="memory",
        allow_private=True,
        check_interval_seconds=3600,
        trusted_keys=trusted,
        require_signed_cards=require,
    )
    return RegistryServer(cfg)


async def _refusal(client: RegistryClient, url: str) -> A2AError:
    with pytest.raises(A2AError) as info:
        await client.register(url)
    return info.value


async def test_signed_cards_are_checked(tmp_path: Path, agents: Callable[..., Any]) -> None:
    trusted_key, trusted_pub = _key_files(tmp_path, "trusted")
    other_key, _ = _key_files(tmp_path, "other")
    good = await agents("Signed", CardSigner.from_pem(trusted_key))
    untrusted = await agents("Untrusted", CardSigner.from_pem(other_key))
    unsigned = await agents("Unsigned", None)
    assert good.card.signatures, "the agent serves a signed card"

    # A copy of the good card with one field changed, served elsewhere.
    tampered = protojson.to_dict(good.card)
    tampered["description"] = "Not what was signed."

    async def serve_tampered(_: web.Request) -> web.Response:
        return web.json_response(tampered)

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", serve_tampered)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    tampered_url = f"http://127.0.0.1:{runner.addresses[0][1]}"

    keys = TrustedKeys.from_files([trusted_pub])
    try:
        registry = await _registry(tmp_path, keys, require=True)
        async with registry, RegistryClient(registry.grpc_target) as client:
            registered = await client.register(url_of(good))
            assert registered.card.name == "Signed"
            for url, why in (
                (tampered_url, "does not verify"),
                (url_of(unsigned), "it is not signed"),
                (url_of(untrusted), "no signature verifies with a trusted key"),
            ):
                err = await _refusal(client, url)
                assert err.code is ErrorCode.INVALID_AGENT_RESPONSE, err
                assert why in err.message, err.message
            assert [a.card.name for a in await client.list()] == ["Signed"]
        # Without require, an unsigned card is fine, but a tampered one still is not.
        registry = await _registry(tmp_path, keys, require=False)
        async with registry, RegistryClient(registry.grpc_target) as client:
            await client.register(url_of(unsigned))
            err = await _refusal(client, tampered_url)
            assert "does not verify" in err.message
    finally:
        await runner.cleanup()
