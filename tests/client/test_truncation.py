"""A stream that stops before the task is terminal or interrupted raises
StreamTruncatedError on every binding, instead of looking like success.

The servers here are deliberately broken: a tiny aiohttp app (JSON-RPC and
HTTP+JSON) and a gRPC servicer whose streams send a WORKING task and close.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from aiohttp import web
from click.testing import CliRunner
from google.protobuf import json_format

from a2a_grpc.cli import main
from a2a_grpc.client import A2AClient, A2AError, ErrorCode, StreamTruncatedError
from a2a_grpc.types import pb, pb_grpc

WORKING = pb.StreamResponse(
    task=pb.Task(id="t1", context_id="c1", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
)


def _events(mode: str) -> list[pb.StreamResponse]:
    return [] if mode == "empty" else [WORKING]


class CutServicer(pb_grpc.A2AServiceServicer):
    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def SendStreamingMessage(self, request: Any, context: Any) -> AsyncIterator[pb.StreamResponse]:
        for event in _events(self.mode):
            yield event

    async def SubscribeToTask(self, request: Any, context: Any) -> AsyncIterator[pb.StreamResponse]:
        for event in _events(self.mode):
            yield event


def _sse(events: list[str]) -> bytes:
    return "".join(f"data: {e}\n\n" for e in events).encode()


async def _http_app(mode: str) -> web.AppRunner:
    async def rpc(request: web.Request) -> web.Response:
        body = await request.json()
        events = [
            json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": json_format.MessageToDict(e)})
            for e in _events(mode)
        ]
        return web.Response(body=_sse(events), content_type="text/event-stream")

    async def rest(request: web.Request) -> web.Response:
        events = [json.dumps(json_format.MessageToDict(e)) for e in _events(mode)]
        return web.Response(body=_sse(events), content_type="text/event-stream")

    async def card(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        return web.json_response(
            {
                "name": "cut",
                "description": "streams that stop early",
                "version": "1",
                "capabilities": {"streaming": True},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [],
                "supportedInterfaces": [
                    {"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                    {"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                ],
            }
        )

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    app.router.add_post("/rest/message:stream", rest)
    app.router.add_post("/rest/tasks/{id}:subscribe", rest)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


@pytest.fixture(params=["working", "empty"])
async def cut_clients(request: pytest.FixtureRequest) -> AsyncIterator[list[A2AClient]]:
    mode = request.param
    server = grpc.aio.server()
    pb_grpc.add_A2AServiceServicer_to_server(CutServicer(mode), server)
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    runner = await _http_app(mode)
    http_port = runner.addresses[0][1]
    clients = [
        A2AClient.for_interface(f"127.0.0.1:{grpc_port}", "grpc"),
        A2AClient.for_interface(f"http://127.0.0.1:{http_port}/rpc", "jsonrpc"),
        A2AClient.for_interface(f"http://127.0.0.1:{http_port}/rest", "rest"),
    ]
    try:
        yield clients
    finally:
        for c in clients:
            await c.close()
        await runner.cleanup()
        await server.stop(0)


async def test_cut_streams_raise_truncation(cut_clients: list[A2AClient]) -> None:
    for client in cut_clients:
        for start in (lambda c: c.send_streaming_message("hi"), lambda c: c.subscribe_to_task("t1")):
            seen: list[pb.StreamResponse] = []
            with pytest.raises(StreamTruncatedError) as info:
                async for event in start(client):  # type: ignore[no-untyped-call]
                    seen.append(event)  # noqa: PERF401 - keep events seen before the error
            err = info.value
            assert isinstance(err, A2AError) and err.code is ErrorCode.UNAVAILABLE, client.binding
            if seen:
                assert err.last_state == pb.TASK_STATE_WORKING and err.task_id == "t1"
                assert "TASK_STATE_WORKING" in err.message
            else:
                assert err.last_state == pb.TASK_STATE_UNSPECIFIED
                assert "before any event" in err.message


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_cli_reports_a_truncated_stream(binding: str) -> None:
    runner = await _http_app("working")
    try:
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        args = ["send", url, "hi", "--stream", "--binding", binding]
        result = await asyncio.to_thread(CliRunner().invoke, main, args)
        assert result.exit_code == 1
        assert result.stderr.startswith(
            "error: STREAM_TRUNCATED: SendStreamingMessage stream ended while task t1"
        )
        assert "Traceback" not in result.output
        assert "WORKING" in result.stdout  # what arrived was shown
    finally:
        await runner.cleanup()
