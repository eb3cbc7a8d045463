"""Ceiling: bare aiohttp JSON-RPC and REST endpoints with hand-built JSON.

``POST /jsonrpc`` (SendMessage, SendStreamingMessage, GetTask) and ``POST
/rest/message:send``, ``POST /rest/message:stream``, ``GET /rest/tasks/{id}`` answer
with dicts built by hand and the stdlib ``json`` codec: no protobuf, no store, no
validation — the upper bound for any A2A HTTP binding on aiohttp. Serves an agent card
at ``/.well-known/agent-card.json`` naming both. Prints ``READY http=<port>``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import uuid
from typing import Any

from aiohttp import web

_JSON = "application/json"


def _echo_task(
    msg: dict[str, Any], state: str = "TASK_STATE_COMPLETED", artifacts: bool = True
) -> dict[str, Any]:
    parts = msg.get("parts") or [{}]
    task: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "contextId": msg.get("contextId") or str(uuid.uuid4()),
        "status": {"state": state},
        "history": [msg],
    }
    if artifacts:
        task["artifacts"] = [
            {"artifactId": str(uuid.uuid4()), "name": "echo", "parts": [{"text": parts[0].get("text", "")}]}
        ]
    return task


def _stream_events(msg: dict[str, Any]) -> list[dict[str, Any]]:
    task = _echo_task(msg, "TASK_STATE_SUBMITTED", artifacts=False)
    ids = {"taskId": task["id"], "contextId": task["contextId"]}
    text = (msg.get("parts") or [{}])[0].get("text", "")
    return [
        {"task": task},
        {"artifactUpdate": {**ids, "artifact": {"artifactId": str(uuid.uuid4()), "parts": [{"text": text}]}}},
        {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_COMPLETED"}}},
    ]


def _get_task(task_id: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "contextId": "ctx",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a", "name": "echo", "parts": [{"text": "x" * 100}]}],
    }


async def _sse(request: web.Request, payloads: list[Any]) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    for p in payloads:
        await resp.write(b"data: " + json.dumps(p).encode() + b"\n\n")
    await resp.write_eof()
    return resp


async def jsonrpc(request: web.Request) -> web.StreamResponse:
    body = json.loads(await request.read())
    rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}
    if method == "SendMessage":
        result: Any = {"task": _echo_task(params["message"])}
    elif method == "GetTask":
        result = _get_task(params["id"])
    elif method == "SendStreamingMessage":
        return await _sse(
            request, [{"jsonrpc": "2.0", "id": rid, "result": ev} for ev in _stream_events(params["message"])]
        )
    else:
        err = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}
        return web.Response(text=json.dumps(err), content_type=_JSON)
    return web.Response(text=json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), content_type=_JSON)


async def rest_send(request: web.Request) -> web.Response:
    body = json.loads(await request.read())
    return web.Response(text=json.dumps({"task": _echo_task(body["message"])}), content_type=_JSON)


async def rest_stream(request: web.Request) -> web.StreamResponse:
    body = json.loads(await request.read())
    return await _sse(request, _stream_events(body["message"]))


async def rest_get_task(request: web.Request) -> web.Response:
    return web.Response(text=json.dumps(_get_task(request.match_info["id"])), content_type=_JSON)


async def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--http-port", type=int, default=0)
    args = ap.parse_args(argv)
    app = web.Application()
    card: dict[str, Any] = {}

    async def agent_card(request: web.Request) -> web.Response:
        return web.json_response(card)

    app.router.add_get("/.well-known/agent-card.json", agent_card)
    app.router.add_post("/jsonrpc", jsonrpc)
    app.router.add_post("/rest/message:send", rest_send)
    app.router.add_post("/rest/message:stream", rest_stream)
    app.router.add_get("/rest/tasks/{id}", rest_get_task)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.http_port)
    await site.start()
    port = runner.addresses[0][1]
    base = f"http://{args.host}:{port}"
    card.update(
        name="bare",
        supportedInterfaces=[
            {"url": base + "/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
    )
    print(f"READY http={port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(sys.argv[1:]))
