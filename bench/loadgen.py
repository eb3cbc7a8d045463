"""Closed-loop async load generator for A2A servers over gRPC, JSON-RPC and REST.

A fixed number of workers (the concurrency) each send one request, check the answer
and send the next, for a warm-up and then for a number of measurement windows. Every
answer is parsed and checked: ``SendMessage`` must return a COMPLETED task whose
artifact echoes the text sent; ``SendStreamingMessage`` must stream to the end, reach
COMPLETED and carry the echoed artifact; ``GetTask`` must return the asked task,
COMPLETED. Anything else (transport error, error answer, wrong content) is counted as
an error, never as a request served.

gRPC goes through a2a-grpc's generated stubs on ``grpc.aio``; JSON-RPC and REST go over
aiohttp with the stdlib ``json`` codec. The A2A-Version service parameter is 1.0.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import uuid
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import grpc

from a2a_grpc.types import pb, pb_grpc

__all__ = [
    "BINDINGS",
    "METHODS",
    "CheckError",
    "Client",
    "Endpoints",
    "GrpcClient",
    "HttpJsonClient",
    "JsonRpcClient",
    "RoundRobinClient",
    "WindowResult",
    "discover",
    "make_client",
    "make_text",
    "run_load",
]

BINDINGS = ("grpc", "jsonrpc", "rest")
METHODS = ("SendMessage", "SendStreamingMessage", "GetTask")
VERSION = "1.0"
TIMEOUT_S = 10.0
_COMPLETED = "TASK_STATE_COMPLETED"
_JSON_HEADERS = {"Content-Type": "application/json", "A2A-Version": VERSION}
_SSE_HEADERS = {**_JSON_HEADERS, "Accept": "text/event-stream"}


class CheckError(Exception):
    """The server answered, but not what the A2A echo agent must answer."""


_counter = itertools.count()

#: Tasks this process has seen created (successful SendMessage / SendStreamingMessage
#: answers, warm-up and GetTask set-up included): how much the server stores.
TASKS_CREATED = [0]


def make_text(size: int = 100) -> str:
    """A unique ASCII text of exactly ``size`` bytes (a counter padded with 'x')."""
    head = f"{next(_counter):012d}-"
    return (head + "x" * size)[:size] if size > len(head) else head[:size]


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where one server listens: ``host:port`` for gRPC and the JSON-RPC / REST base
    URLs (from its agent card). Missing bindings are None."""

    grpc: str | None = None
    jsonrpc: str | None = None
    rest: str | None = None

    def has(self, binding: str) -> bool:
        return getattr(self, binding) is not None


async def discover(grpc_port: int | None, http_port: int | None, host: str = "127.0.0.1") -> Endpoints:
    """Reads ``/.well-known/agent-card.json`` (when there is an HTTP port) to find the
    JSON-RPC and HTTP+JSON URLs; the gRPC address is ``host:grpc_port``."""
    jsonrpc = rest = None
    if http_port:
        async with (
            aiohttp.ClientSession() as s,
            s.get(f"http://{host}:{http_port}/.well-known/agent-card.json") as r,
        ):
            r.raise_for_status()
            card = json.loads(await r.read())
        for itf in card.get("supportedInterfaces") or card.get("supported_interfaces") or []:
            binding = itf.get("protocolBinding") or itf.get("protocol_binding")
            url = str(itf.get("url", "")).rstrip("/")
            tenant = itf.get("tenant") or ""
            if tenant and binding == "HTTP+JSON":
                url = f"{url}/{tenant}"
            if binding == "JSONRPC" and jsonrpc is None:
                jsonrpc = url
            elif binding == "HTTP+JSON" and rest is None:
                rest = url
    return Endpoints(grpc=f"{host}:{grpc_port}" if grpc_port else None, jsonrpc=jsonrpc, rest=rest)


# --- answer checks (ProtoJSON dicts) -------------------------------------------------


def _json_task_echoes(task: dict[str, Any], text: str) -> str:
    state = (task.get("status") or {}).get("state")
    if state != _COMPLETED:
        raise CheckError(f"task state {state!r}, want {_COMPLETED}")
    for art in task.get("artifacts") or ():
        for part in art.get("parts") or ():
            if part.get("text") == text:
                return str(task["id"])
    raise CheckError("no artifact echoes the text")


