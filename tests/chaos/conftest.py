"""Fixtures of the chaos suite: PostgreSQL (and, for the Redis bus, Redis)
must answer, else the tests skip; the seed comes from ``$CHAOS_SEED``."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import pytest

from tests.chaos.harness import REDIS_URL
from tests.chaos.run import seed_from_env
from tests.store.storekit import postgres_skip_reason


@pytest.fixture(autouse=True, scope="session")
def _postgres_running() -> None:
    reason = asyncio.run(postgres_skip_reason())
    if reason:
        pytest.skip(reason)


def redis_skip_reason() -> str:
    """Why the test Redis cannot be used, or the empty string."""
    parts = urlsplit(REDIS_URL)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=2).close()
    except OSError as exc:
        return f"Redis not reachable at {REDIS_URL}: {exc}"
    return ""


@pytest.fixture
def seed() -> int:
    """The run's seed: ``$CHAOS_SEED``, else 7."""
    return seed_from_env()
