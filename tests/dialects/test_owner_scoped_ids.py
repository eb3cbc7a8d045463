"""Client-chosen task ids are per owner (docs/decisions.md): on the routes that
let a client name a new task's id — the tutorial's ``/tasks/send`` routes and
the v0.1 JSON-RPC ``tasks/send`` — a message from a stranger naming an id
another caller holds reads exactly like one naming a fresh random id would
for that stranger. It does not learn that the id exists, does not make the
owner's task busy, and does not end the owner's streams; the owner's task is
untouched.

Real server, two callers authenticated by API key, over real sockets.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_grpc.auth import load_policy
from a2a_grpc.auth._apikeys import digest, new_secret
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import Event, pb


class _Agent(AgentExecutor):
    """``ask``: INPUT_REQUIRED (the next message completes it); ``hold NAME``:
    WORKING, then waits for gate NAME and completes; ``refuse``: fails before
    any event (nothing stored); anything else: an artifact echoing the text,
    COMPLETED."""

    card = pb.AgentCard(
        name="scoped",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.holding: dict[str, asyncio.Event] = {}

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    def held(self, name: str) -> asyncio.Event:
        return self.holding.setdefault(name, asyncio.Event())

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        words = ctx.text().split()
        if ctx.task is not None and ctx.task.status.state == pb.TASK_STATE_INPUT_REQUIRED:
            yield ctx.artifact([f"then: {ctx.text()}"], artifact_id="answer")
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif words[:1] == ["ask"]:
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "and then?")
        elif words[:1] == ["hold"]:
            yield ctx.status(pb.TASK_STATE_WORKING, "holding")
            self.held(words[1]).set()
            await self.gate(words[1]).wait()
            yield ctx.status(pb.TASK_STATE_COMPLETED, "released")
        elif words[:1] == ["refuse"]:
            raise A2AError(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, "not that")
        else:
            yield ctx.artifact([ctx.text()], artifact_id="echo")
            yield ctx.status(pb.TASK_STATE_COMPLETED)


class Callers:
    def __init__(self, http: httpx.AsyncClient, agent: _Agent, keys: dict[str, str]) -> None:
        self.http, self.agent, self.keys = http, agent, keys

    def headers(self, who: str) -> dict[str, str]:
        return {"X-API-Key": self.keys[who]}


@pytest.fixture
async def callers(tmp_path: Path) -> AsyncIterator[Callers]:
    keys: dict[str, str] = {}
    entries = []
    for who in ("alice", "bob"):
        key_id, secret = new_secret()
        keys[who] = secret
        entries.append(
            f'[[schemes.apiKey.keys]]\nid = "{key_id}"\nsubject = "{who}"\nscopes = ["a2a"]\n'
            f'hash = "{digest(secret)}"\n'
        )
    path = tmp_path / "auth.toml"
    path.write_text(
        '[schemes.apiKey]\ntype = "apiKey"\nheader = "X-API-Key"\n\n'
        + "\n".join(entries)
        + '\n[[requirements]]\napiKey = ["a2a"]\n'
    )
    agent = _Agent()
    server = A2AServer(
        agent,
        InMemoryTaskStore(),
        ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, auth=load_policy(path)),
    )
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as http:
            yield Callers(http, agent, keys)
    finally:
        await server.stop(0.5)


def _params(text: str, task_id: str) -> dict[str, Any]:
    return {"id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


async def _send(c: Callers, who: str, surface: str, text: str, task_id: str) -> tuple[int, Any]:
    """A message over ``surface`` (``tutorial``: ``POST /tasks/send``;
    ``jsonrpc``: v0.1 ``tasks/send``): (HTTP status, the body)."""
    if surface == "tutorial":
        resp = await c.http.post("/tasks/send", json=_params(text, task_id), headers=c.headers(who))
        return resp.status_code, resp.json()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": _params(text, task_id)}
    resp = await c.http.post("/", json=body, headers=c.headers(who))
    return resp.status_code, resp.json()


def _normal(body: Any, task_id: str) -> Any:
    """``body`` with ``task_id`` and the server-minted ids and times that
    differ between any two tasks replaced."""
    text = json.dumps(body).replace(task_id, "<id>")
    value = json.loads(text)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {
                k: ("<minted>" if k in ("sessionId", "contextId", "timestamp", "messageId") else walk(x))
                for k, x in v.items()
            }
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(value)


async def _as_if_fresh(c: Callers, who: str, surface: str, text: str, held_id: str) -> tuple[int, Any]:
    """What ``who`` gets naming ``held_id`` next to what it gets naming a
    fresh id (normalized): the two must be equal."""
    status, got = await _send(c, who, surface, text, held_id)
    fresh = f"fresh-{uuid.uuid4().hex}"
    fresh_status, fresh_got = await _send(c, who, surface, text, fresh)
    assert (status, _normal(got, held_id)) == (fresh_status, _normal(fresh_got, fresh))
    return status, got


async def _get(c: Callers, who: str, task_id: str) -> tuple[int, Any]:
    resp = await c.http.get(f"/tasks/{task_id}?historyLength=10", headers=c.headers(who))
    return resp.status_code, resp.json()


SURFACES = ["tutorial", "jsonrpc"]


@pytest.mark.parametrize("surface", SURFACES)
async def test_a_held_id_reads_like_a_fresh_one_to_a_stranger(callers: Callers, surface: str) -> None:
    c, held = callers, f"held-{uuid.uuid4().hex}"
    status, _asked = await _send(c, "alice", surface, "ask", held)
    assert status == 200
    _status, theirs = await _as_if_fresh(c, "bob", surface, "hello", held)
    task = theirs["result"] if surface == "jsonrpc" else theirs
    assert task["id"] == held and task["status"]["state"] == "completed"  # his own new task
    # Each sees their own task under the id; alice's is untouched and continues.
    alice = (await _get(c, "alice", held))[1]
    bob = (await _get(c, "bob", held))[1]
    assert (alice["status"]["state"], bob["status"]["state"]) == ("input-required", "completed")
    assert [p["text"] for a in bob["artifacts"] for p in a["parts"]] == ["hello"]
    assert "artifacts" not in alice or alice["artifacts"] == []
    status, done = await _send(c, "alice", surface, "go on", held)
    done = done["result"] if surface == "jsonrpc" else done
    assert status == 200 and done["status"]["state"] == "completed"
    assert [p["text"] for a in done["artifacts"] for p in a["parts"]] == ["then: go on"]


@pytest.mark.parametrize("surface", SURFACES)
async def test_a_stranger_neither_finds_the_owners_task_busy_nor_makes_it_busy(
    callers: Callers, surface: str
) -> None:
    c, held = callers, f"running-{uuid.uuid4().hex}"
    gate = f"g-{uuid.uuid4().hex[:8]}"
    # alice's execution runs: bob naming its id is not told "busy".
    running = asyncio.ensure_future(_send(c, "alice", surface, f"hold {gate}", held))
    await asyncio.wait_for(c.agent.held(gate).wait(), 10)
    status, theirs = await _as_if_fresh(c, "bob", surface, "hello", held)
    assert status == 200 and "is busy" not in json.dumps(theirs)
    c.agent.gate(gate).set()
    status, done = await running
    assert status == 200 and "released" in json.dumps(done)

    # bob's execution of his own task of that id runs: alice's message to hers is not refused.
    other, mine = f"g-{uuid.uuid4().hex[:8]}", f"idle-{uuid.uuid4().hex}"
    assert (await _send(c, "alice", surface, "ask", mine))[0] == 200
    his = asyncio.ensure_future(_send(c, "bob", surface, f"hold {other}", mine))
    await asyncio.wait_for(c.agent.held(other).wait(), 10)
    status, answered = await _send(c, "alice", surface, "now", mine)
    answered = answered["result"] if surface == "jsonrpc" else answered
    assert status == 200 and answered["status"]["state"] == "completed", answered
    c.agent.gate(other).set()
    assert (await his)[0] == 200


async def _subscribe(c: Callers, who: str, surface: str, text: str, task_id: str) -> AsyncIterator[Any]:
    """A streaming message: each ``data:`` of the SSE answer, decoded."""
    if surface == "tutorial":
        request = c.http.stream(
            "POST", "/tasks/sendSubscribe", json=_params(text, task_id), headers=c.headers(who)
        )
    else:
        body = {
            "jsonrpc": "2.0",
            "id": "s",
            "method": "tasks/sendSubscribe",
            "params": _params(text, task_id),
        }
        request = c.http.stream("POST", "/", json=body, headers=c.headers(who))
    async with request as resp:
        assert resp.status_code == 200
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                yield json.loads(line[5:])


@pytest.mark.parametrize("surface", SURFACES)
async def test_a_stranger_does_not_end_the_owners_stream(callers: Callers, surface: str) -> None:
    """bob's message naming alice's id, whose execution stores nothing (the
    agent refuses it), ends no stream of alice's task."""
    c, held = callers, f"stream-{uuid.uuid4().hex}"
    gate = f"g-{uuid.uuid4().hex[:8]}"
    events = _subscribe(c, "alice", surface, f"hold {gate}", held)
    first = await asyncio.wait_for(anext(events), 10)
    assert held in json.dumps(first)  # the stream is open
    await asyncio.wait_for(c.agent.held(gate).wait(), 10)
    _status, refused = await _as_if_fresh(c, "bob", surface, "refuse", held)
    assert "not that" in json.dumps(refused)  # the agent's refusal, as for any id of his
    assert held not in json.dumps(refused)
    await asyncio.sleep(0.2)  # an ended stream would have ended by now
    c.agent.gate(gate).set()
    rest = [e async for e in events]
    assert rest and "completed" in json.dumps(rest[-1])
    assert "released" in json.dumps(rest)


