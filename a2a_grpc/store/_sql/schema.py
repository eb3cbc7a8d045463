"""The SQL store's tables and indexes, and their creation on ``open()``.

Every table name starts with the store's ``table_prefix`` (``a2a_`` by
default), so several stores can share one database. The package docstring
describes the columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    cast,
    delete,
    func,
    insert,
    inspect,
    literal,
    select,
    text,
)
from sqlalchemy.engine import Connection

__all__ = ["Schema", "create_schema"]

# Autoincrementing 64-bit keys; SQLite only autoincrements an INTEGER PRIMARY KEY.
_SeqType = BigInteger().with_variant(Integer(), "sqlite")
# Task ids sort by code point everywhere (the ListTasks tiebreak), whatever the
# PostgreSQL database's default collation is.
_IdType = String().with_variant(String(collation="C"), "postgresql")


@dataclass(frozen=True)
class Schema:
    """One store's five tables, all in ``metadata``."""

    metadata: MetaData
    tasks: Table
    configs: Table
    outbox: Table
    counts: Table
    chunks: Table

    @classmethod
    def build(cls, prefix: str) -> Schema:
        """The tables and indexes named ``<prefix>tasks``, ``<prefix>push_configs``,
        ``<prefix>push_outbox``, ``<prefix>task_counts`` and
        ``<prefix>artifact_chunks`` (not created yet)."""
        md = MetaData()
        return cls(
            md,
            _tasks(md, prefix),
            _push_configs(md, prefix),
            _push_outbox(md, prefix),
            _task_counts(md, prefix),
            _artifact_chunks(md, prefix),
        )


def _tasks(md: MetaData, prefix: str) -> Table:
    tasks = Table(
        f"{prefix}tasks",
        md,
        # The key is (id, tenant, owner_user): a task id names a task of one
        # owner (docs/decisions.md). The id leads, so time-ordered ids still
        # append to the key's B-tree.
        Column("id", _IdType, primary_key=True),
        Column("tenant", String(), primary_key=True),
        Column("owner_user", String(), primary_key=True),
        Column("context_id", String(), nullable=False),
        Column("state", Integer(), nullable=False),
        Column("status_ts_ms", BigInteger(), nullable=False),
        Column("version", Integer(), nullable=False),
        Column("data", LargeBinary(), nullable=False),
        # Rows in artifact_chunks appended since ``data`` was written (0: none).
        Column("chunks", Integer(), nullable=False, server_default="0"),
    )
    c = tasks.c
    # Ascending, though ListTasks reads it newest first (backwards): new tasks
    # append at its right end, where SQLite's B-tree adds a page without
    # rebalancing (a descending index took ~2 pages per commit, issue 17).
    Index(f"{prefix}tasks_owner_ts", c.tenant, c.owner_user, c.status_ts_ms, c.id)
    Index(f"{prefix}tasks_owner_context", c.tenant, c.owner_user, c.context_id, c.status_ts_ms, c.id)
    Index(f"{prefix}tasks_owner_state", c.tenant, c.owner_user, c.state, c.status_ts_ms, c.id)
    return tasks


def _push_configs(md: MetaData, prefix: str) -> Table:
    configs = Table(
        f"{prefix}push_configs",
        md,
        Column("seq", _SeqType, primary_key=True, autoincrement=True),
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("task_id", String(), nullable=False),
        Column("id", String(), nullable=False),
        Column("data", LargeBinary(), nullable=False),
        # The dialect the config was registered in (C21); NULL: "1.0". Added to older databases on open
        Column("dialect", Text(), nullable=True),
        # Leading (task_id, id) also serves the push dispatcher's owner-less lookup.
        UniqueConstraint("task_id", "id", "tenant", "owner_user", name=f"{prefix}push_configs_key"),
    )
    c = configs.c
    Index(f"{prefix}push_configs_task", c.tenant, c.owner_user, c.task_id, c.seq)
    return configs


