"""Drives an A2A server with the official Python SDK (``a2a-sdk``) client.

Run ONLY as its own process: ``a2a`` registers ``lf.a2a.v1`` in protobuf's
default descriptor pool, which clashes with a2a-grpc's generated protos, so the
pytest process never imports it.

    python tests/interop/sdk_client.py BASE_URL BINDING [--webhook URL | --review DIFF]

``BINDING`` is ``grpc``, ``jsonrpc`` or ``rest``. The client is built the
SDK's way — card from ``BASE_URL/.well-known/agent-card.json``, then
``ClientFactory`` restricted to that one binding — and runs these steps
against the interop agent (``tests/interop/agents.py``: echo, ``slow N``,
``ask``, ``reply``, ``boom``). It prints one JSON object per step on stdout::

    {"step": "send", "ok": true, "value": ...}         # protos as ProtoJSON (camelCase)
    {"step": "error", "ok": false, "error": {"type": "TaskNotFoundError", "message": ...}}

Steps: ``card``, ``transport``, ``send`` (blocking), ``stream``, ``get``,
``list``, ``cancel_submit`` / ``cancel`` / ``cancel_get``, ``error`` (GetTask
on an unknown id); then ``get_history0``, ``list_pages``, ``list_filtered``,
``send_terminal``, ``context_mismatch``, ``message_unknown_task``,
``subscribe`` (a working task, canceled while subscribed),
``subscribe_terminal``, ``multi_turn`` (``ask`` → INPUT_REQUIRED, then a
follow-up message on the task), ``subscribe_input_required``, ``reply`` and
``reply_stream`` (a direct Message), ``boom`` and ``boom_stream`` (the agent
raises), ``parts`` (every kind of Part, echoed), ``extended_card`` and the
``tenant_*`` steps (a card whose interfaces carry
tenant ``acme``). With ``--webhook URL``, ``push_send`` and ``push_crud``
too. A failing step never stops the later ones.

With ``--review DIFF`` it drives the code-review agent instead (see
:func:`review`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage

BINDINGS = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
CALL = ClientCallContext(timeout=15.0)


def emit(step: str, *, value: Any = None, error: BaseException | None = None) -> None:
    record: dict[str, Any] = {"step": step, "ok": error is None}
    if error is None:
        record["value"] = value
    else:
        record["error"] = {
            "type": type(error).__name__,
            "module": type(error).__module__,
            "message": str(error),
            "data": getattr(error, "data", None),
        }
    print(json.dumps(record, default=str), flush=True)


def to_json(msg: ProtoMessage) -> dict[str, Any]:
    return json_format.MessageToDict(msg)


def user_message(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(text=text)])


async def step(name: str, call: Callable[[], Awaitable[Any]]) -> Any:
    try:
        value = await call()
    except Exception as exc:
        emit(name, error=exc)
        return None
    emit(name, value=value)
    return value


async def collect(stream: Any) -> list[dict[str, Any]]:
    return [to_json(event) async for event in stream]


async def main(base_url: str, binding: str, webhook: str | None = None) -> None:
    config = {
        "supported_protocol_bindings": [BINDINGS[binding]],
        "grpc_channel_factory": grpc.aio.insecure_channel,
    }
    async with httpx.AsyncClient(timeout=15.0) as http:
        try:
            card_pb = await A2ACardResolver(http, base_url).get_agent_card()
        except Exception as exc:
            emit("card", error=exc)
            return
    emit("card", value=to_json(card_pb))

    # The same card with a tenant on every interface: the SDK then sends the
    # tenant in each request (REST path prefix, JSON-RPC params, gRPC field).
    tenant_card = pb.AgentCard()
    tenant_card.CopyFrom(card_pb)
    for interface in tenant_card.supported_interfaces:
        interface.tenant = "acme"
    tenant_client = ClientFactory(ClientConfig(streaming=False, **config)).create(tenant_card)

    blocking = ClientFactory(ClientConfig(streaming=False, **config)).create(card_pb)
    streaming = ClientFactory(ClientConfig(streaming=True, **config)).create(card_pb)
    emit("transport", value=type(blocking._transport).__name__)
    try:
        # Blocking send: one StreamResponse holding the finished task.
        sent = await step(
            "send",
            lambda: collect(
                blocking.send_message(
                    pb.SendMessageRequest(message=user_message("hello interop")), context=CALL
                )
            ),
        )
        # Streaming send: the task, then updates until COMPLETED.
        await step(
            "stream",
            lambda: collect(
                streaming.send_message(
                    pb.SendMessageRequest(message=user_message("hello stream")), context=CALL
                )
            ),
        )
        task_id = context_id = "missing"
        if sent:
            task_id = sent[0]["task"]["id"]
            context_id = sent[0]["task"]["contextId"]
        await step("get", lambda: _json(blocking.get_task(pb.GetTaskRequest(id=task_id), context=CALL)))
        await step(
            "list",
            lambda: _json(blocking.list_tasks(pb.ListTasksRequest(context_id=context_id), context=CALL)),
        )

        # Cancel a task that is still working.
        slow = pb.SendMessageRequest(
            message=user_message("slow 30"),
            configuration=pb.SendMessageConfiguration(return_immediately=True),
        )
        submitted = await step("cancel_submit", lambda: collect(blocking.send_message(slow, context=CALL)))
        slow_id = submitted[0]["task"]["id"] if submitted else "missing"
        await step(
            "cancel", lambda: _json(blocking.cancel_task(pb.CancelTaskRequest(id=slow_id), context=CALL))
        )
        await step(
            "cancel_get", lambda: _json(blocking.get_task(pb.GetTaskRequest(id=slow_id), context=CALL))
        )

        # One A2A error: GetTask on an id nobody created.
        await step(
            "error",
            lambda: _json(
                blocking.get_task(pb.GetTaskRequest(id=f"no-such-task-{uuid.uuid4()}"), context=CALL)
            ),
        )
        await extra_steps(blocking, streaming, task_id)
        await tenant_steps(tenant_client, blocking)
        if webhook:
            await push_steps(blocking, f"{webhook}/{binding}", task_id)
    finally:
        await blocking.close()
        await streaming.close()
        await tenant_client.close()


async def push_steps(blocking: Any, webhook: str, done_id: str) -> None:
    """``--webhook URL``: a message whose configuration carries a push config
    (the server POSTs the task's updates to ``URL/send``), then CRUD of a
    config on a finished task (spec §3.1.7-§3.1.10)."""
    request = pb.SendMessageRequest(
        message=user_message("hello push"),
        configuration=pb.SendMessageConfiguration(
            task_push_notification_config=pb.TaskPushNotificationConfig(
                url=f"{webhook}/send", token="tok-send"
            )
        ),
    )
    await step("push_send", lambda: collect(blocking.send_message(request, context=CALL)))

    async def crud() -> dict[str, Any]:
        config = pb.TaskPushNotificationConfig(task_id=done_id, url=f"{webhook}/crud", token="tok-crud")
        created = await blocking.create_task_push_notification_config(config, context=CALL)
        got = await blocking.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=done_id, id=created.id), context=CALL
        )
        listed = await blocking.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=done_id), context=CALL
        )
        deleted = await blocking.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=done_id, id=created.id), context=CALL
        )
        after = await blocking.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=done_id), context=CALL
        )
        return {
            "created": to_json(created),
            "got": to_json(got),
            "listed": to_json(listed),
            "deleted": repr(deleted),
            "after": to_json(after),
        }

    await step("push_crud", crud)


async def tenant_steps(tenant_client: Any, plain: Any) -> None:
    """A task created under tenant ``acme`` is readable there and nowhere else
    (spec §3.1, design.md: tasks belong to their tenant)."""
    created = await step(
        "tenant_send",
        lambda: collect(
            tenant_client.send_message(pb.SendMessageRequest(message=user_message("tenant")), context=CALL)
        ),
    )
    tid = created[0]["task"]["id"] if created else "missing"
    ctx = created[0]["task"]["contextId"] if created else "missing"
    await step("tenant_get", lambda: _json(tenant_client.get_task(pb.GetTaskRequest(id=tid), context=CALL)))
    await step(
        "tenant_list",
        lambda: _json(tenant_client.list_tasks(pb.ListTasksRequest(context_id=ctx), context=CALL)),
    )
    await step("tenant_get_elsewhere", lambda: _json(plain.get_task(pb.GetTaskRequest(id=tid), context=CALL)))


async def extra_steps(blocking: Any, streaming: Any, done_id: str) -> None:
    """Beyond the issue's list: where servers most often disagree."""
    # GetTask with historyLength 0: no history (spec §3.1.3).
    await step(
        "get_history0",
        lambda: _json(blocking.get_task(pb.GetTaskRequest(id=done_id, history_length=0), context=CALL)),
    )

    # ListTasks paging: two tasks in one context, pageSize 1, follow nextPageToken.
    ctx = str(uuid.uuid4())
    for text in ("page one", "page two"):
        msg = user_message(text)
        msg.context_id = ctx
        await collect(blocking.send_message(pb.SendMessageRequest(message=msg), context=CALL))

    async def pages() -> list[dict[str, Any]]:
        first = await blocking.list_tasks(pb.ListTasksRequest(context_id=ctx, page_size=1), context=CALL)
        second = await blocking.list_tasks(
            pb.ListTasksRequest(context_id=ctx, page_size=1, page_token=first.next_page_token), context=CALL
        )
        return [to_json(first), to_json(second)]

    await step("list_pages", pages)

    # Every ListTasks filter (query parameters on REST, spec §11.5).
    async def filtered() -> dict[str, Any]:
        req = pb.ListTasksRequest(
            context_id=ctx,
            status=pb.TASK_STATE_COMPLETED,
            page_size=5,
            history_length=0,
            include_artifacts=True,
        )
        req.status_timestamp_after.FromSeconds(int(time.time()) - 3600)
        return to_json(await blocking.list_tasks(req, context=CALL))

    await step("list_filtered", filtered)

    # A message to a completed task (design.md: UnsupportedOperationError).
    async def to_terminal() -> Any:
        msg = user_message("again")
        msg.task_id = done_id
        return await collect(blocking.send_message(pb.SendMessageRequest(message=msg), context=CALL))

    await step("send_terminal", to_terminal)

    # A follow-up whose contextId differs from its task's; a taskId never issued.
    async def mismatch() -> Any:
        asked = await collect(
            blocking.send_message(pb.SendMessageRequest(message=user_message("ask")), context=CALL)
        )
        msg = user_message("answer")
        msg.task_id, msg.context_id = asked[0]["task"]["id"], str(uuid.uuid4())
        return await collect(blocking.send_message(pb.SendMessageRequest(message=msg), context=CALL))

    await step("context_mismatch", mismatch)

    async def unknown_task() -> Any:
        msg = user_message("hello")
        msg.task_id = f"no-such-task-{uuid.uuid4()}"
        return await collect(blocking.send_message(pb.SendMessageRequest(message=msg), context=CALL))

    await step("message_unknown_task", unknown_task)

    # SubscribeToTask on a working task, then cancel it: the stream ends CANCELED.
    slow = pb.SendMessageRequest(
        message=user_message("slow 30"), configuration=pb.SendMessageConfiguration(return_immediately=True)
    )
    first = await collect(blocking.send_message(slow, context=CALL))
    slow_id = first[0]["task"]["id"]

    async def subscribe_and_cancel() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        got_first = asyncio.Event()

        async def read() -> None:
            async for event in streaming.subscribe(pb.SubscribeToTaskRequest(id=slow_id), context=CALL):
                events.append(to_json(event))
                got_first.set()

        reader = asyncio.create_task(read())
        await asyncio.wait_for(got_first.wait(), 10)
        await blocking.cancel_task(pb.CancelTaskRequest(id=slow_id), context=CALL)
        await asyncio.wait_for(reader, 10)
        return events

    await step("subscribe", subscribe_and_cancel)

    # Multi-turn: a stream that ends at INPUT_REQUIRED, then a follow-up on the same task.
    async def multi_turn() -> dict[str, Any]:
        asked = await collect(
            streaming.send_message(pb.SendMessageRequest(message=user_message("ask")), context=CALL)
        )
        last = asked[-1].get("statusUpdate") or asked[-1].get("task") or {}
        reply = user_message("the answer")
        reply.task_id = last.get("taskId") or last.get("id", "")
        reply.context_id = last.get("contextId", "")
        answered = await collect(blocking.send_message(pb.SendMessageRequest(message=reply), context=CALL))
        return {"asked": asked, "answered": answered}

    await step("multi_turn", multi_turn)

    # SubscribeToTask on an INPUT_REQUIRED task, answered while subscribed.
    async def subscribe_input_required() -> list[dict[str, Any]]:
        asked = await collect(
            blocking.send_message(pb.SendMessageRequest(message=user_message("ask")), context=CALL)
        )
        task = asked[0]["task"]
        events: list[dict[str, Any]] = []
        got_first = asyncio.Event()

        async def read() -> None:
            async for event in streaming.subscribe(pb.SubscribeToTaskRequest(id=task["id"]), context=CALL):
                events.append(to_json(event))
                got_first.set()

        reader = asyncio.create_task(read())
        await asyncio.wait_for(got_first.wait(), 10)
        reply = user_message("the answer")
        reply.task_id, reply.context_id = task["id"], task["contextId"]
        await collect(blocking.send_message(pb.SendMessageRequest(message=reply), context=CALL))
        await asyncio.wait_for(reader, 10)
        return events

    await step("subscribe_input_required", subscribe_input_required)

    # A direct Message answer (no task), blocking and streaming.
    await step(
        "reply",
        lambda: collect(
            blocking.send_message(pb.SendMessageRequest(message=user_message("reply")), context=CALL)
        ),
    )
    # The agent raises after WORKING: the task ends FAILED, and the blocking
    # call returns it (spec §3.2.2); the stream ends with the FAILED status.
    await step(
        "boom",
        lambda: collect(
            blocking.send_message(pb.SendMessageRequest(message=user_message("boom")), context=CALL)
        ),
    )
    await step(
        "boom_stream",
        lambda: collect(
            streaming.send_message(pb.SendMessageRequest(message=user_message("boom")), context=CALL)
        ),
    )
    await step(
        "reply_stream",
        lambda: collect(
            streaming.send_message(pb.SendMessageRequest(message=user_message("reply")), context=CALL)
        ),
    )

    # Every kind of Part, echoed back unchanged: bytes that differ between
    # base64 and base64url, a JSON data value, a URL, media types, file
    # names and metadata.
    async def all_parts() -> list[dict[str, Any]]:
        msg = user_message("")
        del msg.parts[:]
        text = pb.Part(text="héllo ✓", media_type="text/plain")
        text.metadata.update({"k": "v", "n": 1.5})
        data = pb.Part(media_type="application/json")
        data.data.struct_value.update({"list": [1, 2.5, "x", None, True], "nested": {"a": "b"}})
        msg.parts.extend(
            [
                text,
                pb.Part(
                    raw=bytes([0xFB, 0xFF, 0xFE, 0x00, 0x3E, 0x3F]),
                    media_type="application/octet-stream",
                    filename="b.bin",
                ),
                data,
                pb.Part(url="https://example.com/f.txt", media_type="text/plain", filename="f.txt"),
            ]
        )
        msg.metadata.update({"origin": "a2a-sdk"})
        return await collect(blocking.send_message(pb.SendMessageRequest(message=msg), context=CALL))

    await step("parts", all_parts)

    # The SDK's way to read "the" card: the extended one when the card declares it.
    await step(
        "extended_card",
        lambda: _json(blocking.get_extended_agent_card(pb.GetExtendedAgentCardRequest(), context=CALL)),
    )
    # SubscribeToTask on a terminal task (design.md A2: UnsupportedOperationError).
    await step(
        "subscribe_terminal",
        lambda: collect(streaming.subscribe(pb.SubscribeToTaskRequest(id=done_id), context=CALL)),
    )


async def _json(call: Awaitable[ProtoMessage]) -> dict[str, Any]:
    return to_json(await call)


async def review(base_url: str, binding: str, diff: str) -> None:
    """``--review DIFF``: the code-review agent, reached the SDK's way, reviews
    the diff given as a text part (blocking), a data part with a focus
    (streaming) and a ``text/x-diff`` file part; then a message without a diff
    (INPUT_REQUIRED) and the diff as the follow-up on the same task. Steps:
    ``review_card``, ``review_text``, ``review_data_stream``, ``review_file``,
    ``review_ask``, ``review_answer``."""
    config = ClientConfig(
        supported_protocol_bindings=[BINDINGS[binding]], grpc_channel_factory=grpc.aio.insecure_channel
    )
    async with httpx.AsyncClient(timeout=30.0) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
    emit("review_card", value=to_json(card))
    slow_call = ClientCallContext(timeout=60.0)  # ruff runs once per review
    blocking = ClientFactory(dataclasses.replace(config, streaming=False)).create(card)
    streaming = ClientFactory(dataclasses.replace(config, streaming=True)).create(card)
    try:

        def message(*parts: pb.Part) -> pb.SendMessageRequest:
            msg = user_message("")
            del msg.parts[:]
            msg.parts.extend(parts)
            return pb.SendMessageRequest(message=msg)

        await step(
            "review_text",
            lambda: collect(blocking.send_message(message(pb.Part(text=diff)), context=slow_call)),
        )
        data = pb.Part(media_type="application/json")
        data.data.struct_value.update({"diff": diff, "language": "python", "focus": ["security"]})
        await step(
            "review_data_stream", lambda: collect(streaming.send_message(message(data), context=slow_call))
        )
        file_part = pb.Part(raw=diff.encode(), media_type="text/x-diff", filename="change.diff")
        await step(
            "review_file", lambda: collect(blocking.send_message(message(file_part), context=slow_call))
        )
        asked = await step(
            "review_ask",
            lambda: collect(
                blocking.send_message(message(pb.Part(text="please review my change")), context=CALL)
            ),
        )
        if asked:
            follow = message(pb.Part(text=diff))
            follow.message.task_id = asked[0]["task"]["id"]
            follow.message.context_id = asked[0]["task"]["contextId"]
            await step("review_answer", lambda: collect(blocking.send_message(follow, context=slow_call)))
    finally:
        await blocking.close()
        await streaming.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base_url")
    parser.add_argument("binding", choices=sorted(BINDINGS))
    parser.add_argument("--review", metavar="DIFF", help="drive the code-review agent with this diff file")
    parser.add_argument("--webhook", metavar="URL", help="run the push steps with this webhook base URL")
    args = parser.parse_args()
    if args.review:
        asyncio.run(review(args.base_url, args.binding, Path(args.review).read_text(encoding="utf-8")))
    else:
        asyncio.run(main(args.base_url, args.binding, args.webhook))
