"""The registry itself: agents in memory, written through to the store.

:class:`AgentRegistry` implements the operations of AgentRegistryService
(``registry.proto``) as plain coroutines taking and returning its messages,
raising ``A2AError`` (the bindings turn it into their own error form):

* ``register`` fetches and validates the card (:class:`CardFetcher`) and
  stores the agent; the same base URL again refreshes it and keeps its id;
* ``update`` fetches the card again, at a new base URL when given;
* ``deregister``, ``get``, ``list`` (filters and pages: :mod:`.query`);
* ``watch`` yields a ``WatchAgentsResponse`` per change;
* ``record_check`` applies one health-check outcome (:mod:`.health`):
  unhealthy after ``failure_threshold`` failures in a row, healthy again
  after one success, with the change published to watchers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.registry._fetch import CardFetcher, Fetched
from a2a_grpc.registry._query import page
from a2a_grpc.registry._store import RegistryStore
from a2a_grpc.registry._types import rpb
from a2a_grpc.types import new_id, now_timestamp

__all__ = ["AgentRegistry"]


def _normalise(base_url: str) -> str:
    return base_url.strip().rstrip("/")


class AgentRegistry:
    """Registered agents over ``store``, cards fetched by ``fetcher``."""

    def __init__(self, store: RegistryStore, fetcher: CardFetcher, *, failure_threshold: int = 3) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        self.store = store
        self.fetcher = fetcher
        self.failure_threshold = failure_threshold
        self._agents: dict[str, rpb.RegisteredAgent] = {}
        self._watchers: set[asyncio.Queue[rpb.WatchAgentsResponse]] = set()
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        """Opens the store and loads the agents registered before."""
        await self.store.open()
        self._agents = {a.agent_id: a for a in await self.store.load()}

    async def close(self) -> None:
        """Closes the fetcher's session and the store."""
        await self.fetcher.close()
        await self.store.close()

    def agents(self) -> list[rpb.RegisteredAgent]:
        """Every registered agent (copies)."""
        return [_copy(a) for a in self._agents.values()]

    def _find(self, agent_id: str) -> rpb.RegisteredAgent:
        if not agent_id:
            raise A2AError.invalid_params(FieldViolation("agent_id", "is required"))
        agent = self._agents.get(agent_id)
        if agent is None:
            raise A2AError(
                ErrorCode.AGENT_NOT_FOUND,
                f"agent {agent_id} is not registered",
                metadata={"agentId": agent_id},
            )
        return agent

    # --- operations ---------------------------------------------------------

    async def register(self, req: rpb.RegisterAgentRequest) -> rpb.RegisterAgentResponse:
        """RegisterAgent: fetch, validate, store; idempotent per base URL."""
        base = _normalise(req.base_url)
        fetched = await self.fetcher.fetch(base)
        async with self._lock:
            existing = next((a for a in self._agents.values() if a.base_url == base), None)
            if existing is not None:
                agent = await self._store_card(existing, fetched)
                return rpb.RegisterAgentResponse(agent=_copy(agent))
            now = now_timestamp()
            agent = rpb.RegisteredAgent(
                agent_id=new_id(),
                base_url=base,
                card=fetched.card,
                card_etag=fetched.etag,
                health=rpb.HEALTH_STATE_HEALTHY,
                register_time=now,
                card_update_time=now,
                last_seen_time=now,
                last_check_time=now,
            )
            await self.store.put(agent)
            self._agents[agent.agent_id] = agent
            self._publish(rpb.CHANGE_TYPE_REGISTERED, agent)
        return rpb.RegisterAgentResponse(agent=_copy(agent))

    async def update(self, req: rpb.UpdateAgentRequest) -> rpb.UpdateAgentResponse:
        """UpdateAgent: fetch the card again (at ``base_url`` when given)."""
        agent = self._find(req.agent_id)
        base = _normalise(req.base_url) if req.base_url else agent.base_url
        fetched = await self.fetcher.fetch(base)
        async with self._lock:
            agent = self._find(req.agent_id)
            other = next((a for a in self._agents.values() if a.base_url == base and a is not agent), None)
            if other is not None:
                raise A2AError.invalid_params(
                    FieldViolation("base_url", f"is already registered as agent {other.agent_id}")
                )
            moved = _copy(agent)
            moved.base_url = base
            agent = await self._store_card(moved, fetched)
        return rpb.UpdateAgentResponse(agent=_copy(agent))

    async def _store_card(self, agent: rpb.RegisteredAgent, fetched: Fetched) -> rpb.RegisteredAgent:
        """Stores a successful fetch: new card (CARD_CHANGED when it
        differs), ETag, and a successful check. Call under the lock."""
        old = self._agents.get(agent.agent_id)
        new = _copy(agent)
        changed = fetched.card is not None and fetched.card != new.card
        if changed:
            new.card.CopyFrom(fetched.card)
            new.card_update_time.CopyFrom(now_timestamp())
        new.card_etag = fetched.etag
        health_changed = _succeed(new)
        await self.store.put(new)
        self._agents[new.agent_id] = new
        if changed or (old is not None and old.base_url != new.base_url):
            self._publish(rpb.CHANGE_TYPE_CARD_CHANGED, new)
        if health_changed:
            self._publish(rpb.CHANGE_TYPE_HEALTH_CHANGED, new)
        return new

    async def deregister(self, req: rpb.DeregisterAgentRequest) -> rpb.DeregisterAgentResponse:
        """DeregisterAgent: removes the agent (AGENT_NOT_FOUND when absent)."""
        async with self._lock:
            agent = self._find(req.agent_id)
            await self.store.delete(agent.agent_id)
            del self._agents[agent.agent_id]
            self._publish(rpb.CHANGE_TYPE_REMOVED, agent)
        return rpb.DeregisterAgentResponse()

    async def get(self, req: rpb.GetAgentRequest) -> rpb.GetAgentResponse:
        """GetAgent (AGENT_NOT_FOUND when absent)."""
        return rpb.GetAgentResponse(agent=_copy(self._find(req.agent_id)))

    async def list(self, req: rpb.ListAgentsRequest) -> rpb.ListAgentsResponse:
        """ListAgents: the page of agents matching every filter."""
        return page(self._agents.values(), req)

    def watch(self, req: rpb.WatchAgentsRequest) -> AsyncIterator[rpb.WatchAgentsResponse]:
        """WatchAgents: the existing agents first (``include_existing``),
        then every change until the caller goes away. Changes are collected
        from this call on (not from the first iteration), so a caller that
        acknowledges the stream before iterating misses none."""
        queue: asyncio.Queue[rpb.WatchAgentsResponse] = asyncio.Queue()
        self._watchers.add(queue)
        existing = [
            _change(rpb.CHANGE_TYPE_EXISTING, a)
            for a in sorted(self._agents.values(), key=lambda a: a.agent_id)
            if req.include_existing
        ]
        return self._changes(queue, existing)

    async def _changes(
        self, queue: asyncio.Queue[rpb.WatchAgentsResponse], existing: Sequence[rpb.WatchAgentsResponse]
    ) -> AsyncIterator[rpb.WatchAgentsResponse]:
        try:
            for change in existing:
                yield change
            while True:
                yield await queue.get()
        finally:
            self._watchers.discard(queue)

    # --- health -------------------------------------------------------------

    async def record_check(self, agent_id: str, fetched: Fetched | None, error: str = "") -> None:
        """Applies one health check of ``agent_id``: ``fetched`` on success
        (its card replaces the stored one when it changed), else ``error``.
        Nothing happens when the agent was removed meanwhile."""
        async with self._lock:
            agent = self._agents.get(agent_id)
            if agent is None:
                return
            if fetched is not None:
                await self._store_card(agent, fetched)
                return
            new = _copy(agent)
            new.consecutive_failures += 1
            new.last_error = error
            new.last_check_time.CopyFrom(now_timestamp())
            flipped = (
                new.consecutive_failures >= self.failure_threshold
                and new.health != rpb.HEALTH_STATE_UNHEALTHY
            )
            if flipped:
                new.health = rpb.HEALTH_STATE_UNHEALTHY
            await self.store.put(new)
            self._agents[agent_id] = new
            if flipped:
                self._publish(rpb.CHANGE_TYPE_HEALTH_CHANGED, new)

    def _publish(self, change: rpb.ChangeType, agent: rpb.RegisteredAgent) -> None:
        event = _change(change, agent)
        for queue in self._watchers:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(event)


def _succeed(agent: rpb.RegisteredAgent) -> bool:
    """Marks a successful check on ``agent``; True when it was not healthy."""
    now = now_timestamp()
    flipped = agent.health != rpb.HEALTH_STATE_HEALTHY
    agent.health = rpb.HEALTH_STATE_HEALTHY
    agent.consecutive_failures = 0
    agent.last_error = ""
    agent.last_seen_time.CopyFrom(now)
    agent.last_check_time.CopyFrom(now)
    return flipped


def _copy(agent: rpb.RegisteredAgent) -> rpb.RegisteredAgent:
    out = rpb.RegisteredAgent()
    out.CopyFrom(agent)
    return out


def _change(change: rpb.ChangeType, agent: rpb.RegisteredAgent) -> rpb.WatchAgentsResponse:
    return rpb.WatchAgentsResponse(change=change, agent=_copy(agent), time=now_timestamp())
