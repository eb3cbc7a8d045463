"""PostgreSQL for the benchmark: a fresh database per server, dropped afterwards.

The PostgreSQL server is ``$A2A_GRPC_BENCH_POSTGRES_URL`` (else
``$A2A_GRPC_TEST_POSTGRES_URL``, else ``postgresql://postgres@127.0.0.1:5432/postgres``):
a URL of any database the user may connect to and ``CREATE DATABASE`` from. Each
server benchmarked on PostgreSQL gets its own ``a2a_bench_<hex>`` database, so runs
(and servers within a run) never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from bench.procs import cpu_seconds

__all__ = [
    "PostgresUnavailable",
    "admin_url",
    "backend_cpu",
    "check",
    "create_database",
    "drop_database",
    "name_of",
]


class PostgresUnavailable(RuntimeError):
    """PostgreSQL cannot be reached (or lets us create no database): one line why."""


def admin_url() -> str:
    """The URL the benchmark connects to to create and drop its databases."""
    return os.environ.get("A2A_GRPC_BENCH_POSTGRES_URL") or os.environ.get(
        "A2A_GRPC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
    )


def _with_db(url: str, name: str) -> str:
    base, _, tail = url.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + (f"?{tail}" if tail else "")


async def _connect(url: str):  # type: ignore[no-untyped-def]
    try:
        import asyncpg
    except ImportError as exc:
        raise PostgresUnavailable(f"asyncpg is not installed ({exc}): run `make install`") from None
    try:
        return await asyncpg.connect(url, timeout=5)
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        raise PostgresUnavailable(
            f"PostgreSQL is not reachable at {url} ({type(exc).__name__}: {exc}); start it,"
            " point A2A_GRPC_BENCH_POSTGRES_URL at it, or run with --no-postgres"
        ) from None


async def check() -> None:
    """Raises :class:`PostgresUnavailable` unless the admin URL accepts a connection and
    lets us create (and drop) a database."""
    await drop_database(await create_database())


async def create_database() -> str:
    """Creates a fresh empty database and returns its ``postgresql://`` URL."""
    import asyncpg

    name = f"a2a_bench_{uuid.uuid4().hex[:12]}"
    conn = await _connect(admin_url())
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    except asyncpg.PostgresError as exc:
        raise PostgresUnavailable(
            f"cannot create a database on {admin_url()} ({type(exc).__name__}: {exc});"
            " point A2A_GRPC_BENCH_POSTGRES_URL at a user who may, or run with --no-postgres"
        ) from None
    finally:
        await conn.close()
    return _with_db(admin_url(), name)


def name_of(url: str) -> str:
    """The database name of a ``postgresql://`` URL."""
    return url.partition("?")[0].rsplit("/", 1)[-1]


async def drop_database(url: str) -> None:
    """Drops the database of ``url`` (made by :func:`create_database`), closing its sessions."""
    name = name_of(url)
    if not name.startswith("a2a_bench_"):
        raise ValueError(f"refusing to drop {name!r}: not a benchmark database")
    conn = await _connect(admin_url())
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def backend_cpu(database: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend connected to ``database``, by
    pid: the processes whose title (``postgres: USER DB HOST(PORT) STATE``) names it.
    The server's shared processes (WAL writer, checkpointer) are not counted."""
    if not database:
        return {}
    needle = f" {database} ".encode()
    out: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            title = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ")
            if title.startswith(b"postgres:") and needle in title:
                out[int(entry.name)] = cpu_seconds(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return out
