"""The console's backend over real sockets: its JSON API and event streams in
front of real agents (ephemeral 127.0.0.1 ports), its guards, and the
``a2a-grpc console`` command. The page itself is driven in test_browser.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from a2a_grpc.agents._code_review import CodeReviewAgent
from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.auth import load_policy
from a2a_grpc.auth._apikeys import digest, new_secret
from a2a_grpc.cli import main
from a2a_grpc.console import console_app
from a2a_grpc.console._prom import parse, summary
from a2a_grpc.protocol.cardsign import CardSigner, TrustedKeys
from a2a_grpc.registry._server import RegistryConfig, RegistryServer
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb

REPO = Path(__file__).resolve().parents[2]
DIFF = (REPO / "examples" / "diffs" / "sql_injection.diff").read_bytes()
HEADERS = {"X-A2A-Console": "1"}


@asynccontextmanager
async def agent(config: ServerConfig | None = None, **kwargs: Any) -> AsyncIterator[A2AServer]:
    server = A2AServer(
        CodeReviewAgent(), InMemoryTaskStore(), config or ServerConfig(grpc_port=0, http_port=0), **kwargs
    )
    await server.start()
    try:
        yield server
    finally:
        await server.stop(0.2)


def url_of(server: A2AServer) -> str:
    return f"http://127.0.0.1:{server.http_port}"


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/"
    finally:
        await runner.cleanup()


@pytest.fixture
def page(tmp_path: Path) -> Path:
    """A stand-in for the built page (test_browser.py uses the real one)."""
    (tmp_path / "index.html").write_text("<!doctype html><title>console</title>")
    return tmp_path


class Console:
    """Calls a running console's API like the page does."""

    def __init__(self, base: str, session: aiohttp.ClientSession) -> None:
        self.base = base
        self.session = session

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        async with self.session.get(
            self.base + path, headers={**HEADERS, **kw.pop("headers", {})}, **kw
        ) as r:
            return r.status, await r.json()

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        async with self.session.post(
            self.base + path, json=body, headers={**HEADERS, **kw.pop("headers", {})}
        ) as r:
            return r.status, await r.json()

    async def events(self, path: str, body: Any = None, headers: dict[str, str] | None = None) -> list[Any]:
        method = self.session.post if body is not None else self.session.get
        async with method(self.base + path, json=body, headers={**HEADERS, **(headers or {})}) as r:
            assert r.status == 200, await r.text()
            assert r.headers["Content-Type"] == "text/event-stream"
            text = (await r.read()).decode()
        return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]

    async def send(self, parts: list[Any], **ids: str) -> list[Any]:
        return await self.events("api/send", {"message": {"role": "ROLE_USER", "parts": parts, **ids}})


@asynccontextmanager
async def console(target: str | Callable[[], str], page: Path, **kwargs: Any) -> AsyncIterator[Console]:
    async with (
        serving(console_app(target, static=page, **kwargs)) as base,
        aiohttp.ClientSession() as session,
    ):
        yield Console(base, session)


def states(events: list[Any]) -> list[str]:
    out = []
    for e in events:
        status = e.get("event", {}).get("task", e.get("event", {}).get("statusUpdate", {})).get("status")
        if status:
            out.append(status["state"].removeprefix("TASK_STATE_"))
    return out


def diff_part() -> dict[str, str]:
    import base64

    return {
        "raw": base64.b64encode(DIFF).decode(),
        "filename": "sql_injection.diff",
        "mediaType": "text/x-diff",
    }


async def test_api_calls_need_the_header_a_loopback_host_and_no_foreign_origin(page: Path) -> None:
    async with agent() as server, console(url_of(server), page) as c:
        async with c.session.get(c.base + "api/info") as r:
            assert r.status == 403 and (await r.json())["error"]["reason"] == "PERMISSION_DENIED"
        port = c.base.rsplit(":", 1)[1].rstrip("/")
        status, body = await c.get("api/info", headers={"Host": f"rebound.example:{port}"})
        assert status == 403 and "loopback" in body["error"]["message"]
        status, body = await c.get("api/info", headers={"Origin": "http://evil.example"})
        assert status == 403 and "cross-origin" in body["error"]["message"]
        status, body = await c.get("api/info", headers={"Origin": c.base.rstrip("/")})
        assert status == 200 and body["target"] == url_of(server)
        assert body["panels"] == {"deadLetters": False, "registry": False, "metrics": True}
        async with c.session.get(c.base) as r:  # the page itself needs no header
            assert r.status == 200 and "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]


