"""One A2AServer with an auth configuration, an OIDC issuer, and raw clients.

The configuration (written as TOML, loaded by ``load_policy`` as ``a2a-grpc
serve --auth`` does) declares an ``apiKey`` scheme with keys for alice and bob
(scope ``a2a``), bob's bound to tenant ``acme``, dora (no scope), a revoked
and an expired key; and a ``corp`` JWT scheme whose keys come from the
issuer's OpenID discovery document. Both requirements need scope ``a2a``. The
extended card has a public skill and one needing scope ``admin``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio

from a2a_grpc.auth import AuthPolicy, load_policy
from a2a_grpc.auth._apikeys import digest, new_secret
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.auth.issuer import AUDIENCE, Issuer
from tests.auth.wire import Wire
from tests.interop.agents import InteropAgent

KEY_SUBJECTS = {
    "alice": {"scopes": ["a2a", "admin"]},
    "bob": {"scopes": ["a2a"], "tenant": "acme"},
    "erin": {"scopes": ["a2a"]},
    "dora": {"scopes": []},
    "revoked": {"scopes": ["a2a"], "revoked": True},
    "expired": {"scopes": ["a2a"], "expires": "2020-01-01T00:00:00Z"},
}


def auth_toml(issuer: Issuer, secrets: dict[str, str]) -> str:
    """The configuration text (the format of docs/auth.md)."""
    lines = [
        "[schemes.apiKey]",
        'type = "apiKey"',
        'header = "X-API-Key"',
        'description = "keys from the admin"',
    ]
    for name, extra in KEY_SUBJECTS.items():
        key_id, secret = new_secret()
        secrets[name] = secret
        lines += ["", "[[schemes.apiKey.keys]]", f'id = "{key_id}"', f'subject = "{name}"']
        lines.append("scopes = [" + ", ".join(f'"{s}"' for s in extra["scopes"]) + "]")
        if "tenant" in extra:
            lines.append(f'tenant = "{extra["tenant"]}"')
        if extra.get("revoked"):
            lines.append("revoked = true")
        if "expires" in extra:
            lines.append(f"expires = {extra['expires']}")
        lines.append(f'hash = "{digest(secret)}"')
    lines += [
        "",
        "[schemes.corp]",
        'type = "jwt"',
        f'issuer = "{issuer.issuer}"',
        f'audience = "{AUDIENCE}"',
        f'discovery_url = "{issuer.discovery_url}"',
        'algorithms = ["RS256", "ES256"]',
        "leeway_seconds = 5",
        "",
        "[[requirements]]",
        'apiKey = ["a2a"]',
        "",
        "[[requirements]]",
        'corp = ["a2a"]',
        "",
        "[extended_card]",
        "filter_skills = true",
    ]
    return "\n".join(lines) + "\n"


def extended_card() -> pb.AgentCard:
    card = pb.AgentCard()
    card.CopyFrom(InteropAgent.card)
    card.name = "Interop Agent (extended)"
    del card.skills[:]
    card.skills.add(id="echo", name="echo", description="echoes", tags=["echo"])
    admin = card.skills.add(id="admin", name="admin", description="admin only", tags=["admin"])
    admin.security_requirements.add().schemes["apiKey"].list.append("admin")
    return card


@dataclass
class AuthServer:
    server: A2AServer
    policy: AuthPolicy
    issuer: Issuer
    secrets: dict[str, str]
    wire: Wire
    config_path: Path

    def key(self, name: str) -> dict[str, str]:
        return {"X-API-Key": self.secrets[name]}

    def bearer(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}


@pytest_asyncio.fixture(scope="package", loop_scope="package")
async def auth_server(tmp_path_factory) -> AsyncIterator[AuthServer]:
    issuer = Issuer()
    await issuer.start()
    secrets: dict[str, str] = {}
    path = tmp_path_factory.mktemp("auth") / "auth.toml"
    path.write_text(auth_toml(issuer, secrets))
    policy = load_policy(path)
    store = InMemoryTaskStore()
    server = A2AServer(
        InteropAgent(),
        store,
        ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, grace_seconds=0.5, auth=policy),
        push=PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1, timeout_seconds=2),
        extended_card=extended_card(),
    )
    await server.start()
    wire = Wire(f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}")
    try:
        yield AuthServer(server, policy, issuer, secrets, wire, path)
    finally:
        await wire.close()
        await asyncio.gather(server.stop(0.5))
        await issuer.stop()
