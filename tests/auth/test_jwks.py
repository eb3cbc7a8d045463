"""The JWKS cache over real sockets: rotation costs exactly one extra fetch,
an unknown ``kid`` refreshes at most once per minute, and the last good key
set survives the issuer going down."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from a2a_grpc.auth._policy import policy_from_mapping
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.auth.issuer import AUDIENCE, Issuer, rsa_key
from tests.auth.wire import BINDINGS, Wire
from tests.interop.agents import InteropAgent


@pytest_asyncio.fixture
async def jwt_only() -> AsyncIterator[tuple[A2AServer, Issuer, Wire]]:
    issuer = Issuer()
    await issuer.start()
    policy = policy_from_mapping(
        {
            "schemes": {
                "idp": {
                    "type": "jwt",
                    "issuer": issuer.issuer,
                    "audience": AUDIENCE,
                    "jwks_url": issuer.base_url + "/jwks",
                }
            }
        }
    )
    server = A2AServer(
        InteropAgent(),
        InMemoryTaskStore(),
        ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.2, auth=policy),
    )
    await server.start()
    wire = Wire(f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}")
    try:
        yield server, issuer, wire
    finally:
        await wire.close()
        await server.stop(0.2)
        await issuer.stop()


async def ok_everywhere(wire: Wire, token: str) -> bool:
    headers = {"Authorization": f"Bearer {token}"}
    replies = [await wire.call(b, "ListTasks", pb.ListTasksRequest(), headers) for b in BINDINGS]
    return all(r.ok for r in replies)


async def test_rotation_costs_exactly_one_fetch_and_unknown_kids_are_rate_limited(jwt_only):
    _server, issuer, wire = jwt_only
    assert issuer.jwks_fetches == 1  # at start-up
    assert await ok_everywhere(wire, issuer.mint())
    assert issuer.jwks_fetches == 1

    rotated = rsa_key("k3")
    issuer.keys.append(rotated)  # the IdP starts signing with a new key
    assert await ok_everywhere(wire, issuer.mint(rotated))
    assert issuer.jwks_fetches == 2  # exactly one extra fetch, then cached
    assert await ok_everywhere(wire, issuer.mint(rotated))
    assert issuer.jwks_fetches == 2

    stranger = rsa_key("k9")
    assert not await ok_everywhere(wire, issuer.mint(stranger))
    assert not await ok_everywhere(wire, issuer.mint(stranger))
    assert issuer.jwks_fetches == 2  # an unknown kid within the minute: no fetch


async def test_the_last_good_key_set_is_kept_while_the_issuer_is_down(jwt_only):
    server, issuer, wire = jwt_only
    cache = server.config.auth.authenticators["idp"].keys  # type: ignore[union-attr]
    issuer.down = True
    assert await cache.refresh() is False
    assert await ok_everywhere(wire, issuer.mint())
    assert await ok_everywhere(wire, issuer.mint(issuer.keys[1]))
    issuer.down = False
    assert await cache.refresh() is True


@pytest.mark.parametrize("binding", BINDINGS)
async def test_without_any_key_set_the_answer_is_unavailable_not_a_crash(binding):
    issuer = Issuer()
    await issuer.start()
    issuer.down = True
    policy = policy_from_mapping(
        {
            "schemes": {
                "idp": {
                    "type": "jwt",
                    "issuer": issuer.issuer,
                    "audience": AUDIENCE,
                    "jwks_url": issuer.base_url + "/jwks",
                }
            }
        }
    )
    server = A2AServer(
        InteropAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0, auth=policy)
    )
    await server.start()  # starts although the issuer is down
    wire = Wire(f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}")
    try:
        reply = await wire.call(
            binding, "ListTasks", pb.ListTasksRequest(), {"Authorization": f"Bearer {issuer.mint()}"}
        )
        assert not reply.ok and reply.reason() == "UNAVAILABLE"
    finally:
        await wire.close()
        await server.stop(0.2)
        await issuer.stop()


async def test_a_remembered_token_still_expires_and_dies_with_its_key(jwt_only):
    import asyncio
    import time

    from a2a_grpc.auth import BadCredential
    from a2a_grpc.context import CallContext

    server, issuer, wire = jwt_only
    authenticator = server.config.auth.authenticators["idp"]  # type: ignore[union-attr]
    authenticator.leeway = 0.0

    def call(token: str) -> CallContext:
        return CallContext(method="/x/ListTasks", metadata={"authorization": [f"Bearer {token}"]})

    short = issuer.mint(exp=int(time.time()) + 1)
    assert (await authenticator.authenticate(call(short))).subject == "carol"
    assert (await authenticator.authenticate(call(short))).subject == "carol"  # remembered
    await asyncio.sleep(max(0.0, int(time.time()) + 1.05 - time.time()) + 1.0)
    with pytest.raises(BadCredential, match="token expired"):
        await authenticator.authenticate(call(short))

    token = issuer.mint()
    assert await ok_everywhere(wire, token)
    del issuer.keys[0]  # the IdP withdraws the key (e.g. compromised)
    assert await authenticator.keys.refresh()
    assert not await ok_everywhere(wire, token)
