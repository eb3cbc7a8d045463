"""A client written the way the tutorial's is — plain httpx, client-chosen task ids, ``/tasks/send``,
``/tasks/sendSubscribe`` read as whole Task snapshots, ``GET /tasks/{id}``, cancel, and the multi-turn
continue with the same id — against the code-review agent on a real server (legacy digest §5.10)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from a2a_grpc.agents import load_agent
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.agents.helpers import diff_text, new_line_of


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    server = A2AServer(load_agent("code-review"), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=60) as http:
            yield http
    finally:
        await server.stop(0.5)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def findings(task: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(file, rule, line) of every finding in the task's artifacts, as the tutorial client reads them."""
    out = []
    for artifact in task["artifacts"]:
        for part in artifact["parts"]:
            if part["type"] == "data":
                out += [(f["file"], f["rule"], f["line"]) for f in part["data"].get("findings", [])]
    return out


async def test_send_continue_get_with_a_client_chosen_id(client: httpx.AsyncClient) -> None:
    diff = diff_text("sql_injection.diff")
    line = new_line_of(diff, "app/users.py", 'query = f"SELECT * FROM users WHERE id = {user_id}"')
    card = (await client.get("/.well-known/agent.json")).json()
    assert card["capabilities"]["streaming"] is True
    assert card["url"].endswith("/")  # the JSON-RPC URL, where the v0.1 methods are

    task_id = uuid.uuid4().hex
    first = await client.post(
        "/tasks/send", json={"id": task_id, "message": user("Please review my change.")}
    )
    assert first.status_code == 200, first.text
    task = first.json()
    assert task["id"] == task_id
    assert task["status"]["state"] == "input-required"  # no diff yet: the agent asks for one
    assert task["status"]["message"]["parts"][0]["type"] == "text"
    assert "history" not in task  # none asked for

    # The tutorial's multi-turn continue: the same id, on /tasks/send and on /tasks/{id}/send.
    again = await client.post("/tasks/send", json={"id": task_id, "message": user("Still no diff, sorry.")})
    assert again.json()["status"]["state"] == "input-required"
    done = await client.post(f"/tasks/{task_id}/send", json={"id": task_id, "message": user(diff)})
    assert done.status_code == 200, done.text
    task = done.json()
    assert task["status"]["state"] == "completed"
    assert findings(task) == [("app/users.py", "S608", line)]
    assert task["artifacts"][0]["index"] == 0

    got = await client.get(f"/tasks/{task_id}", params={"historyLength": 10})
    assert got.status_code == 200
    read = got.json()
    assert read["status"]["state"] == "completed"
    assert findings(read) == [("app/users.py", "S608", line)]
    assert [m["role"] for m in read["history"]][:1] == ["user"]
    assert all(
        "messageId" not in m and "a2a-grpc/dialect" not in m.get("metadata", {}) for m in read["history"]
    )

    # A finished task accepts no more messages: a clear 4xx, not a 500.
    late = await client.post("/tasks/send", json={"id": task_id, "message": user(diff)})
    assert late.status_code == 400
    assert "terminal" in late.json()["detail"]


async def test_send_subscribe_streams_whole_task_snapshots(client: httpx.AsyncClient) -> None:
    diff = diff_text("sql_injection.diff")
    task_id = uuid.uuid4().hex
    body = {"id": task_id, "sessionId": "session-1", "message": user(diff)}
    snapshots = []
    async with client.stream("POST", "/tasks/sendSubscribe", json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                update = json.loads(line[len("data:") :])
                snapshots.append(update)
                print(update["status"]["state"], len(update.get("artifacts", [])))  # what the tutorial does
    assert len(snapshots) >= 3
    assert all(s["id"] == task_id and s["sessionId"] == "session-1" for s in snapshots)
    assert snapshots[0]["status"]["state"] == "submitted"
    assert {s["status"]["state"] for s in snapshots[1:-1]} == {"working"}
    last = snapshots[-1]
    assert last["status"]["state"] == "completed"
    assert [rule for _, rule, _ in findings(last)] == ["S608"]
    assert (await client.get(f"/tasks/{task_id}")).json() == last


async def test_cancel_and_errors_are_detail_objects(client: httpx.AsyncClient) -> None:
    task_id = str(uuid.uuid4())
    asked = await client.post("/tasks/send", json={"id": task_id, "message": user("Review, please.")})
    assert asked.json()["status"]["state"] == "input-required"
    canceled = await client.post(f"/tasks/{task_id}/cancel")
    assert canceled.status_code == 200
    assert canceled.json()["status"]["state"] == "canceled"
    assert (await client.get(f"/tasks/{task_id}")).json()["status"]["state"] == "canceled"

    missing = await client.get("/tasks/no-such-task")
    assert (missing.status_code, list(missing.json())) == (404, ["detail"])
    assert (await client.post("/tasks/no-such-task/cancel")).status_code == 404

    done_id = uuid.uuid4().hex
    diff = diff_text("clean.diff")
    assert (await client.post("/tasks/send", json={"id": done_id, "message": user(diff)})).status_code == 200
    refused = await client.post(f"/tasks/{done_id}/cancel")
    assert refused.status_code == 400
    assert "cannot be canceled" in refused.json()["detail"]
