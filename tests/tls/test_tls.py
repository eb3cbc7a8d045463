"""TLS and mTLS on both ports, every binding, over real sockets (docs/tls.md).

A test CA made at test time (tests/tls/certs.py) issues the server's
certificate, a client certificate naming a SPIFFE id, one naming only a DNS
SAN, and — from a second, untrusted CA — a rogue client certificate.
"""

from __future__ import annotations

import pytest

from a2a_grpc.bindings.tls import ClientTLS, PeerIdentity, ServerTLS
from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError, ErrorCode
from tests.tls.certs import SPIFFE_ID, Pki
from tests.tls.conftest import cli, running

BINDINGS = ("grpc", "jsonrpc", "rest")


def _tls(pki: Pki, **kw: object) -> ServerTLS:
    return ServerTLS(pki.server_cert, pki.server_key, **kw)  # type: ignore[arg-type]


def _url(server: object, binding: str) -> str:
    """The card's URL of ``binding`` (short name)."""
    want = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}[binding]
    return next(i.url for i in server.card.supported_interfaces if i.protocol_binding == want)  # type: ignore[attr-defined]


async def _echo(client: A2AClient) -> str:
    response = await client.send_message("over tls")
    return (
        response.task.artifacts[0].parts[0].text
        if response.HasField("task")
        else response.message.parts[0].text
    )


@pytest.mark.parametrize("binding", BINDINGS)
async def test_tls_serves_every_binding_and_the_card_says_https(pki: Pki, binding: str) -> None:
    async with running(tls=_tls(pki)) as (server, recorder):
        urls = [i.url for i in server.card.supported_interfaces]
        assert urls[1].startswith("https://127.0.0.1:") and urls[2].startswith("https://127.0.0.1:")
        base = f"https://127.0.0.1:{server.http_port}"
        async with await A2AClient.connect(base, bindings=[binding], tls=ClientTLS(ca=pki.ca)) as client:
            assert client.binding == binding
            assert "over tls" in await _echo(client)
        # No client CA configured: identities are not read at all.
        assert recorder.calls and all(identity is None for _, identity in recorder.calls)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_mtls_identity_reaches_the_interceptors(pki: Pki, binding: str) -> None:
    tls = _tls(pki, client_ca=pki.ca, require_client_cert=True)
    async with running(tls=tls) as (server, recorder):
        base = f"https://127.0.0.1:{server.http_port}"
        client_tls = ClientTLS(ca=pki.ca, cert=pki.client_cert, key=pki.client_key)
        async with await A2AClient.connect(base, bindings=[binding], tls=client_tls) as client:
            await _echo(client)
            task_list = await client.list_tasks()
            assert task_list.tasks
    rpcs = [rpc for rpc, _ in recorder.calls]
    assert rpcs == ["SendMessage", "ListTasks"]
    for _, identity in recorder.calls:
        assert isinstance(identity, PeerIdentity)
        assert identity.spiffe_id == SPIFFE_ID
        assert identity.name == SPIFFE_ID
        assert identity.dns_names == ("alice.example.org",)
        assert identity.subject == "O=a2a-grpc tests,CN=alice"


async def test_identity_without_spiffe_id_is_the_dns_san(pki: Pki) -> None:
    async with running(tls=_tls(pki, client_ca=pki.ca, require_client_cert=True)) as (server, recorder):
        client_tls = ClientTLS(ca=pki.ca, cert=pki.dns_cert, key=pki.dns_key)
        async with A2AClient.for_interface(_url(server, "grpc"), "grpc", tls=client_tls) as client:
            await _echo(client)
    ((_, identity),) = recorder.calls
    assert identity.spiffe_id == "" and identity.name == "bob.example.org"


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("who", ["rogue", "nobody"])
async def test_untrusted_or_missing_client_cert_is_refused(pki: Pki, binding: str, who: str) -> None:
    async with running(tls=_tls(pki, client_ca=pki.ca, require_client_cert=True)) as (server, recorder):
        if who == "rogue":
            client_tls = ClientTLS(ca=pki.ca, cert=pki.rogue_cert, key=pki.rogue_key)
        else:
            client_tls = ClientTLS(ca=pki.ca)
        async with A2AClient.for_interface(
            _url(server, binding), binding, tls=client_tls, timeout=5
        ) as client:
            with pytest.raises(A2AError) as caught:
                await client.get_task("any")
        assert caught.value.code == ErrorCode.UNAVAILABLE
        assert "client certificate" in caught.value.message
        assert recorder.calls == []  # refused in the handshake: nothing reached the chain


