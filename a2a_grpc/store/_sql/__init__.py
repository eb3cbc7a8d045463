"""A task store in any SQL database SQLAlchemy's asyncio API can reach.

SQLite is the embedded default; PostgreSQL (through ``asyncpg``) runs the
very same statements. Tasks are stored as serialized
``pb.Task`` bytes next to the columns ListTasks filters and sorts on, and every
update is a compare-and-swap on a version column (design.md, "terminal is
final"). Push configs and the push outbox live in the same database, so an
update and the notifications it causes commit together or not at all.

Tables (names start with ``table_prefix``, ``a2a_`` by default):

- ``tasks``: id, tenant, owner_user, context_id, state, status_ts_ms, version, data.
  Server-minted task and context ids are time-ordered (UUIDv7,
  :func:`a2a_grpc.types.new_task_id`) and every index is ascending, so a new
  task appends to each B-tree instead of dirtying a random page of it (issue
  17; ``open()`` rebuilds the descending index an older SQLite database has)
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
  they disagree with the tasks (tasks written without the store). On SQLite
  the table is ``WITHOUT ROWID`` (an older database's is dropped and rebuilt
  from the tasks on open).

Writes are group-committed (issue 17, :mod:`a2a_grpc.store._sql.batch`):
every write is a synchronous *body* of SQLAlchemy Core statements, queued to
one writer that commits everything queued while its previous commit ran in
one transaction, each caller getting its own result or error. On SQLite the
writer is a dedicated thread with its own stdlib ``sqlite3`` connection
and on PostgreSQL one task on one asyncpg connection; either way the
statements are compiled once to SQL text and run on the driver directly
(:mod:`a2a_grpc.store._sql.raw`; prepared once per connection on
PostgreSQL). Reads go through SQLAlchemy's asyncio engine (aiosqlite,
asyncpg), except that on SQLite a task read by id (``get``) runs on the event
loop's own ``sqlite3`` connection: an indexed point read, ~10 µs against
~400 µs through aiosqlite's thread, that never waits on a lock. A write's future resolves after its
COMMIT returned: "acknowledged" is durable as the database's commit is (the
``batch`` module docstring says what that is per ``synchronous`` level).
Terminal tasks, which never change again (spec §9.1), are served from a
small bounded cache.

The modules, one concern each:

- ``schema``: the tables and indexes, their creation and the count rebuild;
- ``engine``: :class:`SqlDatabase`, the URL, engine, ``open``/``close`` and
  the writer every concern's writes go through;
- ``batch``: the group commit (the queue, one transaction per batch, each
  caller's outcome) and the two writers (SQLite thread, PostgreSQL task);
- ``raw``: SQLAlchemy Core statements on the writers' raw driver connections
  (``sqlite3``, ``asyncpg``);
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

from a2a_grpc.store._sql.deadletters import SqlDeadLetters
from a2a_grpc.store._sql.engine import async_url
from a2a_grpc.store._sql.outbox import SqlPushOutbox
from a2a_grpc.store._sql.push_configs import SqlPushConfigs
from a2a_grpc.store._sql.retention import SqlRetention

__all__ = ["SqlTaskStore", "async_url"]


class SqlTaskStore(SqlRetention, SqlPushConfigs, SqlPushOutbox, SqlDeadLetters):
    """The task store, push-config store and push outbox over SQLAlchemy's
    asyncio engine.

    ``url`` is ``sqlite:///PATH`` (parent directories are created; WAL mode;
    ``?synchronous=full`` to fsync every commit) or ``postgresql://USER@HOST[:PORT]/DB``; ``table_prefix`` lets several
    stores share one database. Construction only checks the URL (ValueError
    when unsupported); ``open()`` connects and creates missing tables.

    Several processes may share one database: every task write is a
    compare-and-swap on the version, the counts move in the same transaction,
    and the only task state held in memory is either keyed by version (a
    task's content at one version never changes) or terminal (never changes).
    """
