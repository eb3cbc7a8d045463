"""Push bodies in the dialect the webhook was registered in (legacy digest C21,
docs/dialects.md): a config set through A2A v0.3 gets bare v0.3 events
(``application/json``), one set through v1.0 on the same task gets
``StreamResponse`` (``application/a2a+json``); the dialect is stored with the
config (memory, SQLite, PostgreSQL; older databases gain the column on open),
and a store that keeps no dialects still works (v1.0 bodies). Data values
that JSON cannot hold (NaN, infinities) go out as ``null``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from a2a_grpc.client import A2AClient
from a2a_grpc.context import Owner
from a2a_grpc.core.ports import OutboxEntry, TaskWrite
from a2a_grpc.dialects._push import PUSH_BODIES
from a2a_grpc.push import PushDispatcher
from a2a_grpc.push._dispatcher import BODIES, _body
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import SqlTaskStore, TaskStore
from a2a_grpc.types import pb
from tests.push.conftest import OWNER, PG_URL, Receiver, add_config, new_task
from tests.push.test_e2e import FAST, GatedAgent


@pytest.fixture
async def served(store: TaskStore) -> AsyncIterator[tuple[A2AServer, GatedAgent]]:
    agent = GatedAgent()
    server = A2AServer(
        agent,
        store,
        ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.5),
        push=PushDispatcher(store, **FAST),  # type: ignore[arg-type]
    )
    await server.start()
    try:
        yield server, agent
    finally:
        agent.gates.clear()
        await server.stop()  # closes the store: open it again for the fixture's clean-up
        await store.open()  # type: ignore[attr-defined]


async def v03_call(base: str, method: str, params: dict[str, Any]) -> Any:
    """A plain v0.3 JSON-RPC call (no A2A-Version header, as v0.3 clients send)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with aiohttp.ClientSession() as http, http.post(base + "/", json=body) as resp:
        reply = await resp.json()
    assert "error" not in reply, reply
    return reply["result"]


def _message(text_: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "role": "user",
        "messageId": str(uuid.uuid4()),
        "parts": [{"kind": "text", "text": text_}],
        **extra,
    }


async def test_v03_and_v10_webhooks_on_one_task_get_their_own_dialect(
    served: tuple[A2AServer, GatedAgent], receiver: Receiver
) -> None:
    server, agent = served
    base = f"http://127.0.0.1:{server.http_port}"
    # a v0.3 client starts the task with an inline webhook (message/send, blocking: false) ...
    params = {
        "message": _message("go"),
        "configuration": {
            "blocking": False,
            "pushNotificationConfig": {"url": receiver.url("/inline03"), "token": "t3"},
        },
    }
    task = await v03_call(base, "message/send", params)
    assert task["kind"] == "task"
    task_id = task["id"]
    assert await asyncio.wait_for(agent.started.get(), 5) == task_id
    # ... sets a second one with tasks/pushNotificationConfig/set ...
    config = {"taskId": task_id, "pushNotificationConfig": {"id": "set03", "url": receiver.url("/set03")}}
    await v03_call(base, "tasks/pushNotificationConfig/set", config)
    # ... and a v1.0 client registers a third on the same task.
    async with await A2AClient.connect(base, bindings=["jsonrpc"]) as client:
        await client.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(task_id=task_id, id="v10", url=receiver.url("/v10"))
        )
    agent.gate(task_id).set()

    def completed(path: str, state: str) -> bool:
        hits = receiver.on(path)
        return (
            bool(hits)
            and hits[-1].body.get("statusUpdate", hits[-1].body).get("status", {}).get("state") == state
        )

    await receiver.wait_for(
        lambda: (
            completed("/inline03", "completed")
            and completed("/set03", "completed")
            and completed("/v10", "TASK_STATE_COMPLETED")
        )
    )
    for path in ("/inline03", "/set03"):
        hits = receiver.on(path)
        assert {h.headers["Content-Type"] for h in hits} == {"application/json"}
        assert {h.body["kind"] for h in hits} >= {"artifact-update", "status-update"}
        last = hits[-1].body
        assert (last["kind"], last["final"], last["taskId"]) == ("status-update", True, task_id)
        artifact = next(h.body for h in hits if h.body["kind"] == "artifact-update")["artifact"]
        assert artifact["parts"][0] == {"kind": "text", "text": "part 0"}
    assert receiver.on("/inline03")[-1].headers["X-A2A-Notification-Token"] == "t3"
    v10 = receiver.on("/v10")
    assert {h.headers["Content-Type"] for h in v10} == {"application/a2a+json"}
    assert all(len(h.body) == 1 and next(iter(h.body)) in ("statusUpdate", "artifactUpdate") for h in v10)
    assert "final" not in v10[-1].body["statusUpdate"]


