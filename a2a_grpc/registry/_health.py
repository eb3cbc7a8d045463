"""Periodic health checks of the registered agents.

Every ``interval`` seconds (each agent delayed by a random share of up to
``jitter`` of the interval, so that many registries do not call an agent at
the same instant) :class:`HealthChecker` checks each agent:

1. its card is fetched again with ``If-None-Match`` (the stored ETag): a 304
   costs no body; a new card replaces the stored one (CARD_CHANGED);
2. when the card declares a GRPC interface, the gRPC health service
   (``grpc.health.v1.Health/Check``, overall service ``""``) of the first
   one must answer SERVING.

The outcome goes to :meth:`AgentRegistry.record_check`: unhealthy after
``failure_threshold`` failures in a row, healthy after one success.
"""

from __future__ import annotations

import asyncio
import logging
import random

from a2a_grpc.core._background import Background
from a2a_grpc.errors import A2AError
from a2a_grpc.push._ssrf import UnsafeURLError
from a2a_grpc.registry._registry import AgentRegistry
from a2a_grpc.registry._types import rpb
from a2a_grpc.types import pb

__all__ = ["HealthChecker", "grpc_target"]

log = logging.getLogger(__name__)


def grpc_target(url: str) -> tuple[str, bool]:
    """The ``host:port`` of a GRPC interface URL (``host:port``,
    ``grpc://host:port`` or ``grpcs://host:port``) and whether it uses TLS."""
    text = url.strip()
    secure = text.lower().startswith("grpcs://")
    if "://" in text:
        text = text.split("://", 1)[1]
    return text.rstrip("/"), secure


class HealthChecker:
    """Checks ``registry``'s agents periodically (``start``/``stop``)."""

    def __init__(
        self, registry: AgentRegistry, *, interval: float = 30.0, jitter: float = 0.1, timeout: float = 5.0
    ) -> None:
        if interval <= 0 or not 0 <= jitter < 1:
            raise ValueError("interval must be positive and jitter in [0, 1)")
        self.registry = registry
        self.interval = interval
        self.jitter = jitter
        self.timeout = timeout
        self._background = Background(self._run, "registry-health")

    def start(self) -> None:
        """Starts the periodic checks."""
        self._background.start()

    async def stop(self) -> None:
        """Stops the checks and waits for them."""
        await self._background.stop()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            agents = self.registry.agents()
            await asyncio.gather(*(self._delayed(a) for a in agents))

    async def _delayed(self, agent: rpb.RegisteredAgent) -> None:
        await asyncio.sleep(random.uniform(0, self.jitter * self.interval))
        try:
            await self.check(agent)
        except Exception:
            log.exception("health check of %s failed unexpectedly", agent.agent_id)

    async def check(self, agent: rpb.RegisteredAgent) -> None:
        """Checks one agent now and records the outcome."""
        try:
            fetched = await self.registry.fetcher.fetch(agent.base_url, agent.card_etag)
            card = fetched.card or agent.card
            await self._grpc_health(card)
        except A2AError as err:
            await self.registry.record_check(agent.agent_id, None, f"{err.code.reason}: {err.message}")
            return
        await self.registry.record_check(agent.agent_id, fetched)

    async def _grpc_health(self, card: pb.AgentCard) -> None:
        """Raises A2AError(UNAVAILABLE) unless the card's first GRPC
        interface (if any) answers SERVING."""
        iface = next((i for i in card.supported_interfaces if i.protocol_binding.upper() == "GRPC"), None)
        if iface is None:
            return
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        from a2a_grpc.errors import ErrorCode

        target, secure = grpc_target(iface.url)
        try:
            await self.registry.fetcher.policy.check_url(f"http://{target}")
        except UnsafeURLError as err:
            raise A2AError(ErrorCode.UNAVAILABLE, f"gRPC interface {iface.url}: {err}") from None
        channel = (
            grpc.aio.secure_channel(target, grpc.ssl_channel_credentials())
            if secure
            else grpc.aio.insecure_channel(target)
        )
        try:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise A2AError(
                ErrorCode.UNAVAILABLE, f"gRPC health of {iface.url}: {exc.code().name} {exc.details() or ''}"
            ) from None
        finally:
            await channel.close()
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            raise A2AError(ErrorCode.UNAVAILABLE, f"gRPC health of {iface.url}: {status}")
