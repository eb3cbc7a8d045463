"""An A2A **v0.3** server built with the official Python SDK 0.3.x, for our client to drive.

Run ONLY in the ``a2a-sdk==0.3.*`` virtualenv (``tests/interop/test_sdk03_server.py``
makes it), as its own process: ``python tests/interop/sdk03_server.py``.

The agent, written against the 0.3 SDK's ``AgentExecutor`` API (pydantic
types on the v0.3 wire):

- ``slow [SECONDS]``: a submitted task, working, then waits (default 30 s)
  and completes; ``cancel`` marks it canceled.
- ``reply``: a direct Message, no task.
- ``ask``: a submitted task, then input-required with a question; the next
  message on that task is echoed like any other.
- ``naive``: completes with status timestamps that carry no time zone
  (``2025-07-31T10:00:00``), which the v0.3 JSON schema allows (C20).
- ``unknown``: a task whose status is the v0.3 state ``unknown`` (C9).
- anything else: a submitted task, one artifact named ``echo`` holding the
  message's parts unchanged, then completed.

Push notification configs are stored (nothing is delivered). An extended card
named ``SDK 0.3 Echo (extended)`` is served.

One HTTP port serves the card at ``/.well-known/agent-card.json``, JSON-RPC at
``/jsonrpc`` and HTTP+JSON under ``/rest`` (``/rest/v1/message:send`` ...); gRPC
(``a2a.v1.A2AService``, with server reflection) has its own port; all on 127.0.0.1 ephemeral ports.
The card's ``url`` is the JSON-RPC endpoint and ``additionalInterfaces`` lists
all three. Once everything listens it prints ``READY grpc=<port> http=<port>``
and serves until terminated.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import uuid

import grpc
import uvicorn
from a2a.grpc import a2a_pb2, a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    TaskState,
    TextPart,
)
from a2a.utils import new_task
from grpc_reflection.v1alpha import reflection

HOST = "127.0.0.1"
JSONRPC_PATH = "/jsonrpc"
REST_PREFIX = "/rest"


class EchoExecutor(AgentExecutor):
    """Echo agent; the words above pick the other behaviours."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        words = context.get_user_input().split()
        task = context.current_task
        if task is None and words == ["reply"]:
            reply = Message(
                role=Role.agent,
                message_id=str(uuid.uuid4()),
                context_id=context.context_id,
                parts=[Part(root=TextPart(text="a direct reply"))],
            )
            await event_queue.enqueue_event(reply)
            return
        if task is None:
            assert context.message is not None
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if context.current_task is None and words == ["ask"]:
            await updater.requires_input(
                updater.new_agent_message([Part(root=TextPart(text="what to echo?"))])
            )
            return
        if words == ["unknown"]:
            await updater.update_status(TaskState.unknown, final=True)
            return
        if words == ["naive"]:
            await updater.update_status(TaskState.working, timestamp="2025-07-31T10:00:00")
            await updater.update_status(TaskState.completed, timestamp="2025-07-31T10:00:01.5", final=True)
            return
        if words and words[0] == "slow":
            await updater.start_work()
            await asyncio.sleep(float(words[1]) if len(words) > 1 else 30.0)
            await updater.complete()
            return
        parts = list(context.message.parts) if context.message is not None else []
        await updater.add_artifact(parts, name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def agent_card(grpc_port: int, http_port: int) -> AgentCard:
    base = f"http://{HOST}:{http_port}"
    return AgentCard(
        name="SDK 0.3 Echo",
        description="Echoes the message parts back as an artifact (a2a-sdk 0.3 server).",
        version="0.3.0",
        protocol_version="0.3.0",
        url=base + JSONRPC_PATH,
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url=base + JSONRPC_PATH, transport="JSONRPC"),
            AgentInterface(url=f"{HOST}:{grpc_port}", transport="GRPC"),
            AgentInterface(url=base + REST_PREFIX, transport="HTTP+JSON"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes parts.", tags=["echo"])],
        supports_authenticated_extended_card=True,
    )


async def main() -> None:
    with socket.socket() as s:  # uvicorn needs the port before the card is built
        s.bind((HOST, 0))
        http_port = int(s.getsockname()[1])
    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port(f"{HOST}:0")
    card = agent_card(grpc_port, http_port)
    extended = card.model_copy(update={"name": "SDK 0.3 Echo (extended)"})
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), grpc_server)
    service = a2a_pb2.DESCRIPTOR.services_by_name["A2AService"].full_name
    reflection.enable_server_reflection([service, reflection.SERVICE_NAME], grpc_server)
    await grpc_server.start()

    app = A2ARESTFastAPIApplication(card, handler, extended_agent_card=extended).build(rpc_url=REST_PREFIX)
    A2AStarletteApplication(card, handler, extended_agent_card=extended).add_routes_to_app(
        app, rpc_url=JSONRPC_PATH
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host=HOST, port=http_port, log_level="warning", access_log=False, loop="none")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            raise SystemExit("uvicorn did not start")
        await asyncio.sleep(0.02)
    print(f"READY grpc={grpc_port} http={http_port}", flush=True)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: setattr(server, "should_exit", True))
    try:
        await serving
    finally:
        await grpc_server.stop(0.5)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
