"""The console's aiohttp application: the built page and the JSON API it calls.

Routes (relative, so the same app serves at ``/`` and mounted under a prefix):

* ``GET /`` the page, ``GET /assets/…`` its scripts and styles (built from
  ``console/`` by Vite into ``a2a_grpc/console/static``);
* ``GET api/info`` what the console is connected to and which panels it has;
* ``GET api/card`` the Agent Card (ProtoJSON, the raw JSON, signature status);
* ``POST api/send`` ``{"message": Message}`` → SendStreamingMessage (or
  SendMessage when the agent does not stream), relayed as server-sent events;
* ``GET api/tasks`` ListTasks (``contextId``, ``state``, ``updatedAfter``,
  ``pageSize``, ``pageToken``), ``GET api/tasks/{id}`` GetTask with its
  timeline, ``POST api/tasks/{id}/cancel``, ``GET api/tasks/{id}/subscribe``
  (events), ``GET api/tasks/{id}/push-configs``;
* ``GET api/dead-letters``, ``POST api/dead-letters/{seq}/retry|drop`` (with a
  store), ``GET api/registry`` (with a registry), ``GET api/metrics`` (the
  target's ``/metrics``, summed up: :mod:`a2a_grpc.console._prom`).

Event streams carry one JSON object per ``data:`` line: ``{"event":
StreamResponse}``, then ``{"error": {"reason", "message"}}`` or ``{"end":
true}``. A failed call answers ``{"error": {"reason", "message"}}`` with the
HTTP status of its A2A error (docs/errors.md).

The console acts with the credentials it was given, so it guards them
(docs/console.md): with ``loopback_only`` it answers loopback peers only and
only for a loopback ``Host`` (no DNS rebinding); every API call must carry
``X-A2A-Console: 1``, which a cross-origin page cannot send without a CORS
preflight the console never grants, and a request whose ``Origin`` is another
site is refused.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from a2a_grpc.client import Credentials
from a2a_grpc.console._agent import Agent
from a2a_grpc.console._ops import DeadLetters, RegistryWatch
from a2a_grpc.console._prom import parse, summary
from a2a_grpc.console._timeline import Timelines
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["API_HEADER", "STATIC", "console_app"]

#: The built page (``make install`` builds it from ``console/``).
STATIC = Path(__file__).parent / "static"
#: The header every API call carries (a cross-origin page cannot send it).
API_HEADER = "X-A2A-Console"
_CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
_STATE = web.AppKey("console_state", dict)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _error(code: ErrorCode, message: str) -> web.Response:
    return web.json_response({"error": {"reason": code.reason, "message": message}}, status=code.http_status)


def _loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guard(loopback_only: bool) -> Any:
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if loopback_only and not (_loopback(request.remote or "") and _loopback(request.url.host or "")):
            return _error(ErrorCode.PERMISSION_DENIED, "the console answers loopback callers only")
        origin = request.headers.get("Origin")
        if origin and urlsplit(origin).netloc != request.host:
            return _error(ErrorCode.PERMISSION_DENIED, f"cross-origin request from {origin} refused")
        name = request.match_info.route.name or ""
        if name.startswith("api-") and request.headers.get(API_HEADER) != "1":
            return _error(ErrorCode.PERMISSION_DENIED, f"console API calls carry {API_HEADER}: 1")
        response = await handler(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    return guard


def _api(call: Callable[[web.Request, dict[str, Any]], Awaitable[Any]]) -> Handler:
    """A JSON handler: ``call`` returns the body (or a response); an
    A2AError becomes its HTTP status and ``{"error": …}``."""

    async def handle(request: web.Request) -> web.StreamResponse:
        state = request.app[_STATE]
        try:
            result = await call(request, state)
        except A2AError as exc:
            if exc.code == ErrorCode.UNAVAILABLE:
                await state["agent"].forget(request.headers)
            return _error(exc.code, exc.message)
        if isinstance(result, web.StreamResponse):
            return result
        return web.json_response(result, dumps=lambda v: json.dumps(v, ensure_ascii=False))

    return handle


def _line(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


async def _relay(
    request: web.Request, events: AsyncIterator[pb.StreamResponse], seen: Callable[[pb.StreamResponse], None]
) -> web.StreamResponse:
    """Writes ``events`` to the browser as server-sent events (see the module docstring)."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    try:
        async with aclosing(events) as stream:  # type: ignore[type-var]
            async for event in stream:
                seen(event)
                await response.write(_line({"event": protojson.to_dict(event)}))
        await response.write(_line({"end": True}))
    except A2AError as exc:
        await response.write(_line({"error": {"reason": exc.code.reason, "message": exc.message}}))
    except ConnectionResetError:  # the page went away
        pass
    return response