def _push_outbox(md: MetaData, prefix: str) -> Table:
    outbox = Table(
        f"{prefix}push_outbox",
        md,
        Column("seq", _SeqType, primary_key=True, autoincrement=True),
        Column("task_id", String(), nullable=False),
        Column("config_id", String(), nullable=False),
        Column("event_id", String(), nullable=False),
        Column("payload", LargeBinary(), nullable=False),
        Column("attempts", Integer(), nullable=False, default=0),
        Column("next_attempt_at", Double(), nullable=False),
        Column("state", String(16), nullable=False),
        Column("last_error", Text(), nullable=False, default=""),
        # W3C traceparent of the update (telemetry); added to older databases on open
        Column("trace_context", Text(), nullable=True),
        # The owner of the task (and config): added to older databases on open,
        # filled from the push configs.
        Column("tenant", Text(), nullable=False, server_default=""),
        Column("owner_user", Text(), nullable=False, server_default=""),
    )
    o = outbox.c
    Index(f"{prefix}push_outbox_due", o.state, o.next_attempt_at, o.seq)
    Index(f"{prefix}push_outbox_config", o.task_id, o.config_id, o.state)
    return outbox


def _task_counts(md: MetaData, prefix: str) -> Table:
    return Table(
        f"{prefix}task_counts",
        md,
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("dim", String(16), nullable=False),  # "all", "state" or "context"
        Column("val", String(), nullable=False),  # "", the state number, the contextId
        Column("n", BigInteger(), nullable=False),
        PrimaryKeyConstraint("tenant", "owner_user", "dim", "val", name=f"{prefix}task_counts_key"),
        # SQLite: the rows live in the key's B-tree, not in a rowid table
        # beside it (a count upsert dirtied a page of each).
        sqlite_with_rowid=False,
    )


def _artifact_chunks(md: MetaData, prefix: str) -> Table:
    """Artifact chunks (``append=true`` updates) kept apart from their task's
    ``data`` until the next whole write folds them in: an append writes the
    chunk only. ``version`` is the task version the chunk made."""
    return Table(
        f"{prefix}artifact_chunks",
        md,
        Column("task_id", _IdType, nullable=False),
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("version", Integer(), nullable=False),
        Column("data", LargeBinary(), nullable=False),  # a serialized pb.Artifact
        PrimaryKeyConstraint(
            "task_id", "tenant", "owner_user", "version", name=f"{prefix}artifact_chunks_key"
        ),
    )


def create_schema(conn: Connection, schema: Schema) -> None:
    """Creates what is missing (tables, and columns added to existing
    tables), then checks the task counts against the tasks (one COUNT,
    ~40 ms per million tasks on SQLite) and rebuilds them when they
    disagree: a database from before the counts existed, or tasks written
    behind the store's back (bulk imports). A database of an older layout is
    brought up to date first (:func:`_upgrade_sqlite`, :func:`rekey`)."""
    sqlite = conn.dialect.name == "sqlite"
    if sqlite:
        _upgrade_sqlite(conn, schema)
    aside = _set_aside(conn, schema) if sqlite else []
    schema.metadata.create_all(conn)
    if sqlite:  # an existing table's index is not created by create_all
        next(i for i in schema.tasks.indexes if i.name == f"{schema.tasks.name}_owner_ts").create(
            conn, checkfirst=True
        )
    added = _add_columns(conn, schema)
    if sqlite:
        _copy_back(conn, schema, aside)
    else:
        rekey(conn, schema.tasks, ["id", "tenant", "owner_user"])
        _rekey_chunks_pg(conn, schema)
    if ("outbox", "tenant") in added:
        _fill_outbox_owners(conn, schema)
    k = schema.counts.c
    tasks_total = select(func.count()).select_from(schema.tasks).scalar_subquery()
    counted = select(func.coalesce(func.sum(k.n), 0)).where(k.dim == "all").scalar_subquery()
    total, known = conn.execute(select(tasks_total, counted)).one()
    if total != known:
        _rebuild_counts(conn, schema)