def _json_stream_echoes(events: list[dict[str, Any]], text: str) -> str:
    if not events:
        raise CheckError("empty stream")
    task_id = ""
    echoed = False
    state = None
    for ev in events:
        if "task" in ev:
            t = ev["task"]
            task_id = t.get("id", task_id)
            state = (t.get("status") or {}).get("state")
            for art in t.get("artifacts") or ():
                echoed = echoed or any(p.get("text") == text for p in art.get("parts") or ())
        elif "artifactUpdate" in ev:
            a = ev["artifactUpdate"]
            task_id = task_id or a.get("taskId", "")
            echoed = echoed or any(
                p.get("text") == text for p in (a.get("artifact") or {}).get("parts") or ()
            )
        elif "statusUpdate" in ev:
            s = ev["statusUpdate"]
            task_id = task_id or s.get("taskId", "")
            state = (s.get("status") or {}).get("state")
        else:
            raise CheckError(f"unexpected stream event {sorted(ev)}")
    if state != _COMPLETED:
        raise CheckError(f"stream ended in state {state!r}")
    if not echoed:
        raise CheckError("no streamed artifact echoes the text")
    return task_id


def _pb_task_echoes(task: pb.Task, text: str) -> str:
    if task.status.state != pb.TASK_STATE_COMPLETED:
        raise CheckError(f"task state {pb.TaskState.Name(task.status.state)}")
    for art in task.artifacts:
        for part in art.parts:
            if part.text == text:
                return task.id
    raise CheckError("no artifact echoes the text")


def _user_message(text: str) -> pb.Message:
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)])


def _json_message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


# --- clients ------------------------------------------------------------------------


class Client:
    """One binding's client. Each call returns the task id or raises."""

    async def send(self, text: str) -> str:
        raise NotImplementedError

    async def stream(self, text: str) -> str:
        raise NotImplementedError

    async def get(self, task_id: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class GrpcClient(Client):
    """gRPC through the generated ``A2AServiceStub`` on ``grpc.aio`` channels
    (calls spread round-robin over ``channels`` HTTP/2 connections)."""

    def __init__(self, address: str, channels: int = 1) -> None:
        self._channels = [grpc.aio.insecure_channel(address) for _ in range(max(1, channels))]
        self._stubs = [pb_grpc.A2AServiceStub(ch) for ch in self._channels]
        self._rr = itertools.cycle(self._stubs)
        self._md = (("a2a-version", VERSION),)

    async def send(self, text: str) -> str:
        resp = await next(self._rr).SendMessage(
            pb.SendMessageRequest(message=_user_message(text)), metadata=self._md, timeout=TIMEOUT_S
        )
        if resp.WhichOneof("payload") != "task":
            raise CheckError(f"SendMessage payload {resp.WhichOneof('payload')!r}, want task")
        TASKS_CREATED[0] += 1
        return _pb_task_echoes(resp.task, text)

    async def stream(self, text: str) -> str:
        call = next(self._rr).SendStreamingMessage(
            pb.SendMessageRequest(message=_user_message(text)), metadata=self._md, timeout=TIMEOUT_S
        )
        task_id, echoed, state = "", False, 0
        n = 0
        async for ev in call:
            n += 1
            kind = ev.WhichOneof("payload")
            if kind == "task":
                task_id, state = ev.task.id, ev.task.status.state
                echoed = echoed or any(p.text == text for a in ev.task.artifacts for p in a.parts)
            elif kind == "artifact_update":
                task_id = task_id or ev.artifact_update.task_id
                echoed = echoed or any(p.text == text for p in ev.artifact_update.artifact.parts)
            elif kind == "status_update":
                task_id = task_id or ev.status_update.task_id
                state = ev.status_update.status.state
            else:
                raise CheckError(f"unexpected stream event {kind!r}")
        if not n:
            raise CheckError("empty stream")
        if state != pb.TASK_STATE_COMPLETED:
            raise CheckError(f"stream ended in state {state}")
        if not echoed:
            raise CheckError("no streamed artifact echoes the text")
        TASKS_CREATED[0] += 1
        return task_id

    async def get(self, task_id: str) -> None:
        task = await next(self._rr).GetTask(
            pb.GetTaskRequest(id=task_id), metadata=self._md, timeout=TIMEOUT_S
        )
        if task.id != task_id or task.status.state != pb.TASK_STATE_COMPLETED:
            raise CheckError(f"GetTask returned {task.id!r} in state {task.status.state}")

    async def close(self) -> None:
        for ch in self._channels:
            await ch.close()


class _HttpClient(Client):
    def __init__(self, base: str, concurrency: int) -> None:
        self.base = base
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency),
            timeout=aiohttp.ClientTimeout(total=TIMEOUT_S),
            skip_auto_headers=("User-Agent",),
        )

    async def _sse(self, resp: aiohttp.ClientResponse) -> list[Any]:
        """The JSON payloads of every SSE event of the response, in order."""
        ctype = resp.headers.get("Content-Type", "")
        if resp.status != 200 or not ctype.startswith("text/event-stream"):
            raise CheckError(f"stream answered HTTP {resp.status} {ctype}: {(await resp.read())[:200]!r}")
        out: list[Any] = []
        data: list[bytes] = []
        async for raw in resp.content:
            line = raw.rstrip(b"\r\n")
            if not line:
                if data:
                    out.append(json.loads(b"\n".join(data)))
                    data = []
            elif line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" "))
        if data:
            out.append(json.loads(b"\n".join(data)))
        return out

    async def close(self) -> None:
        await self.session.close()


