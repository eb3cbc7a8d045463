"""The drive loop's plain path (a2a_grpc/core/_drive.py) and its fast paths
(a2a_grpc/core/_fastpath.py) give the same answers.

Every scenario runs twice on a real store (memory and SQLite), once with the
fast paths' switch off and once with it on, and the two runs must agree on
what a client and a webhook can see: the answer (or error), every streamed
event, the stored task and its version, and the push outbox rows. Ids the
server mints, timestamps and agent message ids differ between any two runs;
they are normalized away. The number of writes is what the fast paths
change, and what this test does not compare.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from a2a_grpc.context import CallContext
from a2a_grpc.core import _fastpath as fastpath
from a2a_grpc.core._handler import HandlerConfig, RequestHandler
from a2a_grpc.core.ports import Store, TaskWrite
from a2a_grpc.errors import A2AError
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import msg

_VERSION = (("a2a-version", "1.0"),)

#: Commands of the scripted agent (tests/core/agents.py), each a core scenario.
SCENARIOS = [
    "echo hello",
    "chunks 5",
    "orphan-append",
    "replace",
    "many 4 200",
    "many 2 5000",  # over the task size limit (4000 bytes here): FAILED
    "ask",
    "auth",
    "reply",
    "reject",
    "bad-terminal",
    "bad-end",
    "bad other-task",
    "bad unspecified",
    "bad no-artifact-id",
    "bad message",
    "bad-first other-context",
    "boom",
    "boom-first",
    "refuse",
    "empty",
    "at 1700000000",
]


def _call(method: str) -> CallContext:
    return CallContext.from_metadata(f"/lf.a2a.v1.A2AService/{method}", _VERSION)


class _Sink:
    """Push delivery that only hears of committed outbox rows (read back from the store)."""

    async def check_config(self, config: pb.TaskPushNotificationConfig) -> None:
        return None

    def wake(self) -> None:
        return None


class _Counting:
    """Mixin: counts the writes through the door (what the fast paths save)."""

    writes = 0

    async def update(self, write: TaskWrite) -> int:
        self.writes += 1
        return await super().update(write)  # type: ignore[misc]


class _Memory(_Counting, InMemoryTaskStore):
    pass


class _Sqlite(_Counting, SqlTaskStore):
    pass


@pytest.fixture(params=["memory", "sqlite"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    made = iter(range(1000))
    yield lambda: _Memory() if request.param == "memory" else _Sqlite(f"sqlite:///{tmp_path}/{next(made)}.db")


@pytest.fixture
def switch() -> Iterator[Callable[[bool], None]]:
    def set_to(on: bool) -> None:
        fastpath.enabled = on

    yield set_to
    fastpath.enabled = True


def _normal(message: Any, ids: dict[str, str]) -> Any:
    """``message`` as JSON with what differs between two runs replaced: the
    ids of ``ids`` by their names, artifact ids the agent minted by
    ``<artifact N>`` in the order first seen (added to ``ids``), timestamps
    and agent message ids dropped."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            artifact = value.get("artifactId")
            if artifact is not None and len(artifact) == 36 and artifact not in ids:
                ids[artifact] = f"<artifact {sum(n.startswith('<artifact') for n in ids.values())}>"
            return {k: walk(v) for k, v in value.items() if k not in ("timestamp", "messageId")}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            for real, name in ids.items():
                value = value.replace(real, name)
            # A task's serialized size depends on its ids and timestamps.
            value = re.sub(r"to \d+ bytes", "to N bytes", value)
        return value

    return walk(json_format.MessageToDict(message))


async def _outbox(store: Store) -> list[tuple[str, bytes]]:
    rows = await store.outbox_due(10**12, 1000)
    return [(r.entry.event_id, r.entry.payload) for r in rows]