async def test_a_v01_webhook_gets_v01_events(
    served: tuple[A2AServer, GatedAgent], receiver: Receiver
) -> None:
    """A webhook given inline to the oldest shape's ``tasks/send`` gets the v0.1
    events (``{id, status, final}``, ``{id, artifact}``, ``application/json``)."""
    server, agent = served
    base = f"http://127.0.0.1:{server.http_port}"
    task_id = f"v01-{uuid.uuid4().hex}"
    params = {
        "id": task_id,
        "message": {"role": "user", "parts": [{"type": "text", "text": "go"}]},
        "pushNotification": {"url": receiver.url("/v01"), "token": "t1"},
    }
    sending = asyncio.create_task(v03_call(base, "tasks/send", params))  # blocking: until the gate opens
    assert await asyncio.wait_for(agent.started.get(), 5) == task_id
    agent.gate(task_id).set()
    assert (await sending)["status"]["state"] == "completed"
    await receiver.wait_for(lambda: any(h.body.get("final") for h in receiver.on("/v01")))
    hits = receiver.on("/v01")
    assert {h.headers["Content-Type"] for h in hits} == {"application/json"}
    assert {h.headers["X-A2A-Notification-Token"] for h in hits} == {"t1"}
    last = hits[-1].body
    assert (last["id"], last["status"]["state"], last["final"]) == (task_id, "completed", True)
    artifact = next(h.body for h in hits if "artifact" in h.body)["artifact"]
    assert artifact["parts"][0] == {"type": "text", "text": "part 0"} and artifact["index"] == 0
    assert all("kind" not in h.body and "statusUpdate" not in h.body for h in hits)


@pytest.mark.parametrize("binding", ["grpc", "rest", "jsonrpc"])
async def test_our_v03_client_registers_a_v03_webhook(
    served: tuple[A2AServer, GatedAgent], receiver: Receiver, binding: str
) -> None:
    """Our client speaking v0.3 to our server's v0.3 bindings (item 7 meets item 6)."""
    server, agent = served
    wanted = {"grpc": "GRPC", "rest": "HTTP+JSON", "jsonrpc": "JSONRPC"}[binding]
    url = next(i.url for i in server.card.supported_interfaces if i.protocol_binding == wanted)
    async with A2AClient.for_interface(url, binding, protocol_version="0.3") as client:
        config = pb.SendMessageConfiguration(return_immediately=True)
        task_id = (await client.send_message("go", configuration=config)).task.id
        assert await asyncio.wait_for(agent.started.get(), 5) == task_id
        await client.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(task_id=task_id, id="hook", url=receiver.url("/" + binding))
        )
        agent.gate(task_id).set()
        await receiver.wait_for(lambda: any(h.body.get("final") for h in receiver.on("/" + binding)))
        assert (await client.get_task(task_id)).status.state == pb.TASK_STATE_COMPLETED
    last = receiver.on("/" + binding)[-1]
    assert last.headers["Content-Type"] == "application/json"
    assert (last.body["kind"], last.body["status"]["state"]) == ("status-update", "completed")


