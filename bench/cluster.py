"""The cluster section of ``make bench``: 2 replicas of ours sharing one PostgreSQL database.

1. Cross-replica event latency, measured by :func:`bench.cluster_latency.measure_latency`
   (committed on r1 → received by a SubscribeToTask on r2; and the same-replica baseline).
2. SendMessage through 2 ``--cluster`` replicas (:mod:`bench.servers.ours`) on a fresh
   database, the client alternating replicas, every answer checked; after each cell
   the last tasks each replica created are read back through the other one. Both
   replicas are pinned to the server CPU: on 2 cores this shows correctness under
   load, not scaling.
"""

from __future__ import annotations

import argparse
import asyncio
import math

from bench import pg
from bench.cluster_latency import measure_latency, quantile
from bench.loadgen import TASKS_CREATED, RoundRobinClient, discover, make_client
from bench.measure import cell_line, measure_cell
from bench.procs import ServerProc, ServerSpec, start_server
from bench.report import ClusterResult

__all__ = ["REPLICA", "cluster_section"]

REPLICA = ServerSpec(
    "ours-cluster-pg", "ours", "bench.servers.ours", ("--store", "{pg}", "--cluster"), store="postgres"
)


async def cluster_section(args: argparse.Namespace, concurrencies: list[int]) -> ClusterResult:
    """Runs both parts (``args.cluster_tasks`` latency tasks of 200 events; gRPC
    SendMessage at each of ``concurrencies``) and returns what they measured; a part
    that fails leaves a note, not an exception."""
    result = ClusterResult()
    db = await pg.create_database()
    print(f"== cluster: cross-replica event latency (database {pg.name_of(db)})", flush=True)
    try:
        cross, local = await measure_latency(db, events=200, tasks=args.cluster_tasks)
    except (RuntimeError, OSError) as exc:
        result.notes.append(f"cross-replica latency not measured: {str(exc).splitlines()[0]}")
    else:
        result.events = len(cross)
        result.cross_p50_ms, result.cross_p99_ms = quantile(cross, 50), quantile(cross, 99)
        result.local_p50_ms, result.local_p99_ms = quantile(local, 50), quantile(local, 99)
        print(
            f"   r1 → r2: p50 {result.cross_p50_ms:.2f} ms  p99 {result.cross_p99_ms:.2f} ms;"
            f"  r1 → r1: p50 {result.local_p50_ms:.2f} ms  p99 {result.local_p99_ms:.2f} ms"
            f"  ({result.events} events each)",
            flush=True,
        )
    finally:
        await pg.drop_database(db)
    await _throughput(result, args, concurrencies)
    return result


async def _throughput(result: ClusterResult, args: argparse.Namespace, concurrencies: list[int]) -> None:
    """SendMessage through 2 fresh replicas on a fresh database, one cell per concurrency."""
    db = await pg.create_database()
    print(f"== cluster: SendMessage through 2 replicas (database {pg.name_of(db)})", flush=True)
    replicas: list[ServerProc] = []
    try:
        for name in ("r1", "r2"):  # one after the other: r1 creates the schema
            extra = ("--replica-id", name)
            started = await asyncio.to_thread(
                start_server, REPLICA, pin=not args.no_pin, subst={"{pg}": db}, extra_args=extra
            )
            replicas.append(started)
        for c in concurrencies:
            await _throughput_cell(result, replicas, c, args)
    except RuntimeError as exc:
        result.notes.append(f"2-replica SendMessage not measured: {str(exc).splitlines()[0]}")
    finally:
        for r in replicas:
            r.stop()
        await pg.drop_database(db)


async def _throughput_cell(
    result: ClusterResult, replicas: list[ServerProc], concurrency: int, args: argparse.Namespace
) -> None:
    endpoints = [await discover(r.grpc_port, r.http_port) for r in replicas]
    client = RoundRobinClient([make_client(e, "grpc", concurrency) for e in endpoints])
    TASKS_CREATED[0] = 0
    try:
        cell = await measure_cell(
            replicas,
            client,
            "grpc",
            "SendMessage",
            concurrency,
            warmup=args.warmup,
            window=args.window,
            windows=args.windows,
            text_size=args.text_size,
            rss_start=math.nan,
        )
        read, errors = await client.cross_check()
    finally:
        await client.close()
    result.cells.append(cell)
    result.checked += read
    result.check_errors += len(errors)
    print(cell_line(cell) + f"  cross-replica reads {read - len(errors)}/{read}", flush=True)
    if errors:
        result.notes.append(
            f"c={concurrency}: {len(errors)} tasks not read back through the other replica: {errors[0]}"
        )
