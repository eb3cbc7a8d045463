"""The mTLS security scheme of ``--auth``: a verified client certificate is the
caller (issue 11 item 1). Its SPIFFE id (or DNS SAN) owns the tasks it makes,
another certificate's caller sees them as missing, the card declares a
``MutualTlsSecurityScheme``, and a server without client certificates refuses
the scheme at start-up."""

from __future__ import annotations

import pytest

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.auth._mtls import MtlsAuthenticator
from a2a_grpc.auth._policy import policy_from_mapping
from a2a_grpc.bindings.tls import ClientTLS, PeerIdentity, ServerTLS
from a2a_grpc.client import A2AClient
from a2a_grpc.context import CallContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.tls.certs import SPIFFE_ID, Pki
from tests.tls.conftest import running

BINDINGS = ("grpc", "jsonrpc", "rest")
POLICY = {"schemes": {"clientCert": {"type": "mtls", "scopes": ["tasks"]}}}


def _url(server: A2AServer) -> str:
    return f"https://127.0.0.1:{server.http_port}"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_certificate_owns_its_tasks(pki: Pki, binding: str) -> None:
    # grpc-core asks for client certificates only when it requires them (docs/tls.md).
    tls = ServerTLS(pki.server_cert, pki.server_key, client_ca=pki.ca, require_client_cert=True)
    async with running(tls=tls, auth=policy_from_mapping(POLICY)) as (server, recorder):
        card = server.card
        assert card.security_schemes["clientCert"].HasField("mtls_security_scheme")
        alice = ClientTLS(ca=pki.ca, cert=pki.client_cert, key=pki.client_key)
        bob = ClientTLS(ca=pki.ca, cert=pki.dns_cert, key=pki.dns_key)
        async with await A2AClient.connect(_url(server), bindings=[binding], tls=alice) as client:
            task = (await client.send_message("hello")).task
            assert (await client.get_task(task.id)).id == task.id
        async with await A2AClient.connect(_url(server), bindings=[binding], tls=bob) as client:
            with pytest.raises(A2AError) as hidden:
                await client.get_task(task.id)
            assert hidden.value.code is ErrorCode.TASK_NOT_FOUND
            assert (await client.list_tasks()).total_size == 0
    # The identity reached the chain (the task owner is its principal).
    assert any(identity is not None and identity.name == SPIFFE_ID for _rpc, identity in recorder.calls)


async def test_the_principal_of_a_certificate() -> None:
    auth = MtlsAuthenticator.from_config("clientCert", {"type": "mtls", "scopes": ["tasks"]})
    call = CallContext("/lf.a2a.v1.A2AService/GetTask", peer_identity=PeerIdentity("CN=alice", SPIFFE_ID))
    assert auth.presented(call)
    principal = await auth.authenticate(call)
    assert (principal.issuer, principal.subject) == ("spiffe://example.org", SPIFFE_ID)
    assert principal.scopes == {"tasks"} and principal.scheme == "clientCert"
    dns = CallContext("/x", peer_identity=PeerIdentity("CN=bob", dns_names=("bob.example.org",)))
    bob = await auth.authenticate(dns)
    assert (bob.issuer, bob.subject) == ("urn:a2a-grpc:mtls:clientCert", "bob.example.org")
    assert not auth.presented(CallContext("/x"))


async def test_an_mtls_scheme_needs_client_certificates(pki: Pki) -> None:
    config = ServerConfig(
        grpc_port=0,
        http_port=0,
        tls=ServerTLS(pki.server_cert, pki.server_key),  # no client CA
        auth=policy_from_mapping(POLICY),
    )
    with pytest.raises(ValueError, match="needs TLS with client certificates"):
        A2AServer(EchoAgent(), InMemoryTaskStore(), config)
