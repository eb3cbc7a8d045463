"""The cluster scenarios again with the Redis Streams bus (``--bus
redis://127.0.0.1:6379``): subscribe on other replicas (every binding; events
too large for a stream entry's copy),
a subscriber whose task's replica is killed, cancel on another replica and
while the runner is frozen. The tests are test_events' and test_leases'; this
module's replicas run with the Redis bus."""

from __future__ import annotations

import socket

import pytest

from tests.cluster.test_events import (
    test_events_beyond_the_payload_limit,
    test_subscribe_on_other_replicas,
    test_subscriber_ends_when_its_replica_is_killed,
)
from tests.cluster.test_leases import test_cancel_on_another_replica, test_cancel_while_the_runner_is_frozen

REDIS = ("127.0.0.1", 6379)
REPLICA_ARGS = ["--bus", f"redis://{REDIS[0]}:{REDIS[1]}"]

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

__all__ = [
    "test_cancel_on_another_replica",
    "test_cancel_while_the_runner_is_frozen",
    "test_events_beyond_the_payload_limit",
    "test_subscribe_on_other_replicas",
    "test_subscriber_ends_when_its_replica_is_killed",
]


@pytest.fixture(scope="module", autouse=True)
def _redis_running() -> None:
    try:
        socket.create_connection(REDIS, timeout=2).close()
    except OSError as exc:
        pytest.skip(f"Redis not reachable at {REDIS}: {exc}")
