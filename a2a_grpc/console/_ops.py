"""The operator's side: dead letters from the store, agents from a registry.

:class:`DeadLetters` wraps a store's dead-letter methods (those ``a2a-grpc
admin dead-letters`` uses: ``dead_letters``, ``redrive_dead_letter``,
``drop_dead_letter``) as JSON. :class:`RegistryWatch` polls an agent
registry (:class:`~a2a_grpc.registry.RegistryClient`, gRPC or JSON-RPC) every
``interval`` seconds and keeps each agent's health history — every change of
its health, failure count or error, with the time the registry checked —
since the console started (the registry itself keeps only the last check).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from datetime import UTC, datetime
from typing import Any

from a2a_grpc.errors import A2AError
from a2a_grpc.gen.a2agrpc.registry.v1 import registry_pb2 as rpb
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["DeadLetters", "RegistryWatch"]

log = logging.getLogger(__name__)
#: Health changes kept per agent.
HISTORY = 200


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class DeadLetters:
    """Dead letters of ``store``; ``owned``: the console opens and closes it."""

    def __init__(self, store: Any, *, owned: bool) -> None:
        self.store = store
        self.owned = owned

    async def open(self) -> None:
        if self.owned:
            await self.store.open()

    async def close(self) -> None:
        if self.owned:
            await self.store.close()

    async def list(self, limit: int = 100, after: int = 0) -> dict[str, Any]:
        """``{"deadLetters": [{seq, taskId, configId, eventId, attempts,
        lastAttempt, error, event}]}``, oldest first."""
        rows = await self.store.dead_letters(limit, after)
        out = []
        for rec in rows:
            entry = rec.entry
            try:
                event: Any = protojson.to_dict(pb.StreamResponse.FromString(entry.payload))
            except Exception:  # a payload this version cannot read: show the row anyway
                event = None
            out.append(
                {
                    "seq": rec.seq,
                    "taskId": entry.task_id,
                    "configId": entry.config_id,
                    "eventId": entry.event_id,
                    "attempts": rec.attempts,
                    "lastAttempt": _iso(rec.next_attempt_at),
                    "error": rec.last_error,
                    "event": event,
                }
            )
        return {"deadLetters": out}

    async def retry(self, seq: int) -> bool:
        """Makes the dead letter pending again (a running server's dispatcher sends it); False: none."""
        return bool(await self.store.redrive_dead_letter(seq))

    async def drop(self, seq: int) -> bool:
        """Deletes the dead letter; False: none."""
        return bool(await self.store.drop_dead_letter(seq))


def _ts(value: Any) -> str:
    if not (value.seconds or value.nanos):
        return ""
    return value.ToDatetime(tzinfo=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RegistryWatch:
    """Polls the registry at ``url`` and keeps health histories."""

    def __init__(self, url: str, *, interval: float = 5.0) -> None:
        from a2a_grpc.registry import RegistryClient

        self.url = url
        self.interval = interval
        self.client = RegistryClient(url, timeout=10.0)
        self.history: dict[str, deque[dict[str, Any]]] = {}
        self.agents: list[Any] = []
        self.error = ""
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.client.close()

    async def _loop(self) -> None:
        while True:
            await self.poll()
            await asyncio.sleep(self.interval)

    async def poll(self) -> None:
        """Reads every agent once and records the health changes."""
        try:
            self.agents = await self.client.list()
            self.error = ""
        except A2AError as exc:
            self.error = f"{exc.code.reason}: {exc.message}"
            return
        for agent in self.agents:
            point = {
                "at": _ts(agent.last_check_time),
                "health": rpb.HealthState.Name(agent.health),
                "failures": agent.consecutive_failures,
                "error": agent.last_error,
            }
            history = self.history.setdefault(agent.agent_id, deque(maxlen=HISTORY))
            if not history or {k: v for k, v in history[-1].items() if k != "at"} != {
                k: v for k, v in point.items() if k != "at"
            }:
                history.append(point)

    def snapshot(self) -> dict[str, Any]:
        """``{"url", "error", "agents": [{agentId, baseUrl, name, health, …, history}]}``."""
        agents = []
        for agent in self.agents:
            item = protojson.to_dict(agent)
            card = item.pop("card", {}) or {}
            item["name"] = card.get("name", "")
            item["description"] = card.get("description", "")
            item["skills"] = [s.get("name") or s.get("id") for s in card.get("skills", [])]
            item["history"] = list(self.history.get(agent.agent_id, ()))
            agents.append(item)
        return {"url": self.url, "error": self.error, "agents": agents}