class JsonRpcClient(_HttpClient):
    """JSON-RPC 2.0 over aiohttp: POST the envelope to the card's JSONRPC URL."""

    _ids = itertools.count(1)

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        rid = next(self._ids)
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        async with self.session.post(self.base, data=body, headers=_JSON_HEADERS) as r:
            raw = await r.read()
        if r.status != 200:
            raise CheckError(f"{method}: HTTP {r.status}: {raw[:200]!r}")
        env = json.loads(raw)
        if env.get("id") != rid or "error" in env:
            raise CheckError(f"{method}: {env.get('error') or 'id mismatch'}")
        return env["result"]

    async def send(self, text: str) -> str:
        result = await self._call("SendMessage", {"message": _json_message(text)})
        if "task" not in result:
            raise CheckError(f"SendMessage result {sorted(result)}, want task")
        TASKS_CREATED[0] += 1
        return _json_task_echoes(result["task"], text)

    async def stream(self, text: str) -> str:
        rid = next(self._ids)
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "SendStreamingMessage",
                "params": {"message": _json_message(text)},
            }
        )
        async with self.session.post(self.base, data=body, headers=_SSE_HEADERS) as r:
            envs = await self._sse(r)
        events = []
        for env in envs:
            if env.get("id") != rid or "error" in env:
                raise CheckError(f"stream event: {env.get('error') or 'id mismatch'}")
            events.append(env["result"])
        TASKS_CREATED[0] += 1
        return _json_stream_echoes(events, text)

    async def get(self, task_id: str) -> None:
        task = await self._call("GetTask", {"id": task_id})
        if task.get("id") != task_id or (task.get("status") or {}).get("state") != _COMPLETED:
            raise CheckError(f"GetTask returned {task.get('id')!r}")


class HttpJsonClient(_HttpClient):
    """The HTTP+JSON (REST) binding over aiohttp."""

    async def send(self, text: str) -> str:
        body = json.dumps({"message": _json_message(text)})
        async with self.session.post(self.base + "/message:send", data=body, headers=_JSON_HEADERS) as r:
            raw = await r.read()
        if r.status != 200:
            raise CheckError(f"message:send HTTP {r.status}: {raw[:200]!r}")
        result = json.loads(raw)
        if "task" not in result:
            raise CheckError(f"message:send answered {sorted(result)}, want task")
        TASKS_CREATED[0] += 1
        return _json_task_echoes(result["task"], text)

    async def stream(self, text: str) -> str:
        body = json.dumps({"message": _json_message(text)})
        async with self.session.post(self.base + "/message:stream", data=body, headers=_SSE_HEADERS) as r:
            events = await self._sse(r)
        TASKS_CREATED[0] += 1
        return _json_stream_echoes(events, text)

    async def get(self, task_id: str) -> None:
        async with self.session.get(f"{self.base}/tasks/{task_id}", headers=_JSON_HEADERS) as r:
            raw = await r.read()
        if r.status != 200:
            raise CheckError(f"GET tasks/{{id}} HTTP {r.status}: {raw[:200]!r}")
        task = json.loads(raw)
        if task.get("id") != task_id or (task.get("status") or {}).get("state") != _COMPLETED:
            raise CheckError(f"GetTask returned {task.get('id')!r}")


class RoundRobinClient(Client):
    """Calls spread over several clients in turn (one per replica of a cluster);
    ``created[i]`` holds the ids of the last ``keep`` tasks client ``i`` created."""

    def __init__(self, clients: list[Client], keep: int = 64) -> None:
        self.clients = clients
        self.created: list[deque[str]] = [deque(maxlen=keep) for _ in clients]
        self._next = itertools.cycle(range(len(clients)))

    async def send(self, text: str) -> str:
        i = next(self._next)
        task_id = await self.clients[i].send(text)
        self.created[i].append(task_id)
        return task_id

    async def stream(self, text: str) -> str:
        i = next(self._next)
        task_id = await self.clients[i].stream(text)
        self.created[i].append(task_id)
        return task_id

    async def get(self, task_id: str) -> None:
        await self.clients[next(self._next)].get(task_id)

    async def cross_check(self) -> tuple[int, list[str]]:
        """Reads every remembered task back through the next client (the replica
        that did not create it): (tasks read, errors)."""
        read, errors = 0, []
        for i, ids in enumerate(self.created):
            other = self.clients[(i + 1) % len(self.clients)]
            for task_id in ids:
                read += 1
                try:
                    await other.get(task_id)
                except Exception as exc:
                    errors.append(_error_key(exc))
        return read, errors

    async def close(self) -> None:
        for c in self.clients:
            await c.close()


