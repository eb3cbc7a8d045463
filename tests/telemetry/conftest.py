"""The push tests' webhook receiver and per-backend store fixtures (memory,
SQLite, PostgreSQL with its own tables), for the telemetry and operations tests."""

from tests.push.conftest import receiver, store

__all__ = ["receiver", "store"]
