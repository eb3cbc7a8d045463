"""In-process micro-benchmarks: what one request costs in each layer, without sockets.

``python -m bench.micro`` times, in microseconds per call (median of 5 rounds):

- ``RequestHandler.send_message`` with the echo agent on the in-memory and the SQLite
  store (the core alone: validation, execution task, store writes, fan-out);
- ``RequestHandler.get_task`` (in-memory);
- the ProtoJSON codec on the SendMessage answer (``a2a_grpc.protocol.protojson.to_dict`` +
  ``json.dumps``) and on the request (``json.loads`` + ``a2a_grpc.protocol.protojson.parse``);
- protobuf binary encode/decode of the same messages (what gRPC pays).

Figures are process CPU time per call (all threads), not wall time.

Subtracting these from the per-request server CPU of the matrix (``CPU µs/req``)
gives the transport share. It runs pinned to one CPU when it can.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from a2a_grpc.agents import load_agent
from a2a_grpc.context import CallContext
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.protocol import protojson
from a2a_grpc.store import open_store
from a2a_grpc.types import pb

_SEND = "/lf.a2a.v1.A2AService/SendMessage"
_GET = "/lf.a2a.v1.A2AService/GetTask"


def _request() -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="x" * 100)])
    )


def _call(method: str) -> CallContext:
    return CallContext.from_metadata(method, (("a2a-version", "1.0"),))


# CPU time of the whole process (all threads: aiosqlite's worker included), not wall
# time: on a shared machine it barely moves when a neighbour takes the core.
_clock = time.process_time


async def _time_async(fn: Callable[[], Awaitable[Any]], n: int, rounds: int = 5) -> float:
    per: list[float] = []
    for _ in range(rounds):
        t = _clock()
        for _ in range(n):
            await fn()
        per.append((_clock() - t) / n * 1e6)
    return statistics.median(per)


def _time_sync(fn: Callable[[], Any], n: int, rounds: int = 5) -> float:
    per: list[float] = []
    for _ in range(rounds):
        t = _clock()
        for _ in range(n):
            fn()
        per.append((_clock() - t) / n * 1e6)
    return statistics.median(per)


async def _handler_rows(n: int) -> list[tuple[str, float]]:
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, url in (("memory", "memory"), ("sqlite", f"sqlite:///{Path(tmp) / 'm.db'}")):
            agent = load_agent("echo")
            store = open_store(url)
            await store.open()
            handler = RequestHandler(agent, store, agent.card)
            try:

                async def send(h: RequestHandler = handler) -> Any:
                    return await h.send_message(_request(), _call(_SEND))

                k = n if name == "memory" else max(200, n // 10)
                await _time_async(send, min(k, 500), rounds=1)  # warm-up
                rows.append((f"RequestHandler.send_message, echo, {name} store", await _time_async(send, k)))
                if name == "memory":
                    task_id = (await send()).task.id

                    async def get(h: RequestHandler = handler, tid: str = task_id) -> Any:
                        return await h.get_task(pb.GetTaskRequest(id=tid), _call(_GET))

                    rows.append(("RequestHandler.get_task, memory store", await _time_async(get, n)))
            finally:
                await handler.close()
                await store.close()
    return rows


def _codec_rows(n: int, answer: pb.SendMessageResponse) -> list[tuple[str, float]]:
    req = _request()
    req_json = json.dumps(protojson.to_dict(req)).encode()
    ans_bin = answer.SerializeToString()
    req_bin = req.SerializeToString()
    return [
        (
            "ProtoJSON encode SendMessageResponse (to_dict + json.dumps)",
            _time_sync(lambda: protojson.dumps(protojson.to_dict(answer)), n),
        ),
        (
            "ProtoJSON decode SendMessageRequest (json.loads + parse)",
            _time_sync(lambda: protojson.parse(json.loads(req_json), pb.SendMessageRequest()), n),
        ),
        ("protobuf binary encode SendMessageResponse", _time_sync(answer.SerializeToString, n)),
        (
            "protobuf binary decode SendMessageRequest",
            _time_sync(lambda: pb.SendMessageRequest.FromString(req_bin), n),
        ),
        (
            "protobuf binary decode SendMessageResponse",
            _time_sync(lambda: pb.SendMessageResponse.FromString(ans_bin), n),
        ),
    ]


async def main() -> int:
    from bench.procs import pin_self

    pin_self(0)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rows = await _handler_rows(n)
    agent = load_agent("echo")
    store = open_store("memory")
    await store.open()
    handler = RequestHandler(agent, store, agent.card)
    answer = await handler.send_message(_request(), _call(_SEND))
    await handler.close()
    rows += _codec_rows(n, answer)
    width = max(len(r[0]) for r in rows)
    print(f"{'what':{width}}  CPU µs/call")
    for name, us in rows:
        print(f"{name:{width}}  {us:8.1f}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    sys.exit(asyncio.run(main()))
