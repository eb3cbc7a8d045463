"""The auth configuration file, ``a2a-grpc auth new-key`` / ``revoke-key``,
and start-up refusing a configuration the server could not enforce."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from a2a_grpc.auth import AuthConfigError, BadCredential, load_policy
from a2a_grpc.auth._policy import policy_from_mapping
from a2a_grpc.cli import main
from a2a_grpc.context import CallContext
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.interop.agents import InteropAgent


def call_with(**headers: str) -> CallContext:
    return CallContext(
        method="/lf.a2a.v1.A2AService/ListTasks", metadata={k.lower(): [v] for k, v in headers.items()}
    )


async def test_new_key_adds_a_digest_and_prints_the_secret_once_as_the_last_line(tmp_path: Path):
    path = tmp_path / "auth.toml"
    runner = CliRunner()
    made = runner.invoke(
        main, ["auth", "new-key", "--config", str(path), "--subject", "zed", "--scope", "a2a", "--scope", "x"]
    )
    assert made.exit_code == 0, made.output
    secret = made.output.strip().splitlines()[-1]
    assert secret.startswith("a2a_") and len(secret) > 40
    text = path.read_text()
    assert secret not in text and "sha256:" in text and 'subject = "zed"' in text
    second = runner.invoke(
        main, ["auth", "new-key", "--config", str(path), "--subject", "yan", "--tenant", "acme"]
    )
    assert second.exit_code == 0, second.output
    other = second.output.strip().splitlines()[-1]

    policy = load_policy(path)
    keys = policy.authenticators["apiKey"]
    principal = await keys.authenticate(call_with(**{"X-API-Key": secret}))
    assert (principal.subject, principal.scopes, principal.tenant) == ("zed", frozenset({"a2a", "x"}), None)
    assert (await keys.authenticate(call_with(**{"X-API-Key": other}))).tenant == "acme"

    key_id = secret[4:16]
    revoked = runner.invoke(main, ["auth", "revoke-key", "--config", str(path), key_id])
    assert revoked.exit_code == 0, revoked.output
    with pytest.raises(BadCredential, match="revoked"):
        await load_policy(path).authenticators["apiKey"].authenticate(call_with(**{"X-API-Key": secret}))
    assert (
        await load_policy(path).authenticators["apiKey"].authenticate(call_with(**{"X-API-Key": other}))
    ).subject == "yan"


JWT = {
    "type": "jwt",
    "issuer": "https://idp.example/",
    "audience": "a",
    "jwks_url": "https://idp.example/jwks",
}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"schemes": {"k": {"type": "apiKey"}}, "requirements": [{"nope": []}]},
            "names nope, which no authenticator serves",
        ),
        ({"schemes": {"k": {"type": "apiKey"}}, "requirements": [{}]}, "anonymous callers"),
        ({"schemes": {"j": {**JWT, "algorithms": ["HS256"]}}}, "HS256 not allowed"),
        ({"schemes": {"j": {**JWT, "algorithms": ["none"]}}}, "none not allowed"),
        ({"schemes": {"j": {k: v for k, v in JWT.items() if k != "audience"}}}, "audience is required"),
        ({"schemes": {"j": {**JWT, "jwks_url": "http://idp.example/jwks"}}}, "https://"),
        ({"schemes": {"j": {**JWT, "discovery_url": "https://idp.example/d"}}}, "exactly one of"),
        ({"schemes": {"k": {"type": "apiKey", "headr": "X"}}}, "unknown setting(s) headr"),
        ({"schemes": {"k": {"type": "basic"}}}, "type must be one of"),
        ({"schemes": {}}, "at least one scheme"),
        (
            {"schemes": {"k": {"type": "apiKey", "keys": [{"id": "short", "subject": "s", "hash": "x"}]}}},
            "key id",
        ),
    ],
)
def test_a_configuration_the_server_could_not_enforce_is_refused(config, message):
    with pytest.raises(AuthConfigError) as exc:
        policy_from_mapping(config)
    assert message in str(exc.value)


def test_serve_refuses_to_start_on_a_bad_auth_file(tmp_path: Path):
    path = tmp_path / "bad.toml"
    path.write_text('[schemes.k]\ntype = "apiKey"\n\n[[requirements]]\ncorp = []\n')
    result = CliRunner().invoke(main, ["serve", "--auth", str(path), "--store", "memory"])
    assert result.exit_code == 1
    assert "corp, which no authenticator serves" in result.output
    path.write_text("[schemes.k\n")
    result = CliRunner().invoke(main, ["serve", "--auth", str(path), "--store", "memory"])
    assert result.exit_code == 1 and "not valid TOML" in result.output


async def test_without_auth_the_server_says_so_in_one_start_up_line(caplog):
    caplog.set_level(logging.INFO, logger="a2a_grpc.server")
    server = A2AServer(InteropAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=None))
    await server.start()
    await server.stop(0)
    lines = [r.getMessage() for r in caplog.records if "authentication" in r.getMessage()]
    assert lines == ["authentication: none — every caller is anonymous and sees every task (see --auth)"]
    assert not server.card.security_schemes and not server.card.security_requirements


def test_the_complete_example_of_docs_auth_md_loads_and_describes_the_card_it_shows():
    import json
    import re
    import tomllib

    from google.protobuf import json_format

    from a2a_grpc.types import pb

    text = (Path(__file__).parents[2] / "docs" / "auth.md").read_text()
    toml_block = re.search(r"```toml\n(.*?)```", text, re.S)[1]
    json_block = re.search(r"From it the public card says:\n\n```json\n(.*?)```", text, re.S)[1]
    policy = policy_from_mapping(tomllib.loads(toml_block))
    assert set(policy.authenticators) == {"apiKey", "corp"} and policy.filter_extended_card
    keys = policy.authenticators["apiKey"].keys
    assert {k.subject: (k.revoked, k.tenant) for k in keys.values()} == {
        "alice": (False, None),
        "bob": (False, "acme"),
        "old-ci": (True, None),
    }
    given = pb.AgentCard()
    card = policy.with_schemes(given)
    assert given == pb.AgentCard()  # a card decorator: the card it is given is not changed
    shown = json.loads("{" + json_block + "}")
    described = json_format.MessageToDict(card)
    assert described["securitySchemes"] == shown["securitySchemes"]
    assert described["securityRequirements"] == shown["securityRequirements"]
    assert load_policy(Path(__file__).parents[2] / "examples" / "auth" / "auth.toml").requirements
