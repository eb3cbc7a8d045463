"""With an auth configuration (docs/auth.md) the old shape authenticates like every other surface:
``Authorization: Bearer`` (a JWT of the configured issuer) and the API key header, on the tutorial
routes and the v0.1 JSON-RPC methods; a client-chosen task id another caller holds is no obstacle
(task ids are per owner), and the v0.1 card names the schemes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_grpc.auth import load_policy
from a2a_grpc.auth._apikeys import digest, new_secret
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.auth.issuer import AUDIENCE, Issuer
from tests.interop.agents import InteropAgent


class Served:
    def __init__(self, http: httpx.AsyncClient, issuer: Issuer, alice: str) -> None:
        self.http, self.issuer, self.alice = http, issuer, alice


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    issuer = Issuer()
    await issuer.start()
    key_id, secret = new_secret()
    # examples/auth/auth.toml, with a key for alice and a JWT scheme for Bearer tokens
    config = f"""
[schemes.apiKey]
type = "apiKey"
header = "X-API-Key"

[[schemes.apiKey.keys]]
id = "{key_id}"
subject = "alice"
scopes = ["a2a"]
hash = "{digest(secret)}"

[schemes.corp]
type = "jwt"
issuer = "{issuer.issuer}"
audience = "{AUDIENCE}"
discovery_url = "{issuer.discovery_url}"
algorithms = ["RS256"]

[[requirements]]
apiKey = ["a2a"]

[[requirements]]
corp = ["a2a"]
"""
    path = tmp_path / "auth.toml"
    path.write_text(config)
    server = A2AServer(
        InteropAgent(),
        InMemoryTaskStore(),
        ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, auth=load_policy(path)),
    )
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as http:
            yield Served(http, issuer, secret)
    finally:
        await server.stop(0.5)
        await issuer.stop()


def params(text: str, task_id: str) -> dict[str, Any]:
    return {"id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


async def test_old_shape_authenticates_like_the_others(served: Served) -> None:
    http = served.http
    bearer = {"Authorization": f"Bearer {served.issuer.mint(scope='a2a', sub='carol')}"}
    alice = {"X-API-Key": served.alice}
    task_id = uuid.uuid4().hex

    anonymous = await http.post("/tasks/send", json=params("hi", task_id))
    assert anonymous.status_code == 401 and "detail" in anonymous.json()
    assert anonymous.headers["WWW-Authenticate"]
    assert (await http.get(f"/tasks/{task_id}")).status_code == 401
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": params("hi", task_id)}
    assert (await http.post("/", json=rpc)).status_code == 401
    bad = await http.post("/tasks/send", json=params("hi", task_id), headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401

    made = await http.post("/tasks/send", json=params("ask", task_id), headers=bearer)
    assert made.status_code == 200 and made.json()["status"]["state"] == "input-required"
    assert (await http.get(f"/tasks/{task_id}", headers=bearer)).json()["id"] == task_id

    # Another caller: the task does not exist for alice, and naming its id makes her own task of
    # that id, as a fresh id would (task ids are per owner, docs/decisions.md).
    assert (await http.get(f"/tasks/{task_id}", headers=alice)).status_code == 404
    mine = await http.post("/tasks/send", json=params("mine now", task_id), headers=alice)
    assert mine.status_code == 200 and mine.json()["status"]["state"] == "completed"
    assert (await http.get(f"/tasks/{task_id}", headers=alice)).json()["status"]["state"] == "completed"
    other_id = uuid.uuid4().hex
    own = (await http.post("/", json={**rpc, "params": params("hi", other_id)}, headers=alice)).json()
    assert own["result"]["status"]["state"] == "completed"
    again = (await http.post("/", json={**rpc, "params": params("hi", other_id)}, headers=alice)).json()
    assert again["error"]["code"] == -32004  # hers, and terminal: UnsupportedOperation

    # the owner continues it
    done = await http.post(f"/tasks/{task_id}/send", json=params("go on", task_id), headers=bearer)
    assert done.json()["status"]["state"] == "completed"

    card = (await http.get("/.well-known/agent.json")).json()  # public, like the v1.0 card
    assert card["authentication"]["schemes"] == ["ApiKey", "Bearer"]
