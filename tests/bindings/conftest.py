"""A tiny in-test servicer behind the real gateway app on 127.0.0.1.

``FakeServicer`` has the generated RPC names and uses its context exactly as
``A2AServicer`` does (``a2a_grpc.bindings._servicer.abort``: rich status in the
``grpc-status-details-bin`` trailer; ``a2a-extensions`` initial metadata), so
the HTTP layer is tested on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from a2a_grpc.bindings._http.app import create_app
from a2a_grpc.bindings._servicer import abort
from a2a_grpc.dialects._feature import Dialects
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

CARD = pb.AgentCard(
    name="Fake",
    description="fake agent",
    version="1",
    supported_interfaces=[
        pb.AgentInterface(url="http://x/", protocol_binding="JSONRPC", protocol_version="1.0")
    ],
)


@dataclass
class FakeServicer:
    """Records every call; behaviour is chosen by the request's id/text."""

    calls: list[tuple[str, Any, dict[str, str]]] = field(default_factory=list)
    stream_closed: asyncio.Event = field(default_factory=asyncio.Event)
    stream_started: asyncio.Event = field(default_factory=asyncio.Event)

    def _record(self, name: str, request: Any, context: Any) -> None:
        md = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
        self.calls.append((name, request, md))

    async def GetTask(self, request: pb.GetTaskRequest, context: Any) -> pb.Task:
        self._record("GetTask", request, context)
        if request.id.startswith("err-"):
            await abort(context, A2AError(ErrorCode[request.id[4:]], f"failed: {request.id}"))
        if request.id == "crash":
            raise RuntimeError("secret detail")
        await context.send_initial_metadata((("a2a-extensions", "urn:a,urn:b"),))
        return pb.Task(id=request.id, context_id=request.tenant or "ctx")

    async def ListTasks(self, request: pb.ListTasksRequest, context: Any) -> pb.ListTasksResponse:
        self._record("ListTasks", request, context)
        return pb.ListTasksResponse(page_size=request.page_size)

    async def DeleteTaskPushNotificationConfig(self, request: Any, context: Any) -> Any:
        from google.protobuf import empty_pb2

        self._record("DeleteTaskPushNotificationConfig", request, context)
        return empty_pb2.Empty()

    async def CancelTask(self, request: pb.CancelTaskRequest, context: Any) -> pb.Task:
        self._record("CancelTask", request, context)
        return pb.Task(id=request.id, metadata=request.metadata)

    async def SendMessage(self, request: pb.SendMessageRequest, context: Any) -> pb.SendMessageResponse:
        self._record("SendMessage", request, context)
        return pb.SendMessageResponse(message=request.message)

    async def SendStreamingMessage(
        self, request: pb.SendMessageRequest, context: Any
    ) -> AsyncIterator[pb.StreamResponse]:
        self._record("SendStreamingMessage", request, context)
        text = request.message.parts[0].text if request.message.parts else ""
        if text == "fail-first":
            await abort(context, A2AError(ErrorCode.UNSUPPORTED_OPERATION, "no stream for you"))
        await context.send_initial_metadata((("a2a-extensions", "urn:s"),))
        self.stream_started.set()
        try:
            for i in range(3):
                yield pb.StreamResponse(message=pb.Message(message_id=f"m{i}", parts=[pb.Part(text=text)]))
            if text == "fail-mid":
                await abort(context, A2AError(ErrorCode.TASK_NOT_FOUND, "gone mid-stream"))
            if text == "crash-mid":
                raise RuntimeError("secret detail")
            if text in ("hang", "slow"):
                await asyncio.sleep(3600 if text == "hang" else 0.7)
                yield pb.StreamResponse(message=pb.Message(message_id="late"))
        finally:
            self.stream_closed.set()

    def SubscribeToTask(
        self, request: pb.SubscribeToTaskRequest, context: Any
    ) -> AsyncIterator[pb.StreamResponse]:
        return self._subscribe(request, context)

    async def _subscribe(
        self, request: pb.SubscribeToTaskRequest, context: Any
    ) -> AsyncIterator[pb.StreamResponse]:
        self._record("SubscribeToTask", request, context)
        if request.id == "empty":
            return
        yield pb.StreamResponse(task=pb.Task(id=request.id))


@dataclass
class Gateway:
    base: str
    servicer: FakeServicer
    session: aiohttp.ClientSession
    card: list[pb.AgentCard]


@pytest.fixture
async def gw() -> AsyncIterator[Gateway]:
    servicer = FakeServicer()
    card = [CARD]
    app = create_app(
        servicer,
        lambda: card[0],
        keepalive_seconds=0.2,
        card_max_age_seconds=60,
        max_body_bytes=64 * 1024,
        mounts=Dialects().http_mounts(),  # as a server mounts them: the legacy card paths
    )
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    async with aiohttp.ClientSession() as session:
        yield Gateway(f"http://127.0.0.1:{port}", servicer, session, card)
    await runner.cleanup()
