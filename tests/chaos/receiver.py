"""The recording webhook receiver of the chaos runs.

An aiohttp server on 127.0.0.1 (run on a :class:`~tests.chaos.proxy.Background`
loop) taking ``POST /hook/<tag>``: the tag names the push config (the harness
gives each config its own), so a delivery is keyed by (task id, tag). Every
POST is recorded, in arrival order, with its headers and body, before it is
answered: 200, or 500 for a seeded share of them (``fail_rate``: retries).
:meth:`Receiver.hold` makes the first POST of a notification of some version
wait (a claim holder caught mid-POST).
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["Delivery", "Receiver", "delivery_of"]

TERMINAL_STATES = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}


@dataclass(frozen=True, slots=True)
class Delivery:
    """One POST the receiver got: when (``time.time()``), for which (task,
    config tag), the version from ``A2A-Notification-Id`` (``task:version``),
    the event kind (task, statusUpdate, artifactUpdate), the task state it
    carries ("" for an artifact), the answer given (200 or 500), and the raw
    headers and body."""

    t: float
    task_id: str
    tag: str
    version: int
    kind: str
    state: str
    status: int
    headers: dict[str, str] = field(repr=False)
    body: dict[str, Any] = field(repr=False)

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


def delivery_of(tag: str, headers: dict[str, str], body: dict[str, Any], status: int, t: float) -> Delivery:
    """The :class:`Delivery` of one POST (``headers`` as received)."""
    notification = headers.get("A2A-Notification-Id", "")
    task_id, _, version = notification.rpartition(":")
    kind = next((k for k in ("task", "statusUpdate", "artifactUpdate") if k in body), "")
    state = ""
    if kind == "task":
        state = body["task"].get("status", {}).get("state", "")
    elif kind == "statusUpdate":
        state = body["statusUpdate"].get("status", {}).get("state", "")
    return Delivery(t, task_id, tag, int(version or 0), kind, state, status, headers, body)


@dataclass(slots=True)
class _Hold:
    version: int
    seconds: float | None
    used: bool = False
    released: asyncio.Event = field(default_factory=asyncio.Event)


class Receiver:
    """Records webhook POSTs (see the module docstring). Start and stop it
    on its loop; read :attr:`deliveries` from any thread."""

    def __init__(self, *, seed: int = 0, fail_rate: float = 0.0) -> None:
        self.deliveries: list[Delivery] = []
        self.fail_rate = fail_rate
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._holds: list[_Hold] = []
        self._seen: set[str] = set()
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.port = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def url(self, tag: str) -> str:
        return f"{self.base}/{tag}"

    async def start(self) -> int:
        self._loop = asyncio.get_running_loop()
        app = web.Application()
        app.router.add_post("/hook/{tag}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.port

    async def stop(self) -> None:
        for h in self._holds:
            h.released.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        tag = request.match_info["tag"]
        try:
            body = json.loads(await request.read() or b"{}")
        except ValueError:
            body = {"unparsed": True}
        headers = dict(request.headers)
        notification = headers.get("A2A-Notification-Id", "")
        with self._lock:
            status = 500 if self.fail_rate and self._random.random() < self.fail_rate else 200
            delivery = delivery_of(tag, headers, body, status, time.time())
            self.deliveries.append(delivery)
            first = notification not in self._seen
            self._seen.add(notification)
            hold = next(
                (h for h in self._holds if first and not h.used and h.version == delivery.version), None
            )
            if hold is not None:
                hold.used = True
        if hold is not None:
            if hold.seconds is None:
                await hold.released.wait()
            else:
                await asyncio.sleep(hold.seconds)
        return web.Response(status=status)

    def hold(self, version: int, seconds: float | None = None) -> None:
        """The next first POST of a notification with ``version`` (of any
        task) is answered ``seconds`` later, or (None) once :meth:`release`
        is called; it is recorded at once."""
        with self._lock:
            self._holds.append(_Hold(version, seconds))

    def release(self) -> None:
        """Answers the POSTs held until released."""
        assert self._loop is not None
        for h in self._holds:
            self._loop.call_soon_threadsafe(h.released.set)

    def snapshot(self) -> list[Delivery]:
        """The deliveries so far, in arrival order."""
        with self._lock:
            return list(self.deliveries)

    def of(self, task_id: str) -> list[Delivery]:
        return [d for d in self.snapshot() if d.task_id == task_id]