async def _single(client: Any, message: pb.Message) -> AsyncIterator[pb.StreamResponse]:
    """SendMessage's answer as a one-event stream (an agent without streaming)."""
    answer = await client.send_message(message, timeout=None)
    if answer.WhichOneof("payload") == "message":
        yield pb.StreamResponse(message=answer.message)
    else:
        yield pb.StreamResponse(task=answer.task)


# ------------------------------------------------------------------- handlers
async def _info(request: web.Request, state: dict[str, Any]) -> Any:
    agent: Agent = state["agent"]
    return {
        "target": agent.url(),
        "interface": agent.describe(),
        "auth": "forwarded" if agent.forward else ("console" if agent.credentials else "none"),
        "panels": {
            "deadLetters": state["dead_letters"] is not None,
            "registry": state["registry"] is not None,
            "metrics": state["metrics_url"] is not None,
        },
    }


async def _card(request: web.Request, state: dict[str, Any]) -> Any:
    return await state["agent"].card()


async def _send(request: web.Request, state: dict[str, Any]) -> Any:
    try:
        body = await request.json()
    except ValueError:
        raise A2AError(ErrorCode.PARSE_ERROR, "the body is not JSON") from None
    raw = body.get("message") if isinstance(body, dict) else None
    message = protojson.parse(raw if isinstance(raw, dict) else {}, pb.Message())
    client = await state["agent"].client(request.headers)
    message = client.build_message(message)
    timelines: Timelines = state["timelines"]
    timelines.sent(message)
    pending = [] if message.task_id else [message]

    def seen(event: pb.StreamResponse) -> None:
        if pending:  # a new task: the first event names it
            task_id = event.task.id or event.status_update.task_id or event.artifact_update.task_id
            if task_id:
                pending[0].task_id = task_id
                timelines.sent(pending.pop())
        timelines.record(event)

    streaming = client.card is None or client.card.capabilities.streaming
    events = client.send_streaming_message(message) if streaming else _single(client, message)
    return await _relay(request, events, seen)


