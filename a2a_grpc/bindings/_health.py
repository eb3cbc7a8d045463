"""``grpc.health.v1.Health`` with all three methods: Check, Watch and List.

grpcio-health-checking's asyncio servicer answers Check and Watch; List (added
to the health proto in 2024, listed by reflection) falls through to the
generated base class, which logs a traceback and answers UNIMPLEMENTED.
:class:`HealthServicer` adds it: a snapshot of every registered service's
status, as the health proto describes.
"""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2

__all__ = ["MAX_LISTED_SERVICES", "HealthServicer"]

#: List answers RESOURCE_EXHAUSTED beyond this many services (the health
#: proto's advice to servers: cap the response).
MAX_LISTED_SERVICES = 100


class HealthServicer(health.aio.HealthServicer):
    """The asyncio health servicer plus ``List``."""

    def __init__(self) -> None:
        super().__init__()
        self._statuses: dict[str, int] = {"": health_pb2.HealthCheckResponse.SERVING}
        self._draining = False

    async def set(self, service: str, status: Any) -> None:
        """Sets ``service``'s status (ignored once draining), as the base class does."""
        if not self._draining:
            self._statuses[service] = status
        await super().set(service, status)

    async def enter_graceful_shutdown(self) -> None:
        """Every service NOT_SERVING from now on, as the base class does."""
        self._draining = True
        for service in self._statuses:
            self._statuses[service] = health_pb2.HealthCheckResponse.NOT_SERVING
        await super().enter_graceful_shutdown()

    async def List(
        self, request: health_pb2.HealthListRequest, context: Any
    ) -> health_pb2.HealthListResponse:
        """The status of every registered service (the empty name is the
        server's overall status); RESOURCE_EXHAUSTED when there are more than
        :data:`MAX_LISTED_SERVICES`."""
        if len(self._statuses) > MAX_LISTED_SERVICES:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {MAX_LISTED_SERVICES} services; use Check for one service",
            )
        response = health_pb2.HealthListResponse()
        for service, status in self._statuses.items():
            response.statuses[service].status = status
        return response
