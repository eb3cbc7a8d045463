"""What one cluster-mode SendMessage costs the database: transactions, row
operations and statements, counted on PostgreSQL itself.

``python -m bench.cluster_cost [--requests N] [--concurrency C] [--replicas 1|2] [--plain]``
starts 2 ``--cluster`` replicas (or, with ``--plain``, one plain PostgreSQL
server) on a fresh database with ``log_statement = all``, sends N gRPC
SendMessages alternating replicas, and prints per request: commits
(``pg_stat_database.xact_commit``), rows inserted / updated / deleted /
fetched per table (``pg_stat_user_tables``), the statements the database's
sessions ran (its server log, by backend pid: needs the log readable, e.g.
running as root beside a local PostgreSQL), and the CPU of the servers and of
their PostgreSQL backends (``/proc``). Background work (heartbeat, reaper,
dispatcher polling) is counted in, over the run's wall time: run enough
requests for it to be small, or compare with an idle run (``--requests 0``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import re
import time
from pathlib import Path

from bench import pg
from bench.cluster import REPLICA
from bench.loadgen import RoundRobinClient, discover, make_client, make_text
from bench.procs import ServerSpec, start_server

PLAIN = ServerSpec("ours-pg", "ours", "bench.servers.ours", ("--store", "{pg}"), store="postgres")
LOG = Path("/var/log/postgresql/postgresql-15-main.log")
_LINE = re.compile(r"^\S+ \S+ \S+ \[(\d+)\] \S*@(\S+) LOG:  (?:statement|execute [^:]*): (.*)$")


async def _stats(conn, name: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    out: dict[str, float] = {}
    row = await conn.fetchrow(
        "SELECT xact_commit, xact_rollback, tup_fetched, tup_inserted, tup_updated, tup_deleted "
        "FROM pg_stat_database WHERE datname = $1",
        name,
    )
    out.update({k: float(v) for k, v in row.items()})
    return out


async def _tables(url: str) -> dict[str, tuple[int, ...]]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del, coalesce(idx_tup_fetch,0) + seq_tup_read "
            "FROM pg_stat_user_tables"
        )
    finally:
        await conn.close()
    return {r[0]: tuple(r[1:]) for r in rows}


def _shape(sql: str) -> str:
    sql = re.sub(r"\$\d+|'[^']*'|\b\d+\b", "?", sql.strip())
    return sql[:110]


def _log_size() -> int:
    return LOG.stat().st_size if LOG.exists() else 0


def _statements(name: str, offset: int) -> collections.Counter[str]:
    """The statements database ``name``'s sessions logged after ``offset``, by shape."""
    shapes: collections.Counter[str] = collections.Counter()
    if not LOG.exists():
        return shapes
    with LOG.open(errors="replace") as f:
        f.seek(offset)
        for line in f:
            m = _LINE.match(line.rstrip("\n"))
            if m and m.group(2) == name and "pg_stat_user_tables" not in m.group(3):
                shapes[_shape(m.group(3))] += 1
    return shapes


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    import asyncpg

    db = await pg.create_database()
    name = pg.name_of(db)
    admin = await asyncpg.connect(pg.admin_url())
    await admin.execute(f"ALTER DATABASE \"{name}\" SET log_statement = 'all'")
    spec, names = (PLAIN, ("p1",)) if args.plain else (REPLICA, ("r1", "r2"))
    servers = []
    try:
        for n in names:
            extra = () if args.plain else ("--replica-id", n)
            servers.append(await asyncio.to_thread(start_server, spec, subst={"{pg}": db}, extra_args=extra))
        endpoints = [await discover(s.grpc_port, s.http_port) for s in servers]
        client = RoundRobinClient([make_client(e, "grpc", args.concurrency) for e in endpoints])
        text = make_text(100)
        for _ in range(20):  # warm-up
            await client.send(text)
        await asyncio.sleep(1.5)
        before, tables0 = await _stats(admin, name), await _tables(db)
        cpu0 = [s.cpu_seconds() for s in servers]
        pgcpu0 = pg.backend_cpu(name)
        offset = _log_size()
        t0 = time.monotonic()
        sem = asyncio.Semaphore(args.concurrency)

        async def one() -> None:
            async with sem:
                await client.send(text)

        await asyncio.gather(*(one() for _ in range(args.requests)))
        wall = time.monotonic() - t0
        cpu1 = [s.cpu_seconds() for s in servers]
        pgcpu1 = pg.backend_cpu(name)
        await asyncio.sleep(1.5)  # sessions flush their stats when idle
        after, tables1 = await _stats(admin, name), await _tables(db)
        await client.close()
    finally:
        for s in servers:
            s.stop()
        await admin.close()
        await pg.drop_database(db)
    n = max(1, args.requests)
    print(
        f"{'plain' if args.plain else 'cluster'}: {args.requests} SendMessage, c={args.concurrency}, {wall:.2f} s"
    )
    print(
        "server CPU µs/req:", " + ".join(f"{(b - a) / n * 1e6:.0f}" for a, b in zip(cpu0, cpu1, strict=True))
    )
    pgc = sum(v - pgcpu0.get(k, 0.0) for k, v in pgcpu1.items())
    print(f"postgres backends CPU µs/req: {pgc / n * 1e6:.0f}")
    print("per request:", ", ".join(f"{k} {(after[k] - before[k]) / n:.2f}" for k in before))
    for t in sorted(tables1):
        d = [b - a for a, b in zip(tables0.get(t, (0, 0, 0, 0)), tables1[t], strict=True)]
        if any(d):
            print(f"  {t:28s} ins {d[0] / n:.2f} upd {d[1] / n:.2f} del {d[2] / n:.2f} read {d[3] / n:.2f}")
    shapes = _statements(name, offset)
    if not shapes:
        return
    total = sum(shapes.values())
    print(f"statements per request: {total / n:.2f}")
    for shape, count in shapes.most_common(args.top):
        print(f"  {count / n:6.2f}  {shape}")


if __name__ == "__main__":
    asyncio.run(main())
