"""The echo agent served by the official ``a2a-sdk`` 1.x, over gRPC, JSON-RPC and REST.

Run ONLY as its own process (``python -m bench.servers.sdk_echo``): ``a2a`` registers
``lf.a2a.v1`` in the default descriptor pool, which clashes with a2a-grpc's protos.

The agent answers every message with a task: SUBMITTED task, one artifact echoing the
message text, then COMPLETED — the same events as a2a-grpc's ``echo`` agent. Built only
from the SDK's public API: ``DefaultRequestHandler``, ``GrpcHandler``,
``create_jsonrpc_routes``, ``create_rest_routes`` and ``create_agent_card_routes`` on
Starlette, served by uvicorn; the store is ``InMemoryTaskStore`` or ``DatabaseTaskStore``
on SQLite (``--store sqlite:///PATH``, aiosqlite) or PostgreSQL (``--store
postgresql://USER@HOST[:PORT]/DB``, asyncpg; the SDK's default engine settings). Prints ``READY grpc=<port> http=<port>`` once both
listen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys

import grpc
import uvicorn
from a2a.helpers.proto_helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2, a2a_pb2_grpc
from starlette.applications import Starlette

JSONRPC_PATH = "/a2a/jsonrpc"
REST_PREFIX = "/a2a/rest"


class EchoExecutor(AgentExecutor):
    """Completes every task with one artifact holding the message text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        if context.current_task is None:
            task = new_task(task_id, context_id, a2a_pb2.TaskState.TASK_STATE_SUBMITTED)
            if context.message is not None:
                task.history.append(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.add_artifact([new_text_part(context.get_user_input())], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def _card(host: str, grpc_port: int, http_port: int) -> a2a_pb2.AgentCard:
    base = f"http://{host}:{http_port}"
    return a2a_pb2.AgentCard(
        name="echo",
        description="Echoes the message text back as an artifact.",
        version="1.0.0",
        supported_interfaces=[
            a2a_pb2.AgentInterface(
                url=f"{host}:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
            ),
            a2a_pb2.AgentInterface(
                url=base + JSONRPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            a2a_pb2.AgentInterface(
                url=base + REST_PREFIX, protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=a2a_pb2.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[a2a_pb2.AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
    )


async def _make_store(url: str):  # type: ignore[no-untyped-def]
    if url == "memory":
        return InMemoryTaskStore()
    if url.startswith("sqlite:///"):
        engine_url = "sqlite+aiosqlite:///" + url.removeprefix("sqlite:///")
    elif url.startswith(("postgresql://", "postgres://")):
        engine_url = "postgresql+asyncpg://" + url.split("://", 1)[1]
    else:
        raise SystemExit(f"unknown store {url!r} (memory | sqlite:///PATH | postgresql://USER@HOST/DB)")
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    store = DatabaseTaskStore(create_async_engine(engine_url))
    await store.initialize()
    return store


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--grpc-port", type=int, default=0)
    ap.add_argument("--http-port", type=int, default=0)
    ap.add_argument("--store", default="memory")
    args = ap.parse_args(argv)
    host = args.host
    http_port = args.http_port or _free_port(host)

    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port(f"{host}:{args.grpc_port}")
    card = _card(host, grpc_port, http_port)
    store = await _make_store(args.store)
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=store, agent_card=card)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    await grpc_server.start()

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
        *create_rest_routes(handler, path_prefix=REST_PREFIX),
    ]
    app = Starlette(routes=routes)
    config = uvicorn.Config(
        app, host=host, port=http_port, log_level="warning", access_log=False, loop="none"
    )
    server = uvicorn.Server(config)
    serve = asyncio.create_task(server.serve())
    while not server.started:
        if serve.done():
            serve.result()
            raise SystemExit("uvicorn did not start")
        await asyncio.sleep(0.02)
    print(f"READY grpc={grpc_port} http={http_port}", flush=True)
    try:
        await serve
    finally:
        await grpc_server.stop(0.5)
        with contextlib.suppress(Exception):
            await store.close() if hasattr(store, "close") else None


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(sys.argv[1:]))
