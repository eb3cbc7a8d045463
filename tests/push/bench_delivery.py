"""Loopback numbers for the push dispatcher (not a test: run it by hand).

    python -m tests.push.bench_delivery [--events 2000] [--pairs 50]

Latency: one event at a time, from the committed ``store.update`` + ``wake()``
to the receiver's handler. Throughput: ``--events`` events spread over
``--pairs`` (task, config) pairs, queued first, then drained by one dispatcher.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from aiohttp import web

from a2a_grpc.push import PushDispatcher
from a2a_grpc.store import TaskStore, open_store
from tests.push.conftest import add_config, emit, new_task


class Hits(list[float]):
    """Arrival times; ``reached`` is set once ``target`` hits arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.target = 0
        self.reached = asyncio.Event()

    def expect(self, more: int) -> asyncio.Event:
        self.target = len(self) + more
        self.reached.clear()
        return self.reached


async def receiver() -> tuple[web.AppRunner, int, Hits]:
    hits = Hits()

    async def handle(request: web.Request) -> web.Response:
        await request.read()
        hits.append(time.perf_counter())
        if len(hits) >= hits.target:
            hits.reached.set()
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    assert site._server is not None
    return runner, site._server.sockets[0].getsockname()[1], hits


async def bench(store: TaskStore, events: int, pairs: int) -> None:
    await store.open()
    runner, port, hits = await receiver()
    d = PushDispatcher(store, allow=["127.0.0.1"])
    await d.start()
    try:
        task_id = await new_task(store)
        await add_config(store, task_id, f"http://127.0.0.1:{port}/lat")
        samples = []
        for _ in range(200):
            reached = hits.expect(1)
            t0 = time.perf_counter()
            await emit(store, task_id, n=1)
            d.wake()
            await reached.wait()
            samples.append(hits[-1] - t0)
        samples.sort()
        print(
            f"  latency update+wake -> receiver: median {statistics.median(samples) * 1000:.2f} ms, "
            f"p95 {samples[int(len(samples) * 0.95)] * 1000:.2f} ms"
        )

        await d.stop()  # queue everything first, then drain with a fresh dispatcher
        tasks = [await new_task(store) for _ in range(pairs)]
        for i, t in enumerate(tasks):
            await add_config(store, t, f"http://127.0.0.1:{port}/p{i}")
        for i in range(events):
            await emit(store, tasks[i % pairs], n=1)
        reached = hits.expect(events)
        t0 = time.perf_counter()
        d = PushDispatcher(store, allow=["127.0.0.1"])
        await d.start()
        await reached.wait()
        took = time.perf_counter() - t0
        print(
            f"  throughput: {events} events over {pairs} pairs in {took:.2f} s = {events / took:.0f} events/s"
        )
    finally:
        await d.stop()
        await runner.cleanup()
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for url in ("memory", f"sqlite:///{Path(tmp) / 'bench.db'}"):
            print(url.split(":")[0])
            await bench(open_store(url), args.events, args.pairs)


if __name__ == "__main__":
    asyncio.run(main())