#: Columns added after the first release: (table attribute, column, SQL type).
_ADDED_COLUMNS = (
    ("outbox", "trace_context", "TEXT"),
    ("tasks", "chunks", "INTEGER NOT NULL DEFAULT 0"),
    ("configs", "dialect", "TEXT"),
    ("outbox", "tenant", "TEXT NOT NULL DEFAULT ''"),
    ("outbox", "owner_user", "TEXT NOT NULL DEFAULT ''"),
)

#: The keys of an older release, where a task id named one task of any owner.
_OLD_KEYS = {"tasks": ["id"], "chunks": ["task_id", "version"]}


def _set_aside(conn: Connection, schema: Schema) -> list[Table]:
    """SQLite (which cannot change a table's key): renames the tasks and
    artifact-chunk tables of an older release, keyed by the task id alone, to
    ``<name>__rekey`` (their indexes dropped: derived, and their names are
    taken) for :func:`create_schema` to make them anew and
    :func:`_copy_back` to move their rows over, in the same transaction."""
    inspector = inspect(conn)
    tables = set(inspector.get_table_names())
    quote = conn.dialect.identifier_preparer.quote
    aside = []
    for attr, old_key in _OLD_KEYS.items():
        table: Table = getattr(schema, attr)
        if (
            table.name not in tables
            or inspector.get_pk_constraint(table.name)["constrained_columns"] != old_key
        ):
            continue
        for index in inspector.get_indexes(table.name):
            conn.execute(text(f"DROP INDEX IF EXISTS {quote(str(index['name']))}"))
        conn.execute(text(f"ALTER TABLE {quote(table.name)} RENAME TO {quote(table.name + '__rekey')}"))
        aside.append(table)
    return aside


def _copy_back(conn: Connection, schema: Schema, aside: list[Table]) -> None:
    """Moves the rows of the tables :func:`_set_aside` renamed into their new
    tables (a chunk takes its task's owner) and drops the old ones."""
    quote = conn.dialect.identifier_preparer.quote
    inspector = inspect(conn)
    tasks, chunks = quote(schema.tasks.name), quote(schema.chunks.name)
    for table in aside:
        old = quote(table.name + "__rekey")
        if table is schema.tasks:
            have = {c["name"] for c in inspector.get_columns(table.name + "__rekey")}
            names = ", ".join(quote(c.name) for c in table.columns if c.name in have)
            conn.execute(text(f"INSERT INTO {tasks} ({names}) SELECT {names} FROM {old}"))
        else:
            conn.execute(
                text(
                    f"INSERT INTO {chunks} (task_id, tenant, owner_user, version, data) "
                    f"SELECT c.task_id, t.tenant, t.owner_user, c.version, c.data FROM {old} c "
                    f"JOIN {tasks} t ON t.id = c.task_id"
                )
            )
        conn.execute(text(f"DROP TABLE {old}"))


def rekey(conn: Connection, table: Table, key: list[str]) -> None:
    """PostgreSQL: gives ``table`` the primary key ``key`` (its columns must
    exist and be filled) when it has another: an older release's, where a
    task id named one task of any owner. No row is touched."""
    found = inspect(conn).get_pk_constraint(table.name)
    if found["constrained_columns"] == key:
        return
    quote = conn.dialect.identifier_preparer.quote
    name, columns = quote(table.name), ", ".join(quote(c) for c in key)
    if found.get("name"):
        conn.execute(text(f"ALTER TABLE {name} DROP CONSTRAINT {quote(str(found['name']))}"))
    constraint = quote(str(table.primary_key.name or f"{table.name}_pkey"))
    conn.execute(text(f"ALTER TABLE {name} ADD CONSTRAINT {constraint} PRIMARY KEY ({columns})"))


