"""A2AClient and the CLI attach the credential the card's schemes ask for."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from a2a_grpc.client import A2AClient, Credentials
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.auth.conftest import AuthServer
from tests.auth.wire import BINDINGS

pytestmark = pytest.mark.asyncio(loop_scope="package")


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_client_reads_the_card_and_sends_the_matching_credential(auth_server: AuthServer, binding):
    url = auth_server.wire.http
    for creds in (
        Credentials(api_key=auth_server.secrets["erin"]),
        Credentials(token=auth_server.issuer.mint(scope="a2a")),
    ):
        async with await A2AClient.connect(url, bindings=[binding], credentials=creds) as client:
            sent = await client.send_message("hello")
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED
            assert (await client.get_task(sent.task.id)).id == sent.task.id
    async with await A2AClient.connect(url, bindings=[binding]) as anonymous:
        with pytest.raises(A2AError) as exc:
            await anonymous.list_tasks()
        assert exc.value.code is ErrorCode.UNAUTHENTICATED


async def test_credentials_follow_the_requirements_in_order():
    card = pb.AgentCard()
    card.security_schemes["k"].api_key_security_scheme.name = "X-Key"
    card.security_schemes["k"].api_key_security_scheme.location = "header"
    card.security_schemes["oidc"].open_id_connect_security_scheme.open_id_connect_url = "https://idp/d"
    card.security_requirements.add().schemes["k"].list.append("a2a")
    card.security_requirements.add().schemes["oidc"]
    assert Credentials(api_key="s").headers_for(card) == {"X-Key": "s"}
    assert Credentials(token="t").headers_for(card) == {"Authorization": "Bearer t"}
    assert Credentials(api_key="s", token="t").headers_for(card) == {"X-Key": "s"}
    assert Credentials(api_key="s").headers_for(pb.AgentCard()) == {}  # the agent asked for nothing
    grpc_only = Credentials(api_key="s", token="t").default_headers()
    assert grpc_only == {"X-API-Key": "s", "Authorization": "Bearer t"}


async def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_grpc.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def test_the_cli_takes_api_key_and_token_options_and_env_vars(auth_server: AuthServer):
    url, grpc_url = auth_server.wire.http, f"grpc://127.0.0.1:{auth_server.server.grpc_port}"
    code, out = await cli("task", "list", url)
    assert code == 1 and "error: UNAUTHENTICATED" in out, out
    code, out = await cli("task", "list", grpc_url)
    assert code == 1 and "error: UNAUTHENTICATED" in out, out
    code, out = await cli("send", url, "--api-key", auth_server.secrets["erin"], "hi")
    assert code == 0 and "COMPLETED" in out, out
    code, out = await cli("task", "list", grpc_url, env={"A2A_GRPC_API_KEY": auth_server.secrets["erin"]})
    assert code == 0, out
    code, out = await cli(
        "task", "list", url, "--binding", "rest", "--token", auth_server.issuer.mint(scope="a2a")
    )
    assert code == 0, out
    code, out = await cli("task", "list", url, "--binding", "jsonrpc", env={"A2A_GRPC_TOKEN": "garbage"})
    assert code == 1 and "malformed bearer token" in out and "garbage" not in out, out