def _after(text: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise A2AError(ErrorCode.INVALID_PARAMS, f"updatedAfter: not an ISO 8601 time: {text!r}") from None


def _int(text: str | None, name: str) -> int | None:
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise A2AError(ErrorCode.INVALID_PARAMS, f"{name}: not a number: {text!r}") from None


async def _tasks(request: web.Request, state: dict[str, Any]) -> Any:
    q = request.query
    client = await state["agent"].client(request.headers)
    context, status = q.get("contextId") or None, q.get("state") or None
    try:
        page = await client.list_tasks(
            context_id=context,
            status=status,
            page_size=_int(q.get("pageSize"), "pageSize"),
            page_token=q.get("pageToken") or None,
            status_timestamp_after=_after(q.get("updatedAfter", "")),
            history_length=0,
        )
    except A2AError as exc:
        if exc.code != ErrorCode.UNSUPPORTED_OPERATION:
            raise
        return await _seen_tasks(client, state["timelines"], context, status, exc.message)
    return protojson.to_dict(page)


async def _seen_tasks(
    client: Any, timelines: Timelines, context: str | None, status: str | None, why: str
) -> Any:
    """Without ListTasks (A2A 0.3): the tasks this console has seen, read again."""
    tasks = []
    for task_id in timelines.seen()[:50]:
        try:
            task = await client.get_task(task_id, history_length=0)
        except A2AError:
            continue
        state = pb.TaskState.Name(task.status.state)
        if (not context or task.context_id == context) and (not status or state.endswith(status.upper())):
            tasks.append(protojson.to_dict(task))
    return {"tasks": tasks, "nextPageToken": "", "totalSize": len(tasks), "fallback": why}


async def _task(request: web.Request, state: dict[str, Any]) -> Any:
    client = await state["agent"].client(request.headers)
    task = await client.get_task(request.match_info["id"])
    return {"task": protojson.to_dict(task), "timeline": state["timelines"].of(task)}


async def _cancel(request: web.Request, state: dict[str, Any]) -> Any:
    client = await state["agent"].client(request.headers)
    task = await client.cancel_task(request.match_info["id"])
    state["timelines"].record(pb.StreamResponse(task=task))
    return protojson.to_dict(task)


async def _subscribe(request: web.Request, state: dict[str, Any]) -> Any:
    client = await state["agent"].client(request.headers)
    events = client.subscribe_to_task(request.match_info["id"])
    return await _relay(request, events, state["timelines"].record)


async def _push_configs(request: web.Request, state: dict[str, Any]) -> Any:
    client = await state["agent"].client(request.headers)
    page = await client.list_task_push_notification_configs(request.match_info["id"])
    return protojson.to_dict(page)


def _dead(state: dict[str, Any]) -> DeadLetters:
    dead: DeadLetters | None = state["dead_letters"]
    if dead is None:
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            "no store: run the console with --store, or inside a2a-grpc serve",
        )
    return dead


async def _dead_letters(request: web.Request, state: dict[str, Any]) -> Any:
    after = _int(request.query.get("after"), "after") or 0
    return await _dead(state).list(limit=_int(request.query.get("limit"), "limit") or 100, after=after)


def _dead_action(action: str) -> Callable[[web.Request, dict[str, Any]], Awaitable[Any]]:
    async def act(request: web.Request, state: dict[str, Any]) -> Any:
        seq = _int(request.match_info["seq"], "seq") or 0
        done = await getattr(_dead(state), action)(seq)
        if not done:
            raise A2AError(ErrorCode.INVALID_PARAMS, f"no dead letter {seq}")
        return {"seq": seq, "done": action}

    return act


async def _registry(request: web.Request, state: dict[str, Any]) -> Any:
    watch: RegistryWatch | None = state["registry"]
    if watch is None:
        raise A2AError(ErrorCode.UNSUPPORTED_OPERATION, "no registry: run the console with --registry URL")
    await watch.poll()
    return watch.snapshot()


async def _metrics(request: web.Request, state: dict[str, Any]) -> Any:
    url: str | None = state["metrics_url"]
    if url is None:
        raise A2AError(ErrorCode.UNSUPPORTED_OPERATION, "metrics are off (--no-metrics)")
    url = url or state["agent"].url().rstrip("/") + "/metrics"
    session: aiohttp.ClientSession = state["session"]
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=10)) as resp:
            text = await resp.text()
            if resp.status != 200:
                raise A2AError(ErrorCode.UNAVAILABLE, f"{url}: HTTP {resp.status}")
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise A2AError(ErrorCode.UNAVAILABLE, f"{url}: {exc or type(exc).__name__}") from None
    return {"at": datetime.now().astimezone().isoformat(timespec="milliseconds"), **summary(parse(text))}


# ---------------------------------------------------------------- static page
def _page(static: Path) -> Handler:
    async def index(request: web.Request) -> web.StreamResponse:
        response = web.FileResponse(static / "index.html")
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Frame-Options"] = "DENY"
        return response

    return index


