"""Our client reading a v0.3 agent's card that does not fit the v0.3 shape: INVALID_AGENT_RESPONSE
naming the field, never a Python error. The card is served over a real socket on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError, ErrorCode
from tests.ports import free_port

CARD = {
    "name": "Old Agent",
    "description": "a v0.3 agent",
    "url": "http://127.0.0.1:9/",
    "version": "1",
    "protocolVersion": "0.3.0",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}


@pytest.fixture
async def serve_card() -> AsyncIterator[Any]:
    cards: list[dict[str, Any]] = []

    async def card(_: web.Request) -> web.Response:
        return web.json_response(cards[-1])

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()

    def serve(value: dict[str, Any]) -> str:
        cards.append(value)
        return f"http://127.0.0.1:{port}"

    try:
        yield serve
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    "field",
    [
        {"security": [{"oauth": None}]},
        {"security": [{"oauth": 5}]},
        {"security": [{"oauth": "read"}]},
        {"skills": [{"id": "s", "name": "s", "description": "d", "tags": [], "security": [{"k": 1}]}]},
    ],
)
async def test_a_v03_card_with_bad_security_scopes_is_an_invalid_agent_response(
    serve_card: Any, field: dict[str, Any]
) -> None:
    url = serve_card({**CARD, **field})
    with pytest.raises(A2AError) as refused:
        await A2AClient.connect(url)
    assert refused.value.code is ErrorCode.INVALID_AGENT_RESPONSE
    assert "security" in refused.value.message
