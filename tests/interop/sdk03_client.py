"""Drives an A2A server with the official Python SDK **0.3.x** client.

Run ONLY in its own virtualenv (``a2a-sdk==0.3.*``, made by
``tests/interop/conftest.py``'s ``sdk03_python``): the 0.3 SDK is pydantic
models on the v0.3 JSON-RPC wire, and cannot share a process with the 1.x SDK.

    python tests/interop/sdk03_client.py BASE_URL WEBHOOK_URL [jsonrpc|rest|grpc]

The client is built the SDK's way — card from
``BASE_URL/.well-known/agent-card.json`` (``A2ACardResolver``), then
``ClientFactory`` with the one transport named (JSON-RPC by default; it picks
the card's endpoint for it from ``url`` / ``additionalInterfaces``) — and
prints one JSON object per step:
``card``, ``send`` (blocking message/send), ``stream`` (message/stream events),
``get``, ``cancel`` (a ``slow`` task), ``resubscribe`` (a ``slow`` task,
canceled while subscribed), ``resubscribe_done`` (a finished task),
``push_set`` / ``push_get`` (SDK), ``push_list`` / ``push_delete`` (its Client
has no list/delete: JSON-RPC over httpx, the REST paths over httpx, or the
SDK's generated gRPC stub), ``parts`` (file bytes, file uri, data),
``multi_turn`` and ``error`` (get of an unknown id: the JSON-RPC error
object, the HTTP status, or the gRPC code and details). A failing step never
stops the later ones.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.grpc import a2a_pb2, a2a_pb2_grpc
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
    TransportProtocol,
)

TRANSPORTS = {
    "jsonrpc": TransportProtocol.jsonrpc,
    "rest": TransportProtocol.http_json,
    "grpc": TransportProtocol.grpc,
}


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


def config(http: httpx.AsyncClient, transport: str, *, streaming: bool) -> ClientConfig:
    return ClientConfig(
        httpx_client=http,
        streaming=streaming,
        supported_transports=[TRANSPORTS[transport]],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )


async def main(base_url: str, webhook: str, transport: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        emit("card", True, dump(card))
        unary = ClientFactory(config(http, transport, streaming=False)).create(card)
        streaming = ClientFactory(config(http, transport, streaming=True)).create(card)

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
        await push_steps(unary, Raw(http, base_url, card, transport), webhook, first)

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

        await step("error", lambda: error(unary))


async def error(unary: Any) -> Any:
    """The error of a get of an unknown task, as this transport shows it."""
    try:
        await unary.get_task(TaskQueryParams(id="no-such-task"))
    except A2AClientJSONRPCError as exc:
        return dump(exc.error)
    except A2AClientHTTPError as exc:
        return {"status": exc.status_code, "message": exc.message}
    except grpc.aio.AioRpcError as exc:
        return {"code": exc.code().name, "details": exc.details()}
    raise AssertionError("get of an unknown task succeeded")


class Raw:
    """List and delete of push configs, which the SDK's Client does not offer,
    on the same transport: JSON-RPC or REST over httpx, the generated gRPC stub."""

    def __init__(self, http: httpx.AsyncClient, base_url: str, card: Any, transport: str) -> None:
        self.http, self.base_url, self.transport = http, base_url, transport
        urls = {i.transport: i.url for i in card.additional_interfaces or []}
        self.url = urls.get(TRANSPORTS[transport].value, card.url)

    async def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        return (await self.http.post(self.base_url + "/", json=body)).json()

    async def _grpc(self, rpc: str, request: Any) -> Any:
        from google.protobuf.json_format import MessageToDict

        async with grpc.aio.insecure_channel(self.url) as channel:
            return MessageToDict(await getattr(a2a_pb2_grpc.A2AServiceStub(channel), rpc)(request))

    async def list(self, task_id: str) -> Any:
        if self.transport == "jsonrpc":
            return await self._rpc("tasks/pushNotificationConfig/list", {"id": task_id})
        if self.transport == "rest":
            return (await self.http.get(f"{self.url}/v1/tasks/{task_id}/pushNotificationConfigs")).json()
        request = a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task_id}")
        return await self._grpc("ListTaskPushNotificationConfig", request)

    async def delete(self, task_id: str, config_id: str) -> Any:
        if self.transport == "jsonrpc":
            params = {"id": task_id, "pushNotificationConfigId": config_id}
            return await self._rpc("tasks/pushNotificationConfig/delete", params)
        name = f"tasks/{task_id}/pushNotificationConfigs/{config_id}"
        if self.transport == "rest":
            response = await self.http.delete(f"{self.url}/v1/{name}")
            return {"status": response.status_code, "body": response.json()}
        request = a2a_pb2.DeleteTaskPushNotificationConfigRequest(name=name)
        return await self._grpc("DeleteTaskPushNotificationConfig", request)


async def push_steps(unary: Any, raw: Raw, webhook: str, first: Any) -> None:
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

    async def push_list() -> Any:
        return await raw.list(state["task"])

    async def push_delete() -> Any:
        deleted = await raw.delete(state["task"], "hook-1")
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
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "jsonrpc"))
