"""Drives an A2A server with the official Python SDK **0.3.x** client.

Run ONLY in its own virtualenv (``a2a-sdk==0.3.*``, made by
``tests/interop/conftest.py``'s ``sdk03_python``): the 0.3 SDK is pydantic
models on the v0.3 JSON-RPC wire, and cannot share a process with the 1.x SDK.

    python tests/interop/sdk03_client.py BASE_URL WEBHOOK_URL

The client is built the SDK's way — card from
``BASE_URL/.well-known/agent-card.json`` (``A2ACardResolver``), then
``ClientFactory`` with JSON-RPC — and prints one JSON object per step:
``card``, ``send`` (blocking message/send), ``stream`` (message/stream events),
``get``, ``cancel`` (a ``slow`` task), ``resubscribe`` (a ``slow`` task,
canceled while subscribed), ``resubscribe_done`` (a finished task),
``push_set`` / ``push_get`` (SDK), ``push_list`` / ``push_delete`` (the
SDK's JSON-RPC over httpx: its Client has no list/delete), ``parts`` (file
bytes, file uri, data), ``multi_turn`` and ``error`` (tasks/get of an unknown
id). A failing step never stops the later ones.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import (
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)


def emit(step: str, ok: bool, value: Any = None, error: Any = None) -> None:
    print(json.dumps({"step": step, "ok": ok, "value": value, "error": error}), flush=True)


async def step(name: str, fn: Callable[[], Awaitable[Any]]) -> None:
    try:
        value = await fn()
    except Exception as exc:
        emit(name, False, error={"type": type(exc).__name__, "message": str(exc)})
        return
    emit(name, True, value)


def dump(obj: Any) -> Any:
    if isinstance(obj, tuple):
        return [dump(o) for o in obj]
    if obj is None:
        return None
    return obj.model_dump(mode="json", by_alias=True, exclude_none=True)


def text(t: str, task_id: str | None = None) -> Message:
    return Message(
        role=Role.user, message_id=str(uuid.uuid4()), parts=[Part(root=TextPart(text=t))], task_id=task_id
    )


async def main(base_url: str, webhook: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        emit("card", True, dump(card))
        unary = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        streaming = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)

        async def first(client: Any, message: Message, **kw: Any) -> Any:
            async for event in client.send_message(message, **kw):
                return event
            return None

        async def send() -> Any:
            return dump(await first(unary, text("hello 0.3")))

        async def stream() -> Any:
            return [dump(ev) for ev in [e async for e in streaming.send_message(text("stream me"))]]

        await step("send", send)
        await step("stream", stream)

        async def get() -> Any:
            task, _ = await first(unary, text("to get"))
            return dump(await unary.get_task(TaskQueryParams(id=task.id, history_length=1)))

        await step("get", get)

        async def start_slow() -> Task:
            cfg = MessageSendConfiguration(blocking=False)
            task, _ = await first(unary, text("slow 30"), configuration=cfg)
            return task

        async def cancel() -> Any:
            task = await start_slow()
            return dump(await unary.cancel_task(TaskIdParams(id=task.id)))

        await step("cancel", cancel)

        async def resubscribe() -> Any:
            task = await start_slow()
            events: list[Any] = []

            async def reader() -> None:
                async for ev in streaming.resubscribe(TaskIdParams(id=task.id)):
                    events.append(dump(ev))  # noqa: PERF401 - kept as they arrive

            run = asyncio.create_task(reader())
            await asyncio.sleep(0.5)
            await unary.cancel_task(TaskIdParams(id=task.id))
            await asyncio.wait_for(run, 15)
            return events

        await step("resubscribe", resubscribe)

        async def resubscribe_done() -> Any:
            task, _ = await first(unary, text("done already"))
            return [dump(ev) async for ev in streaming.resubscribe(TaskIdParams(id=task.id))]

        await step("resubscribe_done", resubscribe_done)
        await push_steps(unary, http, base_url, webhook, first)

        async def parts() -> Any:
            message = Message(
                role=Role.user,
                message_id=str(uuid.uuid4()),
                parts=[
                    Part(root=TextPart(text="parts", metadata={"k": "v"})),
                    Part(
                        root=FilePart(
                            file=FileWithBytes(
                                bytes="+/8=", mime_type="application/octet-stream", name="b.bin"
                            )
                        )
                    ),
                    Part(
                        root=FilePart(
                            file=FileWithUri(uri="https://example.com/f.txt", mime_type="text/plain")
                        )
                    ),
                    Part(root=DataPart(data={"a": [1, 2]})),
                ],
            )
            return dump(await first(unary, message))

        await step("parts", parts)

        async def multi_turn() -> Any:
            task, _ = await first(unary, text("ask"))
            follow = await first(unary, text("the answer", task_id=task.id))
            return [dump(task), dump(follow)]

        await step("multi_turn", multi_turn)

        async def error() -> Any:
            try:
                await unary.get_task(TaskQueryParams(id="no-such-task"))
            except A2AClientJSONRPCError as exc:
                return dump(exc.error)
            raise AssertionError("tasks/get of an unknown id succeeded")

        await step("error", error)


async def push_steps(unary: Any, http: httpx.AsyncClient, base_url: str, webhook: str, first: Any) -> None:
    state: dict[str, str] = {}

    async def push_set() -> Any:
        task, _ = await first(unary, text("slow 30"), configuration=MessageSendConfiguration(blocking=False))
        state["task"] = task.id
        config = TaskPushNotificationConfig(
            task_id=task.id,
            push_notification_config=PushNotificationConfig(
                id="hook-1", url=f"{webhook}/v03", token="tok-03"
            ),
        )
        return dump(await unary.set_task_callback(config))

    async def push_get() -> Any:
        params = GetTaskPushNotificationConfigParams(id=state["task"], push_notification_config_id="hook-1")
        return dump(await unary.get_task_callback(params))

    async def raw(method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        return (await http.post(base_url + "/", json=body)).json()

    async def push_list() -> Any:
        return await raw("tasks/pushNotificationConfig/list", {"id": state["task"]})

    async def push_delete() -> Any:
        deleted = await raw(
            "tasks/pushNotificationConfig/delete", {"id": state["task"], "pushNotificationConfigId": "hook-1"}
        )
        await unary.cancel_task(TaskIdParams(id=state["task"]))
        return deleted

    for name, fn in (
        ("push_set", push_set),
        ("push_get", push_get),
        ("push_list", push_list),
        ("push_delete", push_delete),
    ):
        await step(name, fn)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
