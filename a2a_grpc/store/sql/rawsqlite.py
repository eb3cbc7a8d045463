"""SQLAlchemy Core statements on a raw ``sqlite3`` connection: the SQLite
writer's connection (:mod:`a2a_grpc.store.sql.batch`).

SQLAlchemy still builds every statement; :class:`SqliteConnection` compiles
each one once to SQL text with named parameters and runs it on a plain
``sqlite3`` cursor, skipping SQLAlchemy's per-execute work (~20 µs+ a
statement: execution context, result metadata, type processing, none of
which the store's column types need on SQLite — bytes, str, int and float
round-trip as they are). Errors are SQLAlchemy's (``IntegrityError``,
``OperationalError``, ...), so the store's bodies catch the same exceptions on
both backends.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import sqlite as sqlite_dialect

__all__ = ["SqliteConnection", "SqliteResult", "SqliteTransactions", "connect"]

_DIALECT = sqlite_dialect.dialect(paramstyle="named")
#: Compiled statements kept per connection (the store's fixed statements
#: stay; ad-hoc ones, compiled for one call, are evicted first).
_CACHE_SIZE = 256

_Compiled = tuple[Any, str, dict[str, Any]]


def connect(path: str, *, synchronous: str = "NORMAL", uri: bool = False) -> SqliteConnection:
    """Opens the writer's connection: autocommit mode (the batch issues
    BEGIN IMMEDIATE / COMMIT itself), WAL, ``synchronous`` (NORMAL or FULL),
    a 30 s busy timeout (another process writing) and foreign keys on."""
    raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False, uri=uri)
    for pragma in (
        "PRAGMA journal_mode=WAL",
        f"PRAGMA synchronous={synchronous}",
        "PRAGMA busy_timeout=30000",
        "PRAGMA foreign_keys=ON",
    ):
        raw.execute(pragma)
    return SqliteConnection(raw)


class SqliteResult:
    """What ``execute`` returns: the rows of a query (tuples), and the
    number of rows a DML statement changed."""

    __slots__ = ("rowcount", "rows")

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def all(self) -> list[tuple[Any, ...]]:
        return self.rows

    def one(self) -> tuple[Any, ...]:
        if len(self.rows) != 1:
            raise sa_exc.NoResultFound("expected one row") if not self.rows else sa_exc.MultipleResultsFound()
        return self.rows[0]

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalar_one_or_none(self) -> Any:
        return self.one()[0] if self.rows else None

    def scalars(self) -> _Scalars:
        return _Scalars([r[0] for r in self.rows])


class _Scalars(list[Any]):
    def all(self) -> list[Any]:
        return list(self)

    def __iter__(self) -> Iterator[Any]:
        return super().__iter__()


class SqliteConnection:
    """A ``sqlite3`` connection that runs SQLAlchemy Core statements
    (``execute(statement, params)``; ``params`` a dict, or a list of dicts for
    executemany). ``info`` is free per-connection storage, as on
    SQLAlchemy's ``Connection``."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        self.info: dict[str, Any] = {}
        self._compiled: OrderedDict[tuple[int, tuple[str, ...]], _Compiled] = OrderedDict()

    def execute(
        self, statement: Any, params: dict[str, Any] | list[dict[str, Any]] | None = None
    ) -> SqliteResult:
        """Runs ``statement`` (compiled on first use); raises SQLAlchemy's
        DBAPIError subclasses for the database's errors."""
        rows: list[dict[str, Any]] | None = None
        one: dict[str, Any] = {}
        if isinstance(params, list):
            rows = params
        elif params is not None:
            one = params
        sql, defaults = self._compile(statement, rows[0] if rows else one)
        try:
            if rows is not None:
                cursor = self.raw.executemany(sql, [{**defaults, **p} for p in rows] if defaults else rows)
            else:
                cursor = self.raw.execute(sql, {**defaults, **one} if defaults else one)
            fetched = cursor.fetchall() if cursor.description is not None else []
        except sqlite3.Error as exc:
            raise sa_exc.DBAPIError.instance(sql, params, exc, sqlite3.Error) from exc
        return SqliteResult(fetched, cursor.rowcount)

    def _compile(self, statement: Any, first: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        key = (id(statement), tuple(first))
        hit = self._compiled.get(key)
        if hit is not None and hit[0] is statement:
            self._compiled.move_to_end(key)
            return hit[1], hit[2]
        compiled = statement.compile(
            dialect=_DIALECT, column_keys=list(first), compile_kwargs={"render_postcompile": True}
        )
        required = {name for bind, name in compiled.bind_names.items() if bind.required}
        defaults = {k: v for k, v in compiled.params.items() if k not in required and k not in first}
        self._compiled[key] = (
            statement,
            compiled.string,
            defaults,
        )  # keeps ``statement`` alive: ids stay unique
        if len(self._compiled) > _CACHE_SIZE:
            self._compiled.popitem(last=False)
        return compiled.string, defaults

    def close(self) -> None:
        """Closes the connection (rolling back an open transaction)."""
        self.raw.close()


class SqliteTransactions:
    """The batch's transaction verbs on a :class:`SqliteConnection`
    (:class:`~a2a_grpc.store.sql.batch.Transactions`): ``BEGIN IMMEDIATE``
    takes the write lock up front (another process's writer waits on the
    busy timeout instead of failing later at COMMIT)."""

    def __init__(self, conn: SqliteConnection) -> None:
        self._raw = conn.raw

    def begin(self) -> None:
        self._exec("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._exec("COMMIT")

    def rollback(self) -> None:
        if self._raw.in_transaction:
            self._exec("ROLLBACK")

    def _exec(self, sql: str) -> None:
        try:
            self._raw.execute(sql)
        except sqlite3.Error as exc:
            raise sa_exc.DBAPIError.instance(sql, None, exc, sqlite3.Error) from exc
