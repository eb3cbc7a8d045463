"""An A2A server built with the official Python SDK (``a2a-sdk``), for our client to drive.

Run ONLY as its own process (``python tests/interop/sdk_server.py``): ``a2a``
registers ``lf.a2a.v1`` in protobuf's default descriptor pool, which clashes
with a2a-grpc's protos.

The agent, written against the SDK's ``AgentExecutor`` API:

- ``slow [SECONDS]``: a SUBMITTED task, WORKING, then waits (default 30 s)
  and completes; ``cancel`` marks it CANCELED.
- ``reply``: a direct Message, no task.
- ``boom``: a SUBMITTED task, WORKING, then the executor raises.
- ``ask``: a SUBMITTED task, then INPUT_REQUIRED with a question; the next
  message on that task is echoed like any other.
- anything else: a SUBMITTED task, one artifact named ``echo`` holding the
  message's parts unchanged, then COMPLETED.

Push notification configs are stored (no sender: nothing is ever delivered)
and an extended card named ``SDK Echo (extended)`` is configured.

It is served on gRPC (``GrpcHandler``) and, on one HTTP port, JSON-RPC at
``/a2a/jsonrpc``, REST under ``/a2a/rest`` and the card at
``/.well-known/agent-card.json`` (Starlette routes from the SDK, run by
uvicorn), all on 127.0.0.1 ephemeral ports. Once everything listens it prints
``READY grpc=<port> http=<port>`` and serves until terminated.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket

import grpc
import uvicorn
from a2a.helpers.proto_helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from starlette.applications import Starlette

HOST = "127.0.0.1"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PREFIX = "/a2a/rest"


class EchoOrSlowExecutor(AgentExecutor):
    """Echo agent; ``slow [SECONDS]`` works until canceled or done."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        if context.current_task is None and context.get_user_input().split() == ["reply"]:
            await event_queue.enqueue_event(
                pb.Message(
                    role=pb.ROLE_AGENT,
                    message_id=f"reply-{task_id}",
                    context_id=context_id,
                    parts=[new_text_part("a direct reply")],
                )
            )
            return
        if context.current_task is None:
            task = new_task(task_id, context_id, pb.TaskState.TASK_STATE_SUBMITTED)
            if context.message is not None:
                task.history.append(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task_id, context_id)
        text = context.get_user_input()
        words = text.split()
        if context.current_task is None and words == ["ask"]:
            await updater.requires_input(updater.new_agent_message([new_text_part("what should I echo?")]))
            return
        if words == ["boom"]:
            await updater.start_work()
            raise RuntimeError("the agent broke")
        if words and words[0] == "slow":
            await updater.start_work()
            await asyncio.sleep(float(words[1]) if len(words) > 1 else 30.0)
            await updater.complete()
            return
        parts = list(context.message.parts) if context.message is not None else [new_text_part(text)]
        await updater.add_artifact(parts, name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def agent_card(grpc_port: int, http_port: int) -> pb.AgentCard:
    base = f"http://{HOST}:{http_port}"
    return pb.AgentCard(
        name="SDK Echo",
        description="Echoes the message text back as an artifact (a2a-sdk server).",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=f"{HOST}:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"),
            pb.AgentInterface(url=base + JSONRPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=base + REST_PREFIX, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True, extended_agent_card=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
    )


async def main() -> None:
    with socket.socket() as s:  # uvicorn needs the port before the card is built
        s.bind((HOST, 0))
        http_port = int(s.getsockname()[1])
    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port(f"{HOST}:0")
    card = agent_card(grpc_port, http_port)
    extended = pb.AgentCard()
    extended.CopyFrom(card)
    extended.name = "SDK Echo (extended)"
    handler = DefaultRequestHandler(
        agent_executor=EchoOrSlowExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        extended_agent_card=extended,
        push_config_store=InMemoryPushNotificationConfigStore(),  # configs are stored, never delivered
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    await grpc_server.start()

    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
            *create_rest_routes(handler, path_prefix=REST_PREFIX),
        ]
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