_ROUTES: Sequence[tuple[str, str, Callable[[web.Request, dict[str, Any]], Awaitable[Any]]]] = (
    ("GET", "info", _info),
    ("GET", "card", _card),
    ("POST", "send", _send),
    ("GET", "tasks", _tasks),
    ("GET", "tasks/{id}", _task),
    ("POST", "tasks/{id}/cancel", _cancel),
    ("GET", "tasks/{id}/subscribe", _subscribe),
    ("GET", "tasks/{id}/push-configs", _push_configs),
    ("GET", "dead-letters", _dead_letters),
    ("POST", "dead-letters/{seq}/retry", _dead_action("retry")),
    ("POST", "dead-letters/{seq}/drop", _dead_action("drop")),
    ("GET", "registry", _registry),
    ("GET", "metrics", _metrics),
)


def console_app(
    target: str | Callable[[], str],
    *,
    credentials: Credentials | None = None,
    forward_auth: bool = False,
    bindings: Sequence[str] = ("grpc", "jsonrpc", "rest"),
    tls: Any = None,
    trusted_keys: Any = None,
    store: Any = None,
    store_owned: bool = False,
    registry_url: str | None = None,
    metrics_url: str | None = "",
    loopback_only: bool = True,
    static: Path | None = None,
) -> web.Application:
    """The console for the agent at ``target`` (its base URL, or a function
    returning it once known — a server that has just bound its port).

    ``credentials`` go with every call the console makes (``forward_auth``:
    each browser request's own ``Authorization`` / ``X-API-Key`` instead);
    ``bindings``, ``tls`` and ``trusted_keys`` (card signatures) as for
    :meth:`~a2a_grpc.client.A2AClient.connect`. ``store`` (one with the
    dead-letter methods; opened and closed by the console when
    ``store_owned``) enables the dead-letter panel, ``registry_url`` the
    registry panel; ``metrics_url`` is the Prometheus endpoint (``""``: the
    target's ``/metrics``; None: no charts). ``loopback_only``: answer
    loopback peers only. ``static``: the built page (default :data:`STATIC`).

    Raises FileNotFoundError when ``static`` holds no built page (a checkout
    without Node: ``make install`` builds it, docs/console.md).
    """
    static = STATIC if static is None else static
    if not (static / "index.html").is_file():
        raise FileNotFoundError(
            f"the console's page is not built ({static} has no index.html): run make install (needs Node 20)"
        )
    url = target if callable(target) else (lambda: target)
    agent = Agent(
        url,
        credentials=credentials,
        forward=forward_auth,
        bindings=tuple(bindings),
        tls=tls,
        trusted=trusted_keys,
    )
    app = web.Application(middlewares=[_guard(loopback_only)], client_max_size=32 * 1024 * 1024)
    state: dict[str, Any] = {
        "agent": agent,
        "timelines": Timelines(),
        "dead_letters": DeadLetters(store, owned=store_owned) if store is not None else None,
        "registry": RegistryWatch(registry_url) if registry_url else None,
        "metrics_url": metrics_url,
    }
    app[_STATE] = state
    for method, path, call in _ROUTES:
        name = "api-" + path.replace("/", "-").replace("{", "").replace("}", "")
        app.router.add_route(method, "/api/" + path, _api(call), name=name)
    app.router.add_get("/", _page(static), name="page")
    if (static / "assets").is_dir():  # what Vite built next to index.html
        app.router.add_static("/assets", static / "assets", name="assets")
    app.cleanup_ctx.append(_lifetime)
    return app


async def _lifetime(app: web.Application) -> AsyncIterator[None]:
    state = app[_STATE]
    state["session"] = aiohttp.ClientSession()
    if state["dead_letters"] is not None:
        await state["dead_letters"].open()
    if state["registry"] is not None:
        await state["registry"].start()
    try:
        yield
    finally:
        if state["registry"] is not None:
            await state["registry"].close()
        if state["dead_letters"] is not None:
            await state["dead_letters"].close()
        await state["agent"].close()
        await state["session"].close()
