"""Skill scopes (issue 11 item 4) on every binding, over real sockets.

The agent names the skill of each message (``select_skill``); the auth file
says the ``admin`` skill needs scope ``admin``. Erin (scope ``a2a`` only) is
refused PERMISSION_DENIED on every binding and nothing of hers is stored;
alice (``admin``) runs it; the card's admin skill declares the requirement.
"""

from __future__ import annotations

import json

import pytest

from a2a_grpc.auth import AuthConfigError, load_policy
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.auth.test_limits import config_text, error_status, send, task_of
from tests.auth.wire import BINDINGS, Wire
from tests.interop.agents import InteropAgent


class SkilledAgent(InteropAgent):
    """Echo, with an ``admin`` skill for messages starting with "admin"."""

    card = pb.AgentCard()
    card.CopyFrom(InteropAgent.card)
    card.skills.add(id="admin", name="admin", description="admin things", tags=["admin"])

    async def select_skill(self, message: pb.Message) -> str | None:
        text = " ".join(p.text for p in message.parts)
        return "admin" if text.startswith("admin") else None


class SilentAgent(InteropAgent):
    """The admin skill on the card, but no select_skill."""

    card = SkilledAgent.card


def scoped_config(tmp_path, extra: str = "") -> tuple[str, dict[str, str]]:
    text, secrets = config_text({}, {"alice": {"scopes": ["a2a", "admin"]}, "erin": {"scopes": ["a2a"]}})
    text = text.replace("[limits]\n", '[skills.admin]\nscopes = ["admin"]\n' + extra)
    path = tmp_path / "auth.toml"
    path.write_text(text)
    return str(path), secrets


async def test_a_caller_without_the_skills_scope_is_refused_and_nothing_is_stored(tmp_path):
    path, secrets = scoped_config(tmp_path)
    server = A2AServer(
        SkilledAgent(),
        InMemoryTaskStore(),
        ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, grace_seconds=0.2, auth=load_policy(path)),
    )
    await server.start()
    wire = Wire(f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}")
    alice, erin = ({"X-API-Key": secrets[n]} for n in ("alice", "erin"))
    try:
        for binding in BINDINGS:
            for rpc in ("SendMessage", "SendStreamingMessage"):
                reply = await wire.call(binding, rpc, send("admin reset"), erin)
                assert not reply.ok
                assert reply.status == {"grpc": "PERMISSION_DENIED", "jsonrpc": 200, "rest": 403}[binding]
                reason, metadata, _ = error_status(reply, binding)
                assert (reason, metadata) == (
                    "PERMISSION_DENIED",
                    {"skill": "admin", "missingScopes": "admin"},
                )
            ok = await wire.call(binding, "SendMessage", send("hello"), erin)  # no scoped skill
            assert task_of(ok, binding).status.state == pb.TASK_STATE_COMPLETED
            done = await wire.call(binding, "SendMessage", send("admin reset"), alice)
            assert task_of(done, binding).status.state == pb.TASK_STATE_COMPLETED
        listed = await wire.call("grpc", "ListTasks", pb.ListTasksRequest(), erin)
        texts = [t.history[0].parts[0].text for t in listed.message.tasks]
        assert sorted(texts) == ["hello"] * 3  # the refused messages stored nothing
        async with wire.session.get(wire.http + "/.well-known/agent-card.json") as resp:
            card = json.loads(await resp.read())
        admin = next(s for s in card["skills"] if s["id"] == "admin")
        assert admin["securityRequirements"] == [{"schemes": {"apiKey": {"list": ["admin"]}}}]
    finally:
        await wire.close()
        await server.stop(0.2)


def test_a_scoped_skill_the_card_lacks_or_no_selector_stops_the_server(tmp_path):
    path, _ = scoped_config(tmp_path, '[skills.nosuch]\nscopes = ["x"]\n')
    with pytest.raises(AuthConfigError, match=r"skills\.nosuch"):
        A2AServer(SkilledAgent(), InMemoryTaskStore(), ServerConfig(auth=load_policy(path)))
    path, _ = scoped_config(tmp_path)
    with pytest.raises(AuthConfigError, match="select_skill"):
        A2AServer(SilentAgent(), InMemoryTaskStore(), ServerConfig(auth=load_policy(path)))