async def _follow(c: Callers, who: str, task_id: str) -> AsyncIterator[Any]:
    """SubscribeToTask over v1.0 HTTP+JSON: each ``data:`` decoded."""
    headers = {**c.headers(who), "A2A-Version": "1.0"}
    async with c.http.stream("GET", f"/tasks/{task_id}:subscribe", headers=headers) as resp:
        assert resp.status_code == 200
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                yield json.loads(line[5:])


@pytest.mark.parametrize("surface", SURFACES)
async def test_a_stranger_does_not_end_a_subscription_to_the_owners_idle_task(
    callers: Callers, surface: str
) -> None:
    """alice follows her interrupted task (no execution runs it); bob's
    message naming its id runs an execution that stores nothing: her
    subscription goes on, and sees her next message's updates."""
    c, held = callers, f"idle-{uuid.uuid4().hex}"
    assert (await _send(c, "alice", surface, "ask", held))[0] == 200
    events = _follow(c, "alice", held)
    snapshot = await asyncio.wait_for(anext(events), 10)
    assert snapshot["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    _status, refused = await _as_if_fresh(c, "bob", surface, "refuse", held)
    assert "not that" in json.dumps(refused)
    status, _done = await _send(c, "alice", surface, "go on", held)
    assert status == 200
    rest = [e async for e in events]
    states = [e["statusUpdate"]["status"]["state"] for e in rest if "statusUpdate" in e]
    assert states[-1] == "TASK_STATE_COMPLETED", rest
