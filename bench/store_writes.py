"""Store write cost (issue 17): process CPU µs per task for its three store
writes (create + 2 updates, what an echo task wrote before the creation and
first event were merged) and per blocking SendMessage (echo agent, the
RequestHandler driven directly as in ``bench.micro``), at concurrency 1, 16
and 64, on the memory, SQLite and PostgreSQL stores.

``python -m bench.store_writes [memory] [sqlite] [pg]``; PostgreSQL is
``$A2A_GRPC_TEST_POSTGRES_URL`` or postgresql://postgres@127.0.0.1:5432/test.
Figures are CPU of the whole process (all threads: the SQLite writer's
included, and shown apart), the median of 3 runs; wall rates are printed for orientation only.
"""

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid

from a2a_grpc.agents import load_agent
from a2a_grpc.context import CallContext, Owner
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.store import SqlTaskStore, open_store
from a2a_grpc.types import pb

PG = os.environ.get("A2A_GRPC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
OWNER = Owner("", "bench")


def req():
    return pb.SendMessageRequest(
        message=pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="x" * 100)])
    )


def thread_cpu(tid):
    """CPU seconds of this process's thread ``tid`` (0: none), from /proc's schedstat (ns)."""
    if not tid:
        return 0.0
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


async def run_conc(fn, total, conc, writer_tid=0):
    it = iter(range(total))

    async def worker():
        for _ in it:
            await fn()

    t, wt = time.process_time(), thread_cpu(writer_tid)
    w = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    cpu, writer = time.process_time() - t, thread_cpu(writer_tid) - wt
    return cpu / total * 1e6, total / (time.perf_counter() - w), writer / total * 1e6


async def bench(url, label, total):
    # PostgreSQL: tables of our own (dropped at the end), whoever else uses the database.
    store = (
        SqlTaskStore(url, table_prefix=f"bench{uuid.uuid4().hex[:8]}_") if label == "pg" else open_store(url)
    )
    await store.open()
    agent = load_agent("echo")
    handler = RequestHandler(agent, store, agent.card)
    call = CallContext.from_metadata("/lf.a2a.v1.A2AService/SendMessage", (("a2a-version", "1.0"),))

    writer = getattr(store, "_sqlite_writer", None)  # SQLite: its writer thread's share
    tid = writer._thread.native_id if writer is not None else 0

    async def write():
        t = pb.Task(id=str(uuid.uuid4()), context_id="c1")
        t.status.state = pb.TASK_STATE_SUBMITTED
        t.history.add(message_id="m", role=pb.ROLE_USER).parts.add(text="x" * 100)
        v = await store.update(TaskWrite(t, OWNER))
        t.status.state = pb.TASK_STATE_WORKING
        t.artifacts.add(artifact_id="a").parts.add(text="x" * 100)
        v = await store.update(TaskWrite(t, OWNER, v))
        t.status.state = pb.TASK_STATE_COMPLETED
        await store.update(TaskWrite(t, OWNER, v))

    async def send():
        await handler.send_message(req(), call)

    out = []
    try:
        for name, fn in (("3 writes/task", write), ("SendMessage", send)):
            for conc in (1, 16, 64):
                await run_conc(fn, min(200, total), conc)  # warm
                rs = [await run_conc(fn, total, conc, tid) for _ in range(3)]
                cpu = statistics.median(r[0] for r in rs)
                rate = statistics.median(r[1] for r in rs)
                in_writer = (
                    f"  ({statistics.median(r[2] for r in rs):.0f} in the writer thread)" if tid else ""
                )
                out.append(
                    f"{label:8} {name:14} c={conc:<3} {cpu:8.0f} µs CPU/task  {rate:7.0f}/s wall{in_writer}"
                )
                print(out[-1], flush=True)
    finally:
        await handler.close()
        if label == "pg":
            await store.drop_all()
        await store.close()


async def main():
    which = sys.argv[1:] or ["memory", "sqlite", "pg"]
    with tempfile.TemporaryDirectory() as tmp:
        for w in which:
            if w == "memory":
                await bench("memory", "memory", 3000)
            if w == "sqlite":
                await bench(f"sqlite:///{tmp}/b.db", "sqlite", 1000)
            if w == "pg":
                await bench(PG, "pg", 600)


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