def make_client(endpoints: Endpoints, binding: str, concurrency: int) -> Client:
    """A client for ``binding`` ("grpc", "jsonrpc" or "rest") of ``endpoints``."""
    if binding == "grpc" and endpoints.grpc:
        return GrpcClient(endpoints.grpc)
    if binding == "jsonrpc" and endpoints.jsonrpc:
        return JsonRpcClient(endpoints.jsonrpc, concurrency)
    if binding == "rest" and endpoints.rest:
        return HttpJsonClient(endpoints.rest, concurrency)
    raise ValueError(f"server has no {binding} endpoint")


# --- the closed loop ----------------------------------------------------------------


@dataclass(slots=True)
class WindowResult:
    """One measurement window: successful requests' latencies (seconds), errors
    (by message), wall time (seconds) and what ``on_window`` returned for it."""

    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    elapsed: float = 0.0
    extra: Any = None

    @property
    def ok(self) -> int:
        return len(self.latencies)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def rps(self) -> float:
        return self.ok / self.elapsed if self.elapsed else 0.0

    def percentile(self, q: float) -> float:
        """The ``q`` quantile (0..1) of latencies in seconds (nearest rank)."""
        if not self.latencies:
            return float("nan")
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, max(0, int(q * len(xs) + 0.5) - 1))]


def _error_key(exc: BaseException) -> str:
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"grpc {exc.code().name}: {exc.details()}"[:160]
    return f"{type(exc).__name__}: {exc}"[:160]


async def prepare_task_ids(client: Client, n: int) -> list[str]:
    """Creates ``n`` echo tasks (for GetTask) through ``client``."""
    return [await client.send(make_text()) for _ in range(n)]


async def run_load(
    client: Client,
    method: str,
    *,
    concurrency: int,
    warmup: float,
    window: float,
    windows: int,
    text_size: int = 100,
    task_ids: list[str] | None = None,
    on_window: Callable[[], Any] | None = None,
) -> list[WindowResult]:
    """Runs ``concurrency`` closed-loop workers calling ``method`` for ``warmup``
    seconds, then for ``windows`` consecutive windows of ``window`` seconds, and
    returns one :class:`WindowResult` per window. ``on_window`` is called at every
    window boundary (e.g. to sample server CPU time); the value at the start of a
    window and at its end are stored as ``extra = (start, end)``."""
    if method == "SendMessage":

        def op() -> Awaitable[Any]:
            return client.send(make_text(text_size))

    elif method == "SendStreamingMessage":

        def op() -> Awaitable[Any]:
            return client.stream(make_text(text_size))

    elif method == "GetTask":
        if not task_ids:
            raise ValueError("GetTask needs task_ids")
        ids = itertools.cycle(task_ids)

        def op() -> Awaitable[Any]:
            return client.get(next(ids))

    else:
        raise ValueError(f"unknown method {method!r}")

    current: list[WindowResult | None] = [None]
    stop = asyncio.Event()
    clock = time.perf_counter

    async def worker() -> None:
        while not stop.is_set():
            t0 = clock()
            try:
                await op()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                w = current[0]
                if w is not None:
                    w.errors[_error_key(exc)] += 1
                continue
            w = current[0]
            if w is not None:
                w.latencies.append(clock() - t0)

    tasks = [asyncio.create_task(worker()) for _ in range(concurrency)]
    results: list[WindowResult] = []
    try:
        await asyncio.sleep(warmup)
        sample = on_window() if on_window else None
        for _ in range(windows):
            w = WindowResult()
            started = clock()
            current[0] = w
            await asyncio.sleep(window)
            current[0] = None
            w.elapsed = clock() - started
            end_sample = on_window() if on_window else None
            w.extra = (sample, end_sample)
            sample = end_sample
            results.append(w)
    finally:
        stop.set()
        _, pending = await asyncio.wait(tasks, timeout=TIMEOUT_S + 1)
        for t in pending:
            t.cancel()
        for t in pending:
            with contextlib.suppress(BaseException):
                await t
    return results
