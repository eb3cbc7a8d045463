"""Authentication on every RPC of every binding, over real sockets (issue 11).

The server of ``conftest.py`` needs an API key or a bearer JWT (scope
``a2a``) on every call but the public card: anonymous calls get
UNAUTHENTICATED (HTTP 401 with ``WWW-Authenticate`` on JSON-RPC and REST, a
``www-authenticate`` trailer on gRPC) before anything is stored; a caller
without the scope gets PERMISSION_DENIED (403).
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from google.protobuf import json_format

from a2a_grpc.types import pb
from tests.auth.conftest import AuthServer
from tests.auth.issuer import ec_key, rsa_key
from tests.auth.wire import BINDINGS

pytestmark = pytest.mark.asyncio(loop_scope="package")


def every_rpc(task_id: str, config_id: str = "cfg-1", tenant: str = "") -> dict[str, object]:
    """One request of each of the eleven RPCs, naming ``task_id``."""
    msg = pb.Message(role=pb.ROLE_USER, message_id="m-1", task_id=task_id, parts=[pb.Part(text="hi")])
    return {
        "SendMessage": pb.SendMessageRequest(message=msg, tenant=tenant),
        "SendStreamingMessage": pb.SendMessageRequest(message=msg, tenant=tenant),
        "GetTask": pb.GetTaskRequest(id=task_id, tenant=tenant),
        "ListTasks": pb.ListTasksRequest(tenant=tenant),
        "CancelTask": pb.CancelTaskRequest(id=task_id, tenant=tenant),
        "SubscribeToTask": pb.SubscribeToTaskRequest(id=task_id, tenant=tenant),
        "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig(
            task_id=task_id, url="http://127.0.0.1:9/hook", tenant=tenant
        ),
        "GetTaskPushNotificationConfig": pb.GetTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=tenant
        ),
        "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsRequest(
            task_id=task_id, tenant=tenant
        ),
        "DeleteTaskPushNotificationConfig": pb.DeleteTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=tenant
        ),
        "GetExtendedAgentCard": pb.GetExtendedAgentCardRequest(tenant=tenant),
    }


def stored(srv: AuthServer) -> int:
    return len(srv.server.store._tasks)  # type: ignore[attr-defined]


def assert_unauthenticated(reply, binding: str) -> None:
    assert not reply.ok
    if binding == "grpc":
        assert reply.status == "UNAUTHENTICATED"
    else:
        assert reply.status == 401, reply.body
    assert reply.reason() == "UNAUTHENTICATED"
    assert reply.challenge is not None


@pytest.mark.parametrize("binding", BINDINGS)
async def test_anonymous_calls_are_refused_on_every_rpc_before_any_store_access(auth_server, binding):
    before = stored(auth_server)
    for rpc, request in every_rpc(str(uuid.uuid4())).items():
        reply = await auth_server.wire.call(binding, rpc, request)
        assert_unauthenticated(reply, binding)
        assert 'ApiKey header="X-API-Key"' in reply.challenge, rpc
        assert 'Bearer realm="corp"' in reply.challenge, rpc
    # SendMessage without a task id would have created one.
    new = every_rpc("")["SendMessage"]
    assert_unauthenticated(await auth_server.wire.call(binding, "SendMessage", new), binding)
    assert stored(auth_server) == before


async def test_the_public_card_is_exempt_and_declares_the_configured_schemes(auth_server):
    async with auth_server.wire.session.get(auth_server.wire.http + "/.well-known/agent-card.json") as resp:
        assert resp.status == 200
        raw = await resp.json()
    assert raw["securitySchemes"]["apiKey"] == {
        "apiKeySecurityScheme": {
            "description": "keys from the admin",
            "location": "header",
            "name": "X-API-Key",
        }
    }
    assert raw["securitySchemes"]["corp"] == {
        "openIdConnectSecurityScheme": {"openIdConnectUrl": auth_server.issuer.discovery_url}
    }
    assert raw["securityRequirements"] == [
        {"schemes": {"apiKey": {"list": ["a2a"]}}},
        {"schemes": {"corp": {"list": ["a2a"]}}},
    ]
    card = json_format.ParseDict(raw, pb.AgentCard(), ignore_unknown_fields=True)
    policy = auth_server.policy
    assert dict(card.security_schemes) == {n: a.security_scheme() for n, a in policy.authenticators.items()}
    assert list(card.security_requirements) == [r.to_proto() for r in policy.requirements]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_valid_api_key_works_and_bad_ones_do_not(auth_server, binding):
    wire = auth_server.wire
    send = pb.SendMessageRequest(
        message=pb.Message(role=pb.ROLE_USER, message_id="k", parts=[pb.Part(text="hi")])
    )
    ok = await wire.call(binding, "SendMessage", send, auth_server.key("alice"))
    assert ok.ok, ok.body
    secret = auth_server.secrets["alice"]
    cases = {
        "revoked": ("API key revoked", auth_server.key("revoked")),
        "expired": ("API key expired", auth_server.key("expired")),
        "wrong": ("invalid API key", {"X-API-Key": secret[:-4] + "AAAA"}),
        "shapeless": ("invalid API key", {"X-API-Key": "letmein"}),
    }
    for name, (text, headers) in cases.items():
        reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), headers)
        assert_unauthenticated(reply, binding)
        assert text.encode() in reply.body, name
        for s in (*auth_server.secrets.values(), headers["X-API-Key"]):
            assert s.encode() not in reply.body and s not in (reply.challenge or ""), name


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_caller_without_the_required_scope_gets_permission_denied(auth_server, binding):
    reply = await auth_server.wire.call(binding, "ListTasks", pb.ListTasksRequest(), auth_server.key("dora"))
    assert not reply.ok
    assert reply.status == {"grpc": "PERMISSION_DENIED", "jsonrpc": 200, "rest": 403}[binding]
    assert reply.reason() == "PERMISSION_DENIED"
    assert b"a2a" in reply.body
    token = auth_server.issuer.mint(scope="read")
    reply = await auth_server.wire.call(
        binding, "ListTasks", pb.ListTasksRequest(), auth_server.bearer(token)
    )
    assert reply.reason() == "PERMISSION_DENIED"


def bad_tokens(srv: AuthServer) -> dict[str, tuple[str, str]]:
    """name → (token, the reason the server gives)."""
    issuer, now = srv.issuer, int(time.time())
    stranger = rsa_key("k-unknown")
    return {
        "expired": (issuer.mint(scope="a2a", iat=now - 7200, exp=now - 3600), "token expired"),
        "wrong audience": (issuer.mint(scope="a2a", aud="someone-else"), "token is for another audience"),
        "wrong issuer": (issuer.mint(scope="a2a", iss="https://evil.example/"), "token from another issuer"),
        "alg none": (issuer.unsigned(scope="a2a"), "signing algorithm not allowed"),
        "HS256 with the RSA public key": (issuer.hs256_with_public_key(), "signing algorithm not allowed"),
        "unknown kid": (issuer.mint(stranger, scope="a2a"), "unknown signing key"),
        "forged signature": (issuer.mint(scope="a2a")[:-6] + "AAAAAA", "invalid token signature"),
        "garbage": ("not.a.jwt", "malformed bearer token"),
        "no exp": (issuer.mint(scope="a2a", exp=None), "token lacks the exp claim"),
        # ES256, naming kid k1 (an RSA key of the JWKS): the key type must fit the algorithm.
        "EC signature naming an RSA kid": (
            issuer.mint(ec_key("k1"), scope="a2a"),
            "signing key does not fit the algorithm",
        ),
    }


@pytest.mark.parametrize("binding", BINDINGS)
async def test_bearer_jwts_from_the_oidc_issuer(auth_server, binding):
    wire = auth_server.wire
    good = auth_server.issuer.mint(scope="a2a openid")
    reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), auth_server.bearer(good))
    assert reply.ok, reply.body
    ec_token = auth_server.issuer.mint(auth_server.issuer.keys[1], scope="a2a")
    assert (await wire.call(binding, "ListTasks", pb.ListTasksRequest(), auth_server.bearer(ec_token))).ok
    for name, (token, text) in bad_tokens(auth_server).items():
        reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), auth_server.bearer(token))
        assert_unauthenticated(reply, binding)
        assert text.encode() in reply.body, (name, reply.body)
        assert 'error="invalid_token"' in reply.challenge, name
        assert token.encode() not in reply.body and token not in reply.challenge, name
        # The header part alone (a decoder would echo it) never appears either.
        assert token.split(".")[0].encode() not in reply.body, name


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_extended_card_is_for_authenticated_callers_filtered_by_scopes(auth_server, binding):
    wire, req = auth_server.wire, pb.GetExtendedAgentCardRequest()
    assert_unauthenticated(await wire.call(binding, "GetExtendedAgentCard", req), binding)

    def skills(reply) -> list[str]:
        assert reply.ok, reply.body
        if binding == "grpc":
            card = reply.message
        else:
            data = json.loads(reply.body)
            card = json_format.ParseDict(data.get("result", data), pb.AgentCard(), ignore_unknown_fields=True)
        assert "apiKey" in card.security_schemes
        return [s.id for s in card.skills]

    assert skills(await wire.call(binding, "GetExtendedAgentCard", req, auth_server.key("alice"))) == [
        "echo",
        "admin",
    ]
    assert skills(await wire.call(binding, "GetExtendedAgentCard", req, auth_server.key("erin"))) == ["echo"]
