"""Helpers shared by the store tests: sample tasks, configs, outbox entries,
and SQL stores on SQLite or the PostgreSQL server on 127.0.0.1:5432
(override with ``A2A_GRPC_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from google.protobuf import timestamp_pb2

from a2a_grpc.context import Owner
from a2a_grpc.store import OutboxEntry, SqlTaskStore
from a2a_grpc.types import pb

SUBMITTED = pb.TASK_STATE_SUBMITTED
WORKING = pb.TASK_STATE_WORKING
COMPLETED = pb.TASK_STATE_COMPLETED
FAILED = pb.TASK_STATE_FAILED

ALICE = Owner("acme", "alice")
BOB = Owner("acme", "bob")
OTHER_TENANT = Owner("globex", "alice")


def make_task(
    task_id: str, *, ts_ms: int = 1_700_000_000_000, context_id: str = "ctx-1", state: int = SUBMITTED
) -> pb.Task:
    """A task with one history message and one artifact, its status at ``ts_ms``."""
    task = pb.Task(id=task_id, context_id=context_id)
    task.status.state = state  # type: ignore[assignment]
    task.status.timestamp.CopyFrom(
        timestamp_pb2.Timestamp(seconds=ts_ms // 1000, nanos=ts_ms % 1000 * 1_000_000)
    )
    task.history.add(message_id=f"m-{task_id}", role=pb.ROLE_USER).parts.add(text="hello")
    task.artifacts.add(artifact_id=f"a-{task_id}").parts.add(text="result")
    return task


def ids(tasks: list[pb.Task]) -> list[str]:
    return [t.id for t in tasks]


def entry(task_id: str, config_id: str, n: int, owner: Owner = ALICE) -> OutboxEntry:
    """An outbox row of ``owner``'s task (ALICE's: the tasks the suite writes them with)."""
    return OutboxEntry(task_id, config_id, f"{task_id}:{n}", b"p%d" % n, owner=owner)


def config(
    task_id: str, config_id: str, url: str = "https://hooks.example.com/a2a"
) -> pb.TaskPushNotificationConfig:
    return pb.TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url, token=f"tok-{config_id}")


PG_URL = os.environ.get("A2A_GRPC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")

_pg_unreachable: list[str] = []  # memo: [] unknown, [""] reachable, [reason] not


async def postgres_skip_reason() -> str:
    """Why PostgreSQL cannot be used, or the empty string when it answers."""
    if not _pg_unreachable:
        import asyncpg

        try:
            conn = await asyncpg.connect(PG_URL, timeout=3)
            await conn.close()
            _pg_unreachable.append("")
        except Exception as exc:
            _pg_unreachable.append(f"PostgreSQL not reachable at {PG_URL}: {exc!r}")
    return _pg_unreachable[0]


def unique_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}_"


async def make_sql_store(backend: str, tmp_path: Path, prefix: str) -> SqlTaskStore:
    """A not yet opened SqlTaskStore for ``backend`` ("sqlite" or "postgresql")."""
    if backend == "sqlite":
        return SqlTaskStore(f"sqlite:///{tmp_path}/data/store.db", table_prefix=prefix)
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    return SqlTaskStore(PG_URL, table_prefix=prefix)
