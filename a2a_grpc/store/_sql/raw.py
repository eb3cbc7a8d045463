"""SQLAlchemy Core statements on the raw driver connections of the writers
(:mod:`a2a_grpc.store._sql.batch`): stdlib ``sqlite3`` and ``asyncpg``.

SQLAlchemy still builds every statement; :class:`StatementCache` compiles
each one once to SQL text (named parameters for ``sqlite3``, ``$n`` for
asyncpg), and the connections run that text on the driver directly, skipping
SQLAlchemy's per-execute work (execution context, result metadata, type
processing; ~20 µs a statement on SQLite, more over asyncpg's adapter, see
docs/decisions.md), which the store's column types do not need: bytes, str,
int, float and bool go to both drivers as they are. On PostgreSQL each SQL
text is prepared once per connection (a named server-side statement).

Both offer what the store's bodies use of SQLAlchemy's ``Connection``:
``execute(statement, params)`` (``params`` a dict, or a list of dicts for
executemany) returning rows and ``rowcount``, and the ``info`` dict. Errors
are SQLAlchemy's (``IntegrityError``, ``OperationalError``, ``DBAPIError``),
so the bodies catch the same exceptions on both backends.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect
from sqlalchemy.util import await_only

__all__ = [
    "AsyncpgConnection",
    "AsyncpgTransactions",
    "Result",
    "SqliteConnection",
    "SqliteTransactions",
    "StatementCache",
    "connect_sqlite",
    "connect_sqlite_reader",
]

#: Compiled statements kept per connection (the store's fixed statements
#: stay; ad-hoc ones, compiled for one call, are evicted first).
_CACHE_SIZE = 256

Params = dict[str, Any] | list[dict[str, Any]] | None


class StatementCache:
    """SQL text of SQLAlchemy statements for one dialect: ``get(statement,
    keys)`` is (SQL, the values of the statement's own bound literals, the
    parameter names in positional order). Keyed by the statement object
    (kept alive by its entry, so its id stays unique) and the parameter names
    of an INSERT without values."""

    def __init__(self, dialect: Any) -> None:
        self._dialect = dialect
        self._entries: OrderedDict[
            tuple[int, tuple[str, ...]], tuple[Any, str, dict[str, Any], list[str]]
        ] = OrderedDict()

    def get(self, statement: Any, keys: tuple[str, ...]) -> tuple[str, dict[str, Any], list[str]]:
        key = (id(statement), keys)
        hit = self._entries.get(key)
        if hit is not None and hit[0] is statement:
            self._entries.move_to_end(key)
            return hit[1], hit[2], hit[3]
        compiled = statement.compile(
            dialect=self._dialect, column_keys=list(keys), compile_kwargs={"render_postcompile": True}
        )
        required = {name for bind, name in compiled.bind_names.items() if bind.required}
        defaults = {k: v for k, v in compiled.params.items() if k not in required and k not in keys}
        names = list(compiled.positiontup or ())
        self._entries[key] = (statement, compiled.string, defaults, names)
        if len(self._entries) > _CACHE_SIZE:
            self._entries.popitem(last=False)
        return compiled.string, defaults, names


def _split(params: Params) -> tuple[list[dict[str, Any]] | None, dict[str, Any]]:
    """(the rows of an executemany, or None; the one row or the first)."""
    if isinstance(params, list):
        return params, params[0] if params else {}
    return None, params or {}


class Result:
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
        return _Scalars(r[0] for r in self.rows)


class _Scalars(list[Any]):
    def all(self) -> list[Any]:
        return list(self)


# -- SQLite --------------------------------------------------------------------

_SQLITE = sqlite_dialect.dialect(paramstyle="named")


def connect_sqlite(path: str, *, synchronous: str = "NORMAL", uri: bool = False) -> SqliteConnection:
    """Opens the SQLite writer's connection: autocommit mode (the batch
    issues BEGIN IMMEDIATE / COMMIT itself), WAL, ``synchronous`` (NORMAL or
    FULL), a 30 s busy timeout (another process writing) and foreign keys on."""
    raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False, uri=uri)
    for pragma in (
        "PRAGMA journal_mode=WAL",
        f"PRAGMA synchronous={synchronous}",
        "PRAGMA busy_timeout=30000",
        "PRAGMA foreign_keys=ON",
    ):
        raw.execute(pragma)
    return SqliteConnection(raw)


def connect_sqlite_reader(path: str, *, uri: bool = False) -> SqliteConnection:
    """A read-only connection for point reads on the event loop's thread:
    busy timeout 0 (a busy database raises at once; the caller reads
    elsewhere, never waiting on the loop)."""
    raw = sqlite3.connect(path, isolation_level=None, timeout=0, uri=uri)
    raw.execute("PRAGMA query_only=1")
    return SqliteConnection(raw)


class SqliteConnection:
    """A ``sqlite3`` connection that runs SQLAlchemy Core statements."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        self.info: dict[str, Any] = {}
        self._cache = StatementCache(_SQLITE)

    def execute(self, statement: Any, params: Params = None) -> Result:
        """Runs ``statement``; raises SQLAlchemy's DBAPIError subclasses."""
        rows, one = _split(params)
        sql, defaults, _names = self._cache.get(statement, tuple(one))
        try:
            if rows is not None:
                cursor = self.raw.executemany(sql, [{**defaults, **p} for p in rows] if defaults else rows)
            else:
                cursor = self.raw.execute(sql, {**defaults, **one} if defaults else one)
            fetched = cursor.fetchall() if cursor.description is not None else []
        except sqlite3.Error as exc:
            raise sa_exc.DBAPIError.instance(sql, params, exc, sqlite3.Error) from exc
        return Result(fetched, cursor.rowcount)

    def execute_sql(self, sql: str, values: list[Any]) -> int:
        """Runs SQL text with positional ``?`` values; returns the rows
        changed. Raises SQLAlchemy's DBAPIError subclasses."""
        try:
            return self.raw.execute(sql, values).rowcount
        except sqlite3.Error as exc:
            raise sa_exc.DBAPIError.instance(sql, values, exc, sqlite3.Error) from exc

    def close(self) -> None:
        """Closes the connection (rolling back an open transaction)."""
        self.raw.close()