def _rekey_chunks_pg(conn: Connection, schema: Schema) -> None:
    """PostgreSQL: an older release's artifact chunks get their task's owner
    (columns added and filled; a chunk of no task is dropped), then the key
    (task_id, tenant, owner_user, version)."""
    table = schema.chunks
    if "tenant" not in {c["name"] for c in inspect(conn).get_columns(table.name)}:
        quote = conn.dialect.identifier_preparer.quote
        chunks, tasks = quote(table.name), quote(schema.tasks.name)
        conn.execute(text(f"ALTER TABLE {chunks} ADD COLUMN tenant VARCHAR, ADD COLUMN owner_user VARCHAR"))
        conn.execute(
            text(
                f"UPDATE {chunks} c SET tenant = t.tenant, owner_user = t.owner_user "
                f"FROM {tasks} t WHERE t.id = c.task_id"
            )
        )
        conn.execute(text(f"DELETE FROM {chunks} WHERE tenant IS NULL"))
        conn.execute(
            text(
                f"ALTER TABLE {chunks} ALTER COLUMN tenant SET NOT NULL, ALTER COLUMN owner_user SET NOT NULL"
            )
        )
    rekey(conn, table, ["task_id", "tenant", "owner_user", "version"])


def _fill_outbox_owners(conn: Connection, schema: Schema) -> None:
    """An older release's outbox rows (just given owner columns) get the
    owner of their push config: before the upgrade a task id named one task,
    so (task, config) names one config. A row whose config is gone gets ""
    (its delivery finds no config and is dropped, as before)."""
    quote = conn.dialect.identifier_preparer.quote
    outbox, configs = quote(schema.outbox.name), quote(schema.configs.name)
    match = f"FROM {configs} c WHERE c.task_id = {outbox}.task_id AND c.id = {outbox}.config_id LIMIT 1"
    conn.execute(
        text(
            f"UPDATE {outbox} SET tenant = coalesce((SELECT c.tenant {match}), ''), "
            f"owner_user = coalesce((SELECT c.owner_user {match}), '')"
        )
    )


def _upgrade_sqlite(conn: Connection, schema: Schema) -> None:
    """Drops what an older release laid out differently, for
    :func:`create_schema` to make anew: the descending ``tasks_owner_ts``
    index (built again from the tasks) and a ``task_counts`` table with
    rowids (its rows rebuilt from the tasks by the count check). Derived
    data only: no task, push config or outbox row is touched, and after a
    crash in between the next ``open()`` creates what is missing."""
    owner_ts = f"{schema.tasks.name}_owner_ts"
    found: dict[str, str | None] = dict(
        conn.execute(
            text("SELECT name, sql FROM sqlite_master WHERE name IN (:index, :counts)"),
            {"index": owner_ts, "counts": schema.counts.name},
        ).all()
    )
    quote = conn.dialect.identifier_preparer.quote
    if " DESC" in (found.get(owner_ts) or "").upper():
        conn.execute(text(f"DROP INDEX IF EXISTS {quote(owner_ts)}"))
    counts_sql = found.get(schema.counts.name)
    if counts_sql is not None and "WITHOUT ROWID" not in counts_sql.upper():
        conn.execute(text(f"DROP TABLE IF EXISTS {quote(schema.counts.name)}"))


def _add_columns(conn: Connection, schema: Schema) -> set[tuple[str, str]]:
    """Adds the columns of :data:`_ADDED_COLUMNS` a database made by an
    older release lacks (``ALTER TABLE … ADD COLUMN``); returns the
    (table attribute, column) pairs added."""
    inspector = inspect(conn)
    added = set()
    for attr, column, sql_type in _ADDED_COLUMNS:
        table: Table = getattr(schema, attr)
        if column not in {c["name"] for c in inspector.get_columns(table.name)}:
            name = conn.dialect.identifier_preparer.quote(table.name)
            conn.execute(text(f"ALTER TABLE {name} ADD COLUMN {column} {sql_type}"))
            added.add((attr, column))
    return added


def _rebuild_counts(conn: Connection, schema: Schema) -> None:
    """Replaces every ``task_counts`` row by a GROUP BY over the tasks."""
    t = schema.tasks.c
    conn.execute(delete(schema.counts))
    cols = ["tenant", "owner_user", "dim", "val", "n"]
    for dim, val in (
        ("all", literal("")),
        ("state", cast(t.state, String())),
        ("context", t.context_id),
    ):
        conn.execute(
            insert(schema.counts).from_select(
                cols,
                select(t.tenant, t.owner_user, literal(dim), val, func.count()).group_by(
                    t.tenant, t.owner_user, val
                ),
            )
        )
