"""A task store in any SQL database SQLAlchemy's asyncio API can reach.

SQLite (through ``aiosqlite``) is the embedded default; PostgreSQL (through
``asyncpg``) runs the very same statements. Tasks are stored as serialized
``pb.Task`` bytes next to the columns ListTasks filters and sorts on, and every
update is a compare-and-swap on a version column (design.md, "terminal is
final"). Push configs and the push outbox live in the same database, so an
update and the notifications it causes commit together or not at all.

Tables (names start with ``table_prefix``, ``a2a_`` by default):

- ``tasks``: id, tenant, owner_user, context_id, state, status_ts_ms, version, data
- ``push_configs``: seq (creation order), tenant, owner_user, task_id, id, data,
  dialect (what the config was registered in, NULL for A2A 1.0; added on open)
- ``push_outbox``: seq, task_id, config_id, event_id, payload, attempts,
  next_attempt_at (Unix seconds), state, last_error
- ``task_counts``: tenant, owner_user, dim, val, n — how many tasks each owner
  has in all (dim ``all``), per state (dim ``state``, val the enum number) and
  per contextId (dim ``context``), kept by the same transaction as every task
  write, so ListTasks' ``totalSize`` is one primary-key lookup instead of a
  ``COUNT(*)`` over the matching rows (combined filters still count). On
  PostgreSQL one owner's concurrent task writes therefore queue on that
  owner's count rows until each commits (rows are taken in key order: no
  deadlock); different owners never meet. ``open()`` rebuilds the counts when
  they disagree with the tasks (tasks written without the store).

Speed (issue 6, hot spots 1 and 6): statements are built once with bound
parameters (SQLAlchemy compiles each shape once and reuses it from its
compiled cache); a task write is one transaction whose statements run in one
greenlet (``run_sync``), with only the statements the change needs; terminal
tasks, which never change again (spec §9.1), are served from a small bounded
cache. On SQLite every call into aiosqlite is a round trip to its worker
thread; SQLAlchemy's stock aiosqlite adapter is used as it is (no driver
internals), so that cost remains and is the main difference to raw sqlite3.

The modules, one concern each:

- ``schema``: the tables and indexes, their creation and the count rebuild;
- ``engine``: :class:`SqlDatabase`, the URL, engine, ``open``/``close`` and
  the write transactions every concern goes through;
- ``tasks``: :class:`SqlTasks`, the ``TaskStore`` methods and the task counts;
- ``push_configs``: :class:`SqlPushConfigs`, the ``PushConfigStore`` methods;
- ``outbox``: :class:`SqlPushOutbox`, the ``PushOutbox`` methods;
- ``caches``: :class:`TaskMemory`, the terminal tasks and task versions kept
  in memory.

Why mixins over one :class:`SqlDatabase`: the three halves are the three
store protocols one to one, and each needs the same engine, schema and write
transaction, which the shared base gives them without forwarding methods;
:class:`SqlTaskStore` is then just their union, one object that commits an
update and its outbox rows together. The in-memory caches hold no SQL and are
a plain collaborator object of the task half instead.
"""

from __future__ import annotations

from a2a_grpc.store.sql.deadletters import SqlDeadLetters
from a2a_grpc.store.sql.engine import async_url
from a2a_grpc.store.sql.outbox import SqlPushOutbox
from a2a_grpc.store.sql.push_configs import SqlPushConfigs
from a2a_grpc.store.sql.retention import SqlRetention

__all__ = ["SqlTaskStore", "async_url"]


class SqlTaskStore(SqlRetention, SqlPushConfigs, SqlPushOutbox, SqlDeadLetters):
    """The task store, push-config store and push outbox over SQLAlchemy's
    asyncio engine.

    ``url`` is ``sqlite:///PATH`` (parent directories are created; WAL mode)
    or ``postgresql://USER@HOST[:PORT]/DB``; ``table_prefix`` lets several
    stores share one database. Construction only checks the URL (ValueError
    when unsupported); ``open()`` connects and creates missing tables.

    Several processes may share one database: every task write is a
    compare-and-swap on the version, the counts move in the same transaction,
    and the only task state held in memory is either keyed by version (a
    task's content at one version never changes) or terminal (never changes).
    """
