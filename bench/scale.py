"""Scale checks (issue 6 item 4), run with ``python -m bench.run --scale``.

1. **Fan-out**: ``--streams`` (default 10,000) concurrent ``SubscribeToTask`` gRPC
   streams on one task of a2a-grpc's server (in-memory store, one pinned core). The
   task is parked in INPUT_REQUIRED by :class:`bench.agents.HoldAgent`; once every
   stream has its first event (the task snapshot) a follow-up message completes the
   task. Reported: server RSS per open stream, time to open them all, and the time
   from sending the follow-up until the first new event and the final COMPLETED
   update reached every stream (p50 and the last one). The client runs on the other
   core, so its own cost of reading 10,000 streams is part of that time.
2. **ListTasks**: a2a-grpc's SQLite store with 10k, 100k and 1M stored tasks (bulk
   inserted with the stdlib ``sqlite3`` into the store's own schema, 1,000 contexts,
   two states), then ListTasks over gRPC at concurrency 1: first page, one context,
   one state, and the second page through the cursor. Every answer is checked
   (page size, ``totalSize``). Flat latencies mean the filters and cursor use indexes.

Results go to ``bench/results/scale.md`` (and are printed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import grpc

from a2a_grpc.types import pb, pb_grpc
from bench.procs import ServerSpec, pin_self, start_server
from bench.run import RESULTS, machine_info

_MD = (("a2a-version", "1.0"),)


def _msg(text: str, task_id: str = "") -> pb.Message:
    return pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, task_id=task_id, parts=[pb.Part(text=text)]
    )


# --- 1. fan-out -----------------------------------------------------------------------


async def fanout(n_streams: int, channels: int = 20, wave: int = 500) -> dict[str, Any]:
    """Opens ``n_streams`` SubscribeToTask streams on one held task, completes the
    task, and measures memory and delivery time (see the module docstring)."""
    spec = ServerSpec(
        "ours-memory-hold",
        "ours",
        "bench.servers.ours",
        ("--store", "memory", "--agent", "bench.agents:HoldAgent"),
    )
    server = await asyncio.to_thread(start_server, spec)
    chans = [grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") for _ in range(channels)]
    stubs = [pb_grpc.A2AServiceStub(c) for c in chans]
    try:
        resp = await stubs[0].SendMessage(
            pb.SendMessageRequest(message=_msg("hold")), metadata=_MD, timeout=10
        )
        task_id = resp.task.id
        if resp.task.status.state != pb.TASK_STATE_INPUT_REQUIRED:
            raise RuntimeError(f"hold task is {pb.TaskState.Name(resp.task.status.state)}")
        await asyncio.sleep(0.5)
        rss0, cpu0 = server.rss_mb(), server.cpu_seconds()
        opened = 0
        all_open = asyncio.Event()
        progress = asyncio.Event()  # set whenever a stream opened (or failed to)
        errors: list[str] = []

        async def subscriber(i: int) -> tuple[float, float]:
            nonlocal opened
            call = stubs[i % channels].SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=_MD)
            first_new = done = float("nan")
            n = 0
            try:
                async for ev in call:
                    n += 1
                    if n == 1:
                        opened += 1
                        progress.set()
                        if opened == n_streams:
                            all_open.set()
                        if ev.WhichOneof("payload") != "task":
                            raise RuntimeError(f"first event is {ev.WhichOneof('payload')}")
                        continue
                    t = time.perf_counter()
                    if first_new != first_new:
                        first_new = t
                    if ev.WhichOneof("payload") == "status_update" and (
                        ev.status_update.status.state == pb.TASK_STATE_COMPLETED
                    ):
                        done = t
            except grpc.aio.AioRpcError as exc:
                errors.append(f"{exc.code().name} {exc.details()!r} after {n} events")
                if n == 0:
                    opened += 1  # do not wait for a stream that failed before opening
                    progress.set()
                    if opened == n_streams:
                        all_open.set()
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc} after {n} events"[:200])
            return first_new, done

        t_open = time.perf_counter()
        # Open in waves: grpc-core cancels new calls beyond its pending-request queue
        # (grpc.server.max_pending_requests, 1000 by default) when they arrive in one burst.
        subs: list[asyncio.Task[tuple[float, float]]] = []
        for lo in range(0, n_streams, wave):
            subs += [asyncio.create_task(subscriber(i)) for i in range(lo, min(n_streams, lo + wave))]
            while opened < len(subs):
                progress.clear()
                await progress.wait()
        await asyncio.wait_for(all_open.wait(), timeout=300)
        open_s = time.perf_counter() - t_open
        await asyncio.sleep(1.0)
        rss1 = server.rss_mb()
        cpu1 = server.cpu_seconds()
        t0 = time.perf_counter()
        done_resp = await stubs[0].SendMessage(
            pb.SendMessageRequest(message=_msg("x" * 100, task_id=task_id)), metadata=_MD, timeout=300
        )
        send_s = time.perf_counter() - t0
        results = await asyncio.wait_for(asyncio.gather(*subs), timeout=300)
        cpu2 = server.cpu_seconds()
        firsts = sorted(r[0] - t0 for r in results if r[0] == r[0])
        dones = sorted(r[1] - t0 for r in results if r[1] == r[1])
        return {
            "streams": n_streams,
            "channels": channels,
            "wave": wave,
            "errors": len(errors) + (n_streams - len(dones)),
            "error_samples": sorted(set(errors))[:3],
            "final_state": pb.TaskState.Name(done_resp.task.status.state),
            "open_s": open_s,
            "open_cpu_s": cpu1 - cpu0,
            "rss_before_mb": rss0,
            "rss_open_mb": rss1,
            "kib_per_stream": (rss1 - rss0) * 1024 / n_streams,
            "send_s": send_s,
            "first_event_p50_ms": 1e3 * statistics.median(firsts) if firsts else float("nan"),
            "first_event_all_ms": 1e3 * firsts[-1] if firsts else float("nan"),
            "completed_p50_ms": 1e3 * statistics.median(dones) if dones else float("nan"),
            "completed_all_ms": 1e3 * dones[-1] if dones else float("nan"),
            "fanout_cpu_s": cpu2 - cpu1,
        }
    finally:
        for c in chans:
            with contextlib.suppress(Exception):
                await c.close()
        server.stop()


# --- 2. ListTasks on SQLite -------------------------------------------------------------

_CONTEXTS = 1000
_BASE_S = 1_790_000_000  # a fixed epoch second in 2026


def _task_row(i: int, text: str) -> tuple[str, str, str, str, int, int, int, bytes]:
    task_id = f"bench-{i:09d}"
    ctx = f"ctx-{i % _CONTEXTS:04d}"
    state = pb.TASK_STATE_COMPLETED if i % 4 else pb.TASK_STATE_INPUT_REQUIRED
    ms = _BASE_S * 1000 + i * 7  # distinct, increasing status timestamps
    task = pb.Task(id=task_id, context_id=ctx)
    task.status.state = state  # type: ignore[assignment]
    task.status.timestamp.FromMilliseconds(ms)
    task.history.append(
        pb.Message(
            message_id=f"m-{i}",
            role=pb.ROLE_USER,
            task_id=task_id,
            context_id=ctx,
            parts=[pb.Part(text=text)],
        )
    )
    task.artifacts.append(pb.Artifact(artifact_id=f"a-{i}", name="echo", parts=[pb.Part(text=text)]))
    return (task_id, "", "", ctx, state, ms, 2, task.SerializeToString())


def _bulk_insert(db: Path, start: int, stop: int) -> float:
    """Inserts tasks ``start..stop-1`` into the store's ``a2a_tasks`` table."""
    text = "x" * 100
    t = time.perf_counter()
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=OFF")
        batch = 50_000
        for lo in range(start, stop, batch):
            rows = [_task_row(i, text) for i in range(lo, min(stop, lo + batch))]
            con.executemany(
                "INSERT INTO a2a_tasks (id, tenant, owner_user, context_id, state, status_ts_ms, version, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            con.commit()
        con.execute("ANALYZE")
        con.commit()
    finally:
        con.close()
    return time.perf_counter() - t


_SQL = {
    "COUNT(*) all": "SELECT count(*) FROM a2a_tasks WHERE tenant = '' AND owner_user = ''",
    "COUNT(*) one state": "SELECT count(*) FROM a2a_tasks WHERE tenant = '' AND owner_user = '' AND state = 6",
    "page of 51, all": "SELECT data FROM a2a_tasks WHERE tenant = '' AND owner_user = ''"
    " ORDER BY status_ts_ms DESC, id DESC LIMIT 51",
    "page of 51, one state": "SELECT data FROM a2a_tasks WHERE tenant = '' AND owner_user = '' AND state = 6"
    " ORDER BY status_ts_ms DESC, id DESC LIMIT 51",
}


def _time_sql(db: Path, n: int) -> list[dict[str, Any]]:
    """A page query and COUNT(*) queries timed alone in sqlite3 (median of 5): shows
    that the page stays flat through the indexes and what counting rows would cost."""
    con = sqlite3.connect(db)
    try:
        out = []
        for name, sql in _SQL.items():
            times = []
            for _ in range(5):
                t = time.perf_counter()
                con.execute(sql).fetchall()
                times.append(time.perf_counter() - t)
            out.append({"tasks": n, "statement": name, "ms": 1e3 * statistics.median(times)})
        return out
    finally:
        con.close()


def _expected(n: int, *, context: str = "", state: int = 0) -> int:
    count = 0
    if context:
        k = int(context.removeprefix("ctx-"))
        count = len(range(k, n, _CONTEXTS))
        if state:
            raise ValueError("one filter at a time")
        return count
    if state == pb.TASK_STATE_INPUT_REQUIRED:
        return len(range(0, n, 4))
    if state == pb.TASK_STATE_COMPLETED:
        return n - len(range(0, n, 4))
    return n


async def _time_queries(stub: pb_grpc.A2AServiceStub, n: int, seconds: float) -> list[dict[str, Any]]:
    first = await stub.ListTasks(pb.ListTasksRequest(page_size=50), metadata=_MD, timeout=60)
    queries: list[tuple[str, pb.ListTasksRequest, int]] = [
        ("first page (50)", pb.ListTasksRequest(page_size=50), _expected(n)),
        (
            "one context",
            pb.ListTasksRequest(page_size=50, context_id="ctx-0007"),
            _expected(n, context="ctx-0007"),
        ),
        (
            "one state (INPUT_REQUIRED)",
            pb.ListTasksRequest(page_size=50, status=pb.TASK_STATE_INPUT_REQUIRED),
            _expected(n, state=pb.TASK_STATE_INPUT_REQUIRED),
        ),
        (
            "second page (cursor)",
            pb.ListTasksRequest(page_size=50, page_token=first.next_page_token),
            _expected(n),
        ),
    ]
    out = []
    for name, req, total in queries:
        lat: list[float] = []
        errors: list[str] = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(lat) + len(errors) < 5:
            t = time.perf_counter()
            try:
                resp = await stub.ListTasks(req, metadata=_MD, timeout=60)
            except grpc.aio.AioRpcError as exc:
                errors.append(f"{exc.code().name}: {exc.details()}")
                continue
            lat.append(time.perf_counter() - t)
            want = min(50, total)
            if len(resp.tasks) != want or resp.total_size != total:
                errors.append(
                    f"got {len(resp.tasks)} tasks / totalSize {resp.total_size}, want {want} / {total}"
                )
            if len(lat) + len(errors) >= 2000:
                break
        lat.sort()
        out.append(
            {
                "tasks": n,
                "query": name,
                "matching": total,
                "calls": len(lat),
                "p50_ms": 1e3 * lat[len(lat) // 2] if lat else float("nan"),
                "p99_ms": 1e3 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan"),
                "errors": len(errors),
                "error_samples": sorted(set(errors))[:2],
            }
        )
    return out


async def list_tasks_scale(
    levels: list[int], seconds: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Fills one SQLite store up to each level and times ListTasks against it."""
    from a2a_grpc.store import open_store

    workdir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    db = workdir / "tasks.db"
    url = f"sqlite:///{db}"
    store = open_store(url)
    await store.open()  # creates the schema and indexes exactly as the server would
    await store.close()
    rows: list[dict[str, Any]] = []
    sql_rows: list[dict[str, Any]] = []
    have = 0
    try:
        for level in levels:
            took = await asyncio.to_thread(_bulk_insert, db, have, level)
            print(f"   inserted {level - have:,} tasks in {took:.1f} s", flush=True)
            have = level
            spec = ServerSpec(f"ours-sqlite-{level}", "ours", "bench.servers.ours", ("--store", url))
            server = await asyncio.to_thread(start_server, spec)
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}")
            try:
                res = await _time_queries(pb_grpc.A2AServiceStub(channel), level, seconds)
            finally:
                await channel.close()
                server.stop()
            for r in res:
                print(
                    f"   {level:>9,} tasks  {r['query']:28} p50 {r['p50_ms']:8.2f} ms  p99 {r['p99_ms']:8.2f} ms"
                    f"  ({r['calls']} calls, {r['errors']} errors)",
                    flush=True,
                )
            rows += res
            sql_rows += await asyncio.to_thread(_time_sql, db, level)
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, True)
    return rows, sql_rows


def render(
    info: dict[str, Any],
    fan: dict[str, Any] | None,
    lists: list[dict[str, Any]],
    sql: list[dict[str, Any]],
    label: str,
) -> str:
    out = [
        "# a2a-grpc scale checks",
        "",
        f"- date: {info['date']}",
        f"- machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}, load average at start {info['loadavg']}",
        f"- Python {info['python']}; server pinned to CPU 0, client on CPU 1",
    ]
    if label:
        out.append(f"- **{label}**")
    if fan:
        out += [
            "",
            "## SubscribeToTask fan-out (gRPC, in-memory store, one core)",
            "",
            "| streams | open all (s) | server CPU to open (s) | RSS before → open (MiB) | KiB per stream |"
            " first event p50 / all (ms) | COMPLETED p50 / all (ms) | server CPU for the fan-out (s) | errors |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {fan['streams']:,} | {fan['open_s']:.1f} | {fan['open_cpu_s']:.2f} |"
            f" {fan['rss_before_mb']:.0f} → {fan['rss_open_mb']:.0f} | {fan['kib_per_stream']:.1f} |"
            f" {fan['first_event_p50_ms']:.0f} / {fan['first_event_all_ms']:.0f} |"
            f" {fan['completed_p50_ms']:.0f} / {fan['completed_all_ms']:.0f} | {fan['fanout_cpu_s']:.2f} |"
            f" {fan['errors']} |",
            "",
            "Times run from sending the completing message to the moment the client (one core, reading"
            f" every stream over {fan['channels']} HTTP/2 connections) saw the event, so they include the"
            f" client's own cost. Streams are opened in waves of {fan['wave']}; with grpc-core's defaults"
            " (`grpc.server.max_pending_requests` 1000, hard limit 3000) a burst of thousands of new calls"
            " is partly CANCELLED, which is why `A2AServer` raises both limits.",
        ]
        if fan["error_samples"]:
            out.append(f"Errors: {'; '.join(fan['error_samples'])}")
    if lists:
        out += [
            "",
            "## ListTasks on SQLite (gRPC, concurrency 1, page size 50)",
            "",
            "| stored tasks | query | matching | p50 ms | p99 ms | calls | errors |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
        out += [
            f"| {r['tasks']:,} | {r['query']} | {r['matching']:,} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} |"
            f" {r['calls']} | {r['errors']} |"
            for r in lists
        ]
        if sql:
            names = list(_SQL)
            levels = sorted({r["tasks"] for r in sql})
            ms = {(r["tasks"], r["statement"]): r["ms"] for r in sql}
            out += [
                "",
                "For reference, plain SQL on the same file (sqlite3, no server; ms, median of 5): a page"
                " through the indexes, and the COUNT(*) a `totalSize` would cost without maintained counts:",
                "",
                "| stored tasks | " + " | ".join(names) + " |",
                "|---:|" + "---:|" * len(names),
            ]
            out += [f"| {n:,} | " + " | ".join(f"{ms[(n, s)]:.2f}" for s in names) + " |" for n in levels]
        errs = [r for r in lists if r["errors"]]
        out += [f"- errors at {r['tasks']:,} / {r['query']}: {'; '.join(r['error_samples'])}" for r in errs]
    out.append("")
    return "\n".join(out)


async def run_scale(args: argparse.Namespace) -> int:
    """Entry point for ``python -m bench.run --scale``."""
    pin_self()
    info = machine_info()
    streams = getattr(args, "streams", None) or (1000 if args.quick else 10_000)
    levels = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    print(f"== fan-out: {streams:,} SubscribeToTask streams", flush=True)
    fan = await fanout(streams)
    print(
        f"   {fan['kib_per_stream']:.1f} KiB/stream, COMPLETED reached all in {fan['completed_all_ms']:.0f} ms,"
        f" errors {fan['errors']}",
        flush=True,
    )
    print("== ListTasks on SQLite", flush=True)
    lists, sql = await list_tasks_scale(levels, seconds=1.0 if args.quick else 2.0)
    report = render(info, fan, lists, sql, args.label)
    out: Path = args.out or RESULTS / "scale.md"
    await asyncio.to_thread(out.write_text, report)
    print()
    print(report)
    return 1 if fan["errors"] or any(r["errors"] for r in lists) else 0