async def test_the_dialect_is_stored_with_the_config(store: TaskStore) -> None:
    task_id = await new_task(store)
    config = pb.TaskPushNotificationConfig(task_id=task_id, id="c", url="https://example.com/h")
    await store.put_push_config(OWNER, config, dialect="0.3")
    assert await store.get_push_target(OWNER, task_id, "c") == (config, "0.3")
    await store.put_push_config(OWNER, config)  # replaced through v1.0
    assert await store.get_push_target(OWNER, task_id, "c") == (config, "1.0")
    assert await store.get_push_target(Owner("", "stranger"), task_id, "c") is None
    await store.delete_push_config(OWNER, task_id, "c")
    assert await store.get_push_target(OWNER, task_id, "c") is None


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_an_older_database_gains_the_dialect_column_on_open(backend: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}" if backend == "sqlite" else PG_URL
    prefix = f"dialect_{uuid.uuid4().hex[:8]}_"
    old = SqlTaskStore(url, table_prefix=prefix)
    try:
        await old.open()
    except (OSError, SQLAlchemyError) as exc:
        pytest.skip(f"{url} is not reachable: {exc}")
    task_id = await new_task(old)
    await add_config(old, task_id, "https://example.com/h", config_id="before")
    async with old.engine.begin() as conn:  # the table as a release before this column made it
        await conn.execute(text(f"ALTER TABLE {prefix}push_configs DROP COLUMN dialect"))
    await old.close()
    store = SqlTaskStore(url, table_prefix=prefix)
    await store.open()
    try:
        target = await store.get_push_target(OWNER, task_id, "before")
        assert target is not None and target[1] == "1.0"
        config = pb.TaskPushNotificationConfig(task_id=task_id, id="after", url="https://example.com/h")
        await store.put_push_config(OWNER, config, dialect="0.3")
        assert await store.get_push_target(OWNER, task_id, "after") == (config, "0.3")
    finally:
        if backend == "postgresql":
            await store.drop_all()
        await store.close()


def _status_event(task_id: str, state: int) -> pb.StreamResponse:
    return pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(
            task_id=task_id, context_id="c", status=pb.TaskStatus(state=state)
        )
    )


def _nan_event(task_id: str) -> pb.StreamResponse:
    event = pb.StreamResponse()
    update = event.artifact_update
    update.task_id, update.context_id, update.artifact.artifact_id = task_id, "c", "a"
    update.artifact.parts.add().data.struct_value.update({"nan": float("nan"), "inf": float("inf"), "n": 1})
    return event


async def _emit(store: Any, task_id: str, config_id: str, event: pb.StreamResponse) -> None:
    stored = await store.get(task_id, OWNER)
    entry = OutboxEntry(
        task_id, config_id, f"{task_id}:{stored.version + 1}", event.SerializeToString(), owner=OWNER
    )
    await store.update(TaskWrite(stored.task, OWNER, stored.version, outbox=[entry]))


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_nan_in_a_data_part_is_delivered_as_null(
    store: TaskStore, receiver: Receiver, dialect: str
) -> None:
    """json_format refused such a value (SerializeToJsonError), which the old
    dispatcher did not catch: the row stayed pending and blocked its config."""
    task_id = await new_task(store)
    config = pb.TaskPushNotificationConfig(task_id=task_id, id="c", url=receiver.url("/nan"))
    await store.put_push_config(OWNER, config, dialect=dialect)
    dispatcher = PushDispatcher(store, **FAST)  # type: ignore[arg-type]
    await dispatcher.start(bodies=PUSH_BODIES)  # as a server starts it: the dialects' bodies
    try:
        await _emit(store, task_id, "c", _nan_event(task_id))
        dispatcher.wake()
        await receiver.wait_for(lambda: bool(receiver.on("/nan")))
    finally:
        await dispatcher.stop()
    body = receiver.on("/nan")[0].body
    artifact = body["artifactUpdate"]["artifact"] if dialect == "1.0" else body["artifact"]
    assert artifact["parts"][0]["data"] == {"inf": None, "n": 1, "nan": None}


@pytest.mark.parametrize(
    ("state", "final"),
    [(pb.TASK_STATE_WORKING, False), (pb.TASK_STATE_INPUT_REQUIRED, True), (pb.TASK_STATE_FAILED, True)],
)
def test_v03_status_bodies_carry_final(state: int, final: bool) -> None:
    bodies = {**BODIES, **PUSH_BODIES}
    content_type, body = _body(_status_event("t", state).SerializeToString(), "0.3", bodies)
    assert content_type == "application/json"
    assert b'"kind":"status-update"' in body
    assert (b'"final":true' in body) is final
    assert (
        _body(_status_event("t", state).SerializeToString(), "0.9", bodies)[0] == "application/a2a+json"
    )  # unknown: v1.0
    # Push delivery alone knows v1.0 only: a v0.3 config gets the v1.0 body.
    assert _body(_status_event("t", state).SerializeToString(), "0.3")[0] == "application/a2a+json"
