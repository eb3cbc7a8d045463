"""Drives an authenticated A2A server with the official Python SDK (``a2a-sdk``).

Run ONLY as its own process (the SDK's protos clash with ours)::

    python tests/auth/sdk_auth_client.py BASE_URL BINDING API_KEY

The SDK reads the card's ``securitySchemes`` itself: its ``AuthInterceptor``
with an ``InMemoryContextCredentialStore`` attaches the key under the header
the card names. Prints one JSON object per step: ``card`` (the scheme names),
``anonymous`` (ListTasks without credentials: must fail), ``send`` (a blocking
message: the task), ``get`` and ``list`` (with the key).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor, InMemoryContextCredentialStore
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format

BINDINGS = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}


def emit(step: str, value: Any = None, error: BaseException | None = None) -> None:
    record: dict[str, Any] = {"step": step, "ok": error is None}
    if error is None:
        record["value"] = value
    else:
        record["error"] = {"type": type(error).__name__, "message": str(error)}
    print(json.dumps(record, default=str), flush=True)


async def main(base_url: str, binding: str, api_key: str) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
    emit("card", sorted(card.security_schemes))
    config = ClientConfig(
        streaming=False,
        supported_protocol_bindings=[BINDINGS[binding]],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    anonymous = ClientFactory(config).create(card)
    try:
        await anonymous.list_tasks(pb.ListTasksRequest(), context=ClientCallContext(timeout=15))
    except Exception as exc:
        emit("anonymous", error=exc)
    else:
        emit("anonymous", "listed without credentials")

    store = InMemoryContextCredentialStore()
    for scheme in card.security_schemes:
        await store.set_credentials("s1", scheme, api_key)
    client = ClientFactory(config).create(card, [AuthInterceptor(store)])
    ctx = ClientCallContext(state={"sessionId": "s1"}, timeout=15)
    msg = pb.Message(role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(text="hello sdk")])
    try:
        events = [e async for e in client.send_message(pb.SendMessageRequest(message=msg), context=ctx)]
        task = events[-1].task
        emit("send", {"id": task.id, "state": pb.TaskState.Name(task.status.state)})
        got = await client.get_task(pb.GetTaskRequest(id=task.id), context=ctx)
        emit("get", json_format.MessageToDict(got.status))
        listed = await client.list_tasks(pb.ListTasksRequest(), context=ctx)
        emit("list", [t.id for t in listed.tasks])
    except Exception as exc:
        emit("send", error=exc)
    finally:
        await anonymous.close()
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