def test_the_page_must_be_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("a2a_grpc.console._app.STATIC", tmp_path)
    result = CliRunner().invoke(main, ["console", "http://127.0.0.1:9", "--port", "0"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: the console's page is not built ({tmp_path} has no index.html): run make install (needs Node 20)"
    ]


def _signer(tmp_path: Path, stem: str) -> tuple[CardSigner, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = tmp_path / f"{stem}.key", tmp_path / f"{stem}.pub"
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
    return CardSigner.from_pem(private), public


async def test_the_card_with_its_signature_status(page: Path, tmp_path: Path) -> None:
    async with agent() as plain, console(url_of(plain), page) as c:
        status, body = await c.get("api/card")
        assert status == 200 and body["signature"]["state"] == "unsigned"
        assert body["card"]["name"] == "Code Review Agent" and "supportedInterfaces" in body["raw"]
    signer, public = _signer(tmp_path, "agent")
    config = ServerConfig(grpc_port=0, http_port=0, card_signer=signer)
    async with agent(config) as signed:
        async with console(url_of(signed), page, trusted_keys=TrustedKeys.from_files([public])) as c:
            assert (await c.get("api/card"))[1]["signature"]["state"] == "verified"
        async with console(url_of(signed), page) as c:
            assert (await c.get("api/card"))[1]["signature"]["state"] == "unverified"
        async with aiohttp.ClientSession() as s, s.get(url_of(signed) + "/.well-known/agent-card.json") as r:
            tampered = {**await r.json(), "name": "Someone Else"}

        async def serve_card(_: web.Request) -> web.Response:
            return web.json_response(tampered)

        app = web.Application()
        app.router.add_get("/.well-known/agent-card.json", serve_card)
        trusted = TrustedKeys.from_files([public])
        async with serving(app) as fake, console(fake.rstrip("/"), page, trusted_keys=trusted) as c:
            body = (await c.get("api/card"))[1]
            assert body["signature"]["state"] == "invalid" and body["card"]["name"] == "Someone Else"


async def test_a_conversation_continues_its_task_and_leaves_a_timeline(page: Path) -> None:
    async with agent() as server, console(url_of(server), page) as c:
        asked = await c.send([{"text": "Please review my change"}])
        assert asked[-1] == {"end": True} and states(asked)[-1] == "INPUT_REQUIRED"
        task = asked[0]["event"]["task"]
        answered = await c.send([diff_part()], taskId=task["id"], contextId=task["contextId"])
        assert states(answered)[-1] == "COMPLETED"
        assert {
            e["event"]["statusUpdate"]["taskId"] for e in answered if "statusUpdate" in e.get("event", {})
        } == {task["id"]}
        findings = [
            row
            for e in answered
            if "artifactUpdate" in e.get("event", {})
            for part in e["event"]["artifactUpdate"]["artifact"]["parts"]
            if "data" in part
            for row in part["data"]["findings"]
        ]
        assert [f["rule"] for f in findings] == ["S608"]
        status, body = await c.get(f"api/tasks/{task['id']}")
        assert status == 200 and body["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        timeline = body["timeline"]
        kinds = [(e["kind"], e.get("state", e.get("role", ""))) for e in timeline]
        assert kinds[0] == ("message", "user") and ("status", "TASK_STATE_INPUT_REQUIRED") in kinds
        assert kinds.index(("status", "TASK_STATE_INPUT_REQUIRED")) < kinds.index(("message", "user"), 1)
        assert kinds[-1] == ("status", "TASK_STATE_COMPLETED") and ("artifact", "") in kinds
        assert all(e["at"].endswith("Z") for e in timeline)
        status, body = await c.post(f"api/tasks/{task['id']}/cancel")
        assert status == 400 and body["error"]["reason"] == "TASK_NOT_CANCELABLE"
        terminal = await c.events(f"api/tasks/{task['id']}/subscribe")
        assert terminal[-1]["error"]["reason"] == "UNSUPPORTED_OPERATION"
        unknown = await c.send([{"text": "x"}], taskId="no-such-task")
        assert unknown == [{"error": {"reason": "TASK_NOT_FOUND", "message": unknown[0]["error"]["message"]}}]


async def test_the_task_list_filters_and_pages(page: Path) -> None:
    async with agent() as server, console(url_of(server), page) as c:
        ids = []
        for n in range(3):
            events = await c.send([{"text": f"Please review change {n}"}])
            ids.append(events[0]["event"]["task"]["id"])
        status, canceled = await c.post(f"api/tasks/{ids[1]}/cancel")
        assert status == 200 and canceled["status"]["state"] == "TASK_STATE_CANCELED"
        body = (await c.get("api/tasks?state=canceled"))[1]
        assert [t["id"] for t in body["tasks"]] == [ids[1]]
        body = (await c.get("api/tasks?state=input_required&pageSize=1"))[1]
        assert body["totalSize"] == 2 and len(body["tasks"]) == 1 and body["nextPageToken"]
        rest = (await c.get(f"api/tasks?state=input_required&pageSize=1&pageToken={body['nextPageToken']}"))[
            1
        ]
        assert {body["tasks"][0]["id"], rest["tasks"][0]["id"]} == {ids[0], ids[2]}
        context = body["tasks"][0]["contextId"]
        assert [t["contextId"] for t in (await c.get(f"api/tasks?contextId={context}"))[1]["tasks"]] == [
            context
        ]
        assert (await c.get("api/tasks?updatedAfter=2999-01-01T00:00:00Z"))[1]["tasks"] == []
        status, body = await c.get("api/tasks?updatedAfter=yesterday")
        assert status == 400 and body["error"]["reason"] == "INVALID_PARAMS"
        status, body = await c.get("api/tasks/no-such-task")
        assert status == 404 and body["error"]["reason"] == "TASK_NOT_FOUND"
        status, body = await c.get(f"api/tasks/{ids[0]}/push-configs")
        assert status == 400 and body["error"]["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"


async def test_an_a2a_0_3_agent(page: Path) -> None:
    """A card that offers only A2A 0.3 (JSON-RPC): the console speaks 0.3, and
    without ListTasks it lists the tasks it has seen."""
    async with agent() as server:
        async with aiohttp.ClientSession() as s:
            card_url = url_of(server) + "/.well-known/agent-card.json"
            async with s.get(card_url, headers={"A2A-Version": "0.3"}) as r:
                card = await r.json()
        card.pop("supportedInterfaces")
        card["additionalInterfaces"] = [
            i for i in card["additionalInterfaces"] if i["transport"] == "JSONRPC"
        ]

        async def serve_card(_: web.Request) -> web.Response:
            return web.json_response(card)

        app = web.Application()
        app.router.add_get("/.well-known/agent-card.json", serve_card)
        async with serving(app) as fake, console(fake.rstrip("/"), page) as c:
            events = await c.send([{"text": "Please review my change"}])
            assert states(events)[-1] == "INPUT_REQUIRED"
            info = (await c.get("api/info"))[1]
            assert info["interface"] == {
                "binding": "JSONRPC",
                "url": url_of(server) + "/",
                "protocolVersion": "0.3",
            }
            body = (await c.get("api/tasks"))[1]
            assert "fallback" in body and [t["id"] for t in body["tasks"]] == [
                events[0]["event"]["task"]["id"]
            ]


async def test_forwarded_credentials_keep_tasks_the_callers(page: Path, tmp_path: Path) -> None:
    key_id, secret = new_secret()
    other_id, other = new_secret()
    config = tmp_path / "auth.toml"
    config.write_text(
        '[schemes.apiKey]\ntype = "apiKey"\nheader = "X-API-Key"\n'
        f'[[schemes.apiKey.keys]]\nid = "{key_id}"\nsubject = "alice"\nhash = "{digest(secret)}"\n'
        f'[[schemes.apiKey.keys]]\nid = "{other_id}"\nsubject = "bob"\nhash = "{digest(other)}"\n'
    )
    server_config = ServerConfig(grpc_port=0, http_port=0, auth=load_policy(config))
    async with agent(server_config) as server, console(url_of(server), page, forward_auth=True) as c:
        status, body = await c.get("api/tasks")
        assert status == 401 and body["error"]["reason"] == "UNAUTHENTICATED"
        alice = {"X-API-Key": secret}
        events = await c.events(
            "api/send", {"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}]}}, alice
        )
        task_id = events[0]["event"]["task"]["id"]
        assert [t["id"] for t in (await c.get("api/tasks", headers=alice))[1]["tasks"]] == [task_id]
        assert (await c.get("api/tasks", headers={"X-API-Key": other}))[1]["tasks"] == []
        assert (await c.get("api/info", headers=alice))[1]["auth"] == "forwarded"


async def test_dead_letters_need_a_store(page: Path) -> None:
    async with agent() as server:
        async with console(url_of(server), page) as c:
            status, body = await c.get("api/dead-letters")
            assert status == 400 and "--store" in body["error"]["message"]
        async with console(url_of(server), page, store=server.store) as c:
            assert (await c.get("api/dead-letters"))[1] == {"deadLetters": []}
            status, body = await c.post("api/dead-letters/7/retry")
            assert status == 400 and body["error"]["message"] == "no dead letter 7"


async def _until(check: Callable[[], Awaitable[Any]], timeout: float = 20.0) -> Any:
    for _ in range(int(timeout / 0.2)):
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.2)
    pytest.fail("not within the time")


async def test_the_registry_panel_keeps_health_history(page: Path, tmp_path: Path) -> None:
    cfg = RegistryConfig(
        grpc_port=0, http_port=0, store_url="memory", allow_private=True, check_interval_seconds=0.3,
        check_jitter=0.0, failure_threshold=1,
    )  # fmt: skip
    async with RegistryServer(cfg) as registry, agent() as server:
        from a2a_grpc.registry import RegistryClient

        async with RegistryClient(registry.grpc_target) as client:
            await client.register(url_of(server))
        async with agent() as target, console(url_of(target), page, registry_url=registry.grpc_target) as c:

            async def healthy() -> Any:
                agents = (await c.get("api/registry"))[1]["agents"]
                return (
                    agents
                    and agents[0]["history"]
                    and agents[0]["history"][-1]["health"] == "HEALTH_STATE_HEALTHY"
                )

            await _until(healthy)
            await server.stop(0.1)

            async def unhealthy() -> Any:
                agent = (await c.get("api/registry"))[1]["agents"][0]
                return agent if agent["history"][-1]["health"] == "HEALTH_STATE_UNHEALTHY" else None

            got = await _until(unhealthy)
            assert got["name"] == "Code Review Agent" and got["lastError"]
            assert [p["health"] for p in got["history"]][-2:] == [
                "HEALTH_STATE_HEALTHY",
                "HEALTH_STATE_UNHEALTHY",
            ]


METRICS = """\
# HELP grpc_server_handled_total RPCs completed.
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{binding="grpc",grpc_code="OK",grpc_method="SendMessage"} 2.0
grpc_server_handled_total{binding="rest",grpc_code="OK",grpc_method="SendMessage"} 2.0
grpc_server_handled_total{binding="grpc",grpc_code="NOT_FOUND",grpc_method="GetTask"} 1.0
a2a_task_transitions_total{state="working"} 4.0
a2a_task_transitions_total{state="input_required"} 1.0
a2a_push_outbox_rows{state="pending"} 3.0
a2a_push_outbox_rows{state="dead"} 1.0
a2a_executions_active 2.0
weird{label="a \\"quoted\\" \\\\ value"} 1.5 1700000000000
not a sample line
a2a_tasks_created_total{state="submitted"} NaN
"""


def test_the_prometheus_text_is_summed_up() -> None:
    samples = list(parse(METRICS))
    assert ("weird", {"label": 'a "quoted" \\ value'}, 1.5) in samples
    got = summary(samples)
    assert got["requests"] == {"grpc": 3.0, "rest": 2.0} and got["errors"] == {"grpc": 1.0, "rest": 0.0}
    assert got["transitions"] == {"working": 4.0, "input_required": 1.0}
    assert got["outbox"] == {"pending": 3.0, "dead": 1.0} and got["executionsActive"] == 2.0
    assert got["created"] != got["created"] or got["created"] == 0.0  # NaN counts as nothing


async def test_metrics_from_the_target(page: Path) -> None:
    async with agent(ServerConfig(grpc_port=0, http_port=0, metrics=True)) as server:
        async with console(url_of(server), page) as c:
            await c.send([{"text": "Please review my change"}])
            body = (await c.get("api/metrics"))[1]
            assert body["created"] == 1.0 and body["transitions"]["input_required"] == 1.0
            assert sum(body["requests"].values()) >= 1
        async with console(url_of(server), page, metrics_url=None) as c:
            assert (await c.get("api/metrics"))[0] == 400


async def test_an_agent_without_streaming_is_sent_send_message(page: Path) -> None:
    echo = EchoAgent()
    echo.card = pb.AgentCard()
    echo.card.CopyFrom(EchoAgent().card)
    echo.card.capabilities.streaming = False
    server = A2AServer(echo, InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await server.start()
    try:
        async with console(url_of(server), page) as c:
            events = await c.send([{"text": "hello"}])
    finally:
        await server.stop(0.2)
    assert states(events) == ["COMPLETED"] and events[-1] == {"end": True}
    assert events[0]["event"]["task"]["artifacts"][0]["parts"][0]["text"] == "hello"