@pytest.mark.parametrize("binding", BINDINGS)
async def test_plaintext_client_to_a_tls_port_fails_cleanly(pki: Pki, binding: str) -> None:
    async with running(tls=_tls(pki)) as (server, recorder):
        url = _url(server, binding)
        url = "grpc://" + url if binding == "grpc" else url.replace("https://", "http://")
        async with A2AClient.for_interface(url, binding, timeout=3) as client:
            with pytest.raises(A2AError) as caught:
                await client.get_task("any")
        assert caught.value.code == ErrorCode.UNAVAILABLE
        assert (
            "use grpcs://" in caught.value.message
            if binding == "grpc"
            else "use https://" in caught.value.message
        )
        assert recorder.calls == []


async def test_optional_client_certs_http_and_the_mtls_grpc_port(pki: Pki) -> None:
    """Without --require-client-cert: HTTP takes a certificate when offered,
    the main gRPC port never asks, the second gRPC port requires one; the
    card lists that port as a second GRPC interface."""
    tls = _tls(pki, client_ca=pki.ca, mtls_grpc_port=0)
    async with running(tls=tls) as (server, recorder):
        interfaces = [(i.protocol_binding, i.url) for i in server.card.supported_interfaces]
        assert interfaces[-1] == ("GRPC", f"127.0.0.1:{server.mtls_grpc_port}")
        anonymous = ClientTLS(ca=pki.ca)
        alice = ClientTLS(ca=pki.ca, cert=pki.client_cert, key=pki.client_key)
        for binding, client_tls in (("rest", anonymous), ("rest", alice), ("grpc", alice)):
            async with A2AClient.for_interface(_url(server, binding), binding, tls=client_tls) as client:
                await client.list_tasks()
        mtls_url = interfaces[-1][1]
        async with A2AClient.for_interface(mtls_url, "grpc", tls=alice) as client:
            await client.list_tasks()
        async with A2AClient.for_interface(mtls_url, "grpc", tls=anonymous, timeout=5) as client:
            with pytest.raises(A2AError):
                await client.list_tasks()
    names = [identity.name if identity else None for _, identity in recorder.calls]
    assert names == [None, SPIFFE_ID, None, SPIFFE_ID]


async def test_cli_over_mtls(pki: Pki) -> None:
    async with running(tls=_tls(pki, client_ca=pki.ca, require_client_cert=True)) as (server, recorder):
        base = f"https://127.0.0.1:{server.http_port}"
        mtls = ("--ca", pki.ca, "--cert", pki.client_cert, "--key", pki.client_key)
        for binding in BINDINGS:
            result = await cli("send", base, "hello", "--binding", binding, *mtls)
            assert result.exit_code == 0, result.output
            assert "hello" in result.output
        refused = await cli("card", base, "--ca", pki.ca)
        assert refused.exit_code == 1
        assert "UNAVAILABLE" in refused.output and "client certificate" in refused.output
    assert [identity.name for _, identity in recorder.calls] == [SPIFFE_ID] * 3


async def test_tls_options_are_checked(pki: Pki) -> None:
    with pytest.raises(ValueError, match="--tls-client-ca"):
        _tls(pki, require_client_cert=True).check()
    with pytest.raises(ValueError, match="unusable"):
        ServerTLS(pki.server_cert, pki.client_key).check()  # key of another certificate
    result = await cli("serve", "--tls-cert", pki.server_cert, "--grpc-port", "0", "--http-port", "0")
    assert result.exit_code == 1 and "--tls-key" in result.output
    result = await cli("card", "https://127.0.0.1:1", "--cert", pki.client_cert)
    assert result.exit_code == 2 and "--key" in result.output


async def test_grpcs_url_without_a_card(pki: Pki) -> None:
    """``grpcs://host:port`` names a TLS gRPC endpoint directly; reflection
    confirms the service over the same TLS channel."""
    async with running(tls=_tls(pki, client_ca=pki.ca, require_client_cert=True)) as (server, recorder):
        client_tls = ClientTLS(ca=pki.ca, cert=pki.client_cert, key=pki.client_key)
        async with await A2AClient.connect(f"grpcs://127.0.0.1:{server.grpc_port}", tls=client_tls) as client:
            await client.list_tasks()
    assert [identity.name for _, identity in recorder.calls] == [SPIFFE_ID]


async def test_server_refuses_an_unusable_tls_configuration(pki: Pki) -> None:
    from a2a_grpc.agents._echo import EchoAgent
    from a2a_grpc.server import A2AServer, ServerConfig
    from a2a_grpc.store._memory import InMemoryTaskStore

    config = ServerConfig(grpc_port=0, http_port=0, tls=ServerTLS(pki.server_cert, pki.client_key))
    server = A2AServer(EchoAgent(), InMemoryTaskStore(), config)
    with pytest.raises(ValueError, match="unusable"):
        await server.start()