class SqliteTransactions:
    """The batch's transaction verbs on a :class:`SqliteConnection`
    (:class:`~a2a_grpc.store._sql.batch.Transactions`): ``BEGIN IMMEDIATE``
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


# -- PostgreSQL ----------------------------------------------------------------

_ASYNCPG = asyncpg_dialect.dialect()


class AsyncpgConnection:
    """An ``asyncpg`` connection that runs SQLAlchemy Core statements from
    synchronous code inside SQLAlchemy's greenlet (``AsyncConnection.run_sync``):
    each statement is prepared once and awaited with ``await_only``."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.info: dict[str, Any] = {}
        self._cache = StatementCache(_ASYNCPG)
        self._prepared: dict[str, Any] = {}
        #: The batch's BEGIN is still to be sent (before its first statement).
        self.begin_pending = False
        #: What this batch sent may have committed: its COMMIT, or a
        #: statement run alone (:meth:`execute_alone`). Once set, the
        #: batch's outcome is unknown if the connection is lost.
        self.commit_sent = False

    @property
    def alone(self) -> bool:
        """Whether the next statement may run alone (its own implicit
        transaction, no BEGIN and COMMIT): the write is the only one of its
        batch and has sent nothing yet."""
        return self.begin_pending

    def execute_alone(self, statement: Any, params: Params = None) -> Result:
        """Runs ``statement`` as the write's only statement: without BEGIN
        and COMMIT when :attr:`alone` (one round trip; the statement is
        atomic on its own), else inside the open transaction."""
        if self.begin_pending:
            self.begin_pending = False
            self.commit_sent = not self.raw.is_closed()  # closed: it fails unsent
        return self._run(statement, params)

    def execute(self, statement: Any, params: Params = None) -> Result:
        """Runs ``statement`` (sending the batch's BEGIN first when still
        pending); raises SQLAlchemy's DBAPIError subclasses."""
        if self.begin_pending:
            self.begin_pending = False
            _exec(self.raw, "BEGIN")
        elif self.commit_sent:
            raise RuntimeError("a statement after one run alone (it committed already)")
        return self._run(statement, params)

    def _run(self, statement: Any, params: Params) -> Result:
        rows, one = _split(params)
        sql, defaults, names = self._cache.get(statement, tuple(one))
        try:
            prepared = self._prepared.get(sql)
            if prepared is None:
                prepared = await_only(self.raw.prepare(sql))
                if len(self._prepared) >= _CACHE_SIZE:
                    self._prepared.pop(next(iter(self._prepared)))
                self._prepared[sql] = prepared
            if rows is not None:
                await_only(prepared.executemany([_args(names, defaults, p) for p in rows]))
                return Result([], len(rows))
            fetched = await_only(prepared.fetch(*_args(names, defaults, one)))
            status = prepared.get_statusmsg() or ""
        except _asyncpg_errors() as exc:
            raise _wrap_pg(sql, params, exc) from exc
        count = status.rsplit(" ", 1)[-1]
        return Result([tuple(r) for r in fetched], int(count) if count.isdigit() else -1)


def _args(names: list[str], defaults: dict[str, Any], values: dict[str, Any]) -> list[Any]:
    return [values[n] if n in values else defaults.get(n) for n in names]


def _asyncpg_errors() -> tuple[type[BaseException], ...]:
    import asyncpg

    return (asyncpg.PostgresError,)


def _wrap_pg(sql: str, params: Params, exc: BaseException) -> sa_exc.DBAPIError:
    """The SQLAlchemy error for an asyncpg one: IntegrityError for a
    constraint, DBAPIError otherwise."""
    import asyncpg

    cls = (
        sa_exc.IntegrityError
        if isinstance(exc, asyncpg.IntegrityConstraintViolationError)
        else sa_exc.DBAPIError
    )
    return cls(sql, params, exc)


class AsyncpgTransactions:
    """The batch's transaction verbs on an :class:`AsyncpgConnection`.
    ``lazy`` (a batch of one write): BEGIN is sent with the first statement,
    so a write of one statement runs alone (see
    :meth:`AsyncpgConnection.execute_alone`) and a batch that wrote nothing
    sends nothing."""

    def __init__(self, conn: AsyncpgConnection, *, lazy: bool = False) -> None:
        self._conn, self._lazy = conn, lazy

    def begin(self) -> None:
        self._conn.commit_sent = False
        if self._lazy:
            self._conn.begin_pending = True
        else:
            _exec(self._conn.raw, "BEGIN")

    def commit(self) -> None:
        conn = self._conn
        conn.begin_pending = False
        if conn.raw.is_in_transaction():
            conn.commit_sent = not conn.raw.is_closed()  # closed: it fails unsent
            _exec(conn.raw, "COMMIT")

    def rollback(self) -> None:
        self._conn.begin_pending = False
        if self._conn.raw.is_in_transaction():
            _exec(self._conn.raw, "ROLLBACK")


def _exec(raw: Any, sql: str) -> None:
    try:
        await_only(raw.execute(sql))
    except _asyncpg_errors() as exc:
        raise _wrap_pg(sql, None, exc) from exc