async def _run(store: Any, commands: list[str], *, stream: bool, push: bool) -> dict[str, Any]:
    """Sends ``commands`` as messages of one task (the first creates it)
    and records what can be seen of it."""
    agent = ScriptedAgent(
        pb.AgentCard(name="s", capabilities=pb.AgentCapabilities(streaming=True, push_notifications=push))
    )
    await store.open()
    handler = RequestHandler(
        agent, store, agent.card, push=_Sink() if push else None, config=HandlerConfig(max_task_bytes=4000)
    )
    seen: dict[str, Any] = {"answers": []}
    ids: dict[str, str] = {}
    task_id = ""
    try:
        for i, text in enumerate(commands):
            req = msg(text, task_id=task_id, message_id=f"m{i}")
            if push and not task_id:
                req.configuration.task_push_notification_config.CopyFrom(
                    pb.TaskPushNotificationConfig(id="hook", url="https://hooks.example.com/a2a")
                )
            try:
                if stream:
                    events = [
                        e async for e in handler.send_streaming_message(req, _call("SendStreamingMessage"))
                    ]
                else:
                    events = [await handler.send_message(req, _call("SendMessage"))]
            except A2AError as err:
                for ctx in agent.seen:  # the ids the server minted, in the error's text
                    ids.setdefault(ctx.task_id, "<task>")
                    ids.setdefault(ctx.context_id, "<context>")
                text = err.message
                for real, name in ids.items():
                    text = text.replace(real, name)
                seen["answers"].append(("error", err.code.name, text))
                continue
            for event in events:
                task = event.task if event.HasField("task") else None
                if task is not None and not task_id:
                    task_id = task.id
                    ids |= {task.id: "<task>", task.context_id: "<context>"}
                elif event.HasField("message") and event.message.context_id not in ids:
                    ids[event.message.context_id] = "<context>"
            seen["answers"].append([_normal(e, ids) for e in events])
        if task_id:
            stored = await store.get(task_id, _call("GetTask").owner)
            assert stored is not None
            seen["stored"] = (_normal(stored.task, ids), stored.version)
            seen["outbox"] = [
                (event_id.replace(task_id, "<task>"), _normal(pb.StreamResponse.FromString(payload), ids))
                for event_id, payload in await _outbox(store)
            ]
    finally:
        await handler.close()
        await store.close()
    return seen


async def _both(
    new_store: Callable[[], Any], switch: Callable[[bool], None], commands: list[str], **kw: Any
) -> tuple[dict[str, Any], dict[str, Any], int, int]:
    switch(False)
    plain_store = new_store()
    plain = await _run(plain_store, commands, **kw)
    switch(True)
    fast_store = new_store()
    fast = await _run(fast_store, commands, **kw)
    return plain, fast, plain_store.writes, fast_store.writes


@pytest.mark.parametrize("command", SCENARIOS)
@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
async def test_the_plain_and_the_fast_path_store_and_stream_the_same(
    new_store: Callable[[], Any], switch: Callable[[bool], None], command: str, stream: bool
) -> None:
    plain, fast, plain_writes, fast_writes = await _both(
        new_store, switch, [command], stream=stream, push=False
    )
    assert plain == fast
    assert fast_writes <= plain_writes


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
async def test_a_continued_task_with_a_webhook_is_the_same_on_both_paths(
    new_store: Callable[[], Any], switch: Callable[[bool], None], stream: bool
) -> None:
    """The interrupted task continued (its message stored on it), a webhook
    given with the first message (the creation snapshot is its own write,
    and every event gets an outbox row)."""
    commands = ["ask", "and then", "more"]
    plain, fast, plain_writes, fast_writes = await _both(
        new_store, switch, commands, stream=stream, push=True
    )
    assert plain == fast
    assert len(plain["outbox"]) >= 5 and plain["answers"][2][0] == "error"  # terminal: refused
    assert fast_writes < plain_writes


async def test_the_fast_paths_save_writes_and_the_switch_turns_them_off(
    new_store: Callable[[], Any], switch: Callable[[bool], None]
) -> None:
    """A test that fails if the switch does nothing: an echo is one write on
    the fast path, three on the plain one (create, artifact, COMPLETED)."""
    _plain, _fast, plain_writes, fast_writes = await _both(
        new_store, switch, ["echo hi"], stream=False, push=False
    )
    assert (plain_writes, fast_writes) == (3, 1)


async def test_a_subscriber_that_joins_midway_sees_the_same_on_both_paths(
    switch: Callable[[bool], None],
) -> None:
    """SubscribeToTask while the agent waits: the snapshot, then the updates."""
    got: dict[bool, list[Any]] = {}
    for on in (False, True):
        switch(on)
        store = InMemoryTaskStore()
        agent = ScriptedAgent()
        handler = RequestHandler(agent, store, agent.card)
        try:
            sent = asyncio.ensure_future(handler.send_message(msg("gate g"), _call("SendMessage")))
            await asyncio.wait_for(agent.started("g").wait(), 5)
            task_id = agent.seen[-1].task_id
            ids = {task_id: "<task>", agent.seen[-1].context_id: "<context>"}
            sub = handler.subscribe_to_task(pb.SubscribeToTaskRequest(id=task_id), _call("SubscribeToTask"))
            first = await anext(sub)
            agent.gate("g").set()
            events = [first, *[e async for e in sub]]
            got[on] = [_normal(e, ids) for e in events] + [_normal((await sent).task, ids)]
        finally:
            await handler.close()
    assert got[False] == got[True]
    assert len(got[True]) == 4  # the snapshot, the artifact, COMPLETED; the answer
