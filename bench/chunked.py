"""A chunked artifact end to end: cost against its size (issue 10, item 9).

``python -m bench.chunked [--mib 100] [--chunk-mib 1] [--store sqlite|memory] [--streams 1]``
starts a server (gRPC only) whose agent streams one artifact of ``--mib`` MiB in
``--chunk-mib`` MiB chunks (``append=true``), reads it with SendStreamingMessage
and prints the wall time, the time per chunk at the start and at the end (flat:
linear; growing: quadratic), the task read back from the store, and the
process's resident memory before, at the peak and after the streams (after a
``gc.collect()`` and ``malloc_trim``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from a2a_grpc.context import Owner
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.types import Event, pb, pb_grpc

MIB = 1024 * 1024


class ChunkAgent(AgentExecutor):
    """Streams ``N`` chunks of ``S`` bytes (message text ``"N S"``) into one artifact."""

    card = pb.AgentCard(
        name="Chunks",
        description="Streams one large artifact in chunks.",
        version="1",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        n, size = (int(x) for x in ctx.message.parts[0].text.split())
        yield ctx.status(pb.TASK_STATE_WORKING)
        for i in range(n):
            part = pb.Part(raw=bytes([i % 251]) * size)
            yield pb.TaskArtifactUpdateEvent(
                task_id=ctx.task_id,
                context_id=ctx.context_id,
                artifact=pb.Artifact(artifact_id="big", parts=[part]),
                append=i > 0,
                last_chunk=i == n - 1,
            )
        yield ctx.status(pb.TASK_STATE_COMPLETED)


def rss_mib() -> float:
    """Resident set size of this process, MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def trim() -> None:
    gc.collect()
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


async def one_stream(port: int, n: int, size: int) -> tuple[str, list[float]]:
    """Runs one task; returns its id and the arrival time of each chunk."""
    opts = [("grpc.max_receive_message_length", 64 * MIB)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=opts) as ch:
        stub = pb_grpc.A2AServiceStub(ch)
        req = pb.SendMessageRequest(
            message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text=f"{n} {size}")])
        )
        times: list[float] = []
        task_id = ""
        async for ev in stub.SendStreamingMessage(req, metadata=(("a2a-version", "1.0"),)):
            task_id = task_id or ev.task.id or ev.status_update.task_id
            if ev.HasField("artifact_update"):
                times.append(time.perf_counter())
        return task_id, times


async def run(mib: int, chunk_mib: float, store_kind: str, streams: int) -> dict[str, float]:
    size = int(chunk_mib * MIB)
    n = int(mib * MIB // size)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlTaskStore(f"sqlite:///{tmp}/bench.db") if store_kind == "sqlite" else InMemoryTaskStore()
        cfg = ServerConfig(grpc_port=0, http_port=None, max_message_bytes=32 * MIB)
        cfg.handler.subscriber_buffer_bytes = 2 * mib * MIB  # measure the store, not a lagging reader
        if hasattr(cfg.handler, "max_task_bytes"):
            cfg.handler.max_task_bytes = max(cfg.handler.max_task_bytes, 2 * mib * streams * MIB)
        server = A2AServer(ChunkAgent(), store, cfg)
        await server.start()
        trim()
        before = rss_mib()
        peak = before
        start = time.perf_counter()

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, rss_mib())
                await asyncio.sleep(0.05)

        sampler = asyncio.create_task(sample())
        results = await asyncio.gather(*(one_stream(server.grpc_port, n, size) for _ in range(streams)))
        wall = time.perf_counter() - start
        sampler.cancel()
        stored = await store.get(results[0][0], Owner("", ""))
        assert stored is not None and stored.task.status.state == pb.TASK_STATE_COMPLETED
        total = sum(len(p.raw) for p in stored.task.artifacts[0].parts)
        assert total == n * size, (total, n * size)
        del stored
        await server.stop()
        trim()
        after = rss_mib()
    times = results[0][1]
    tenth = max(1, len(times) // 10)
    first = (times[tenth] - times[0]) / tenth
    last = (times[-1] - times[-1 - tenth]) / tenth
    return {
        "wall_s": wall,
        "chunks": n,
        "ms_per_chunk_first_tenth": first * 1000,
        "ms_per_chunk_last_tenth": last * 1000,
        "rss_before_mib": before,
        "rss_peak_mib": peak,
        "rss_after_mib": after,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--chunk-mib", type=float, default=1.0)
    ap.add_argument("--store", choices=["sqlite", "memory"], default="sqlite")
    ap.add_argument("--streams", type=int, default=1)
    args = ap.parse_args()
    out = asyncio.run(run(args.mib, args.chunk_mib, args.store, args.streams))
    print(f"{args.streams} × {args.mib} MiB in {args.chunk_mib} MiB chunks on {args.store}:")
    for key, value in out.items():
        print(f"  {key:<26} {value:10.1f}")


if __name__ == "__main__":
    main()
