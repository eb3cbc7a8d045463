"""Profiles one server under load with py-spy and lists its hot spots.

``python -m bench.profile --server ours-memory --binding grpc --method SendMessage``
starts the server pinned to CPU 0, drives it at fixed concurrency from CPU 1, samples
it with ``py-spy record --format raw`` (collapsed stacks, idle frames dropped) and
prints the functions with the most samples: *self* (the frame on top of the stack)
and *inclusive* (anywhere on the stack), each as a percentage of busy samples. The
collapsed stacks are kept (``--keep``) for flame graphs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench import pg
from bench.loadgen import discover, make_client, prepare_task_ids, run_load
from bench.procs import ServerSpec, pin_self, start_server
from bench.run import SERVERS

_AREAS = (
    ("a2a_grpc/core/_handler.py", "a2a_grpc handler"),
    ("a2a_grpc/store/", "a2a_grpc store"),
    ("a2a_grpc/core/_events.py", "a2a_grpc events"),
    ("a2a_grpc/bindings/_servicer.py", "a2a_grpc servicer"),
    ("a2a_grpc/protocol/_validation.py", "a2a_grpc validation"),
    ("a2a_grpc/protocol/protojson/", "a2a_grpc protojson"),
    ("a2a_grpc/bindings/_http/", "gateway"),
    ("a2a_grpc/", "a2a_grpc other"),
    ("protobuf/", "protobuf (python: json_format, well-known types)"),
    ("sqlalchemy/", "sqlalchemy"),
    ("aiosqlite/", "aiosqlite"),
    ("aiohttp/", "aiohttp"),
    ("grpc/", "grpc (python)"),
    ("asyncio/runners.py", "native: event loop, grpc/upb/uvloop C code"),
    ("asyncio/", "asyncio"),
    ("threading.py", "other threads (grpc poller, aiosqlite)"),
    ("a2a/", "a2a-sdk"),
    ("starlette/", "starlette"),
    ("uvicorn/", "uvicorn"),
    ("pydantic", "pydantic"),
)


def _area(frame: str) -> str:
    where = frame[frame.rfind("(") + 1 :]
    for needle, name in _AREAS:
        if needle in where:
            return name
    return "other python (stdlib: uuid, datetime, json, ...)"


def summarize(collapsed: str, top: int = 25) -> str:
    """Self and inclusive sample shares per function from py-spy's raw output
    (``frame;frame;... count`` lines, outermost first)."""
    self_c: Counter[str] = Counter()
    incl_c: Counter[str] = Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        count = int(n)
        frames = [
            f for f in stack.split(";") if f and not f.startswith("process ") and not f.startswith("thread ")
        ]
        if not frames:
            continue
        total += count
        self_c[frames[-1]] += count
        for f in set(frames):
            incl_c[f] += count
    if not total:
        return "no samples"
    by_area: Counter[str] = Counter()
    for f, c in self_c.items():
        by_area[_area(f)] += c
    lines = [f"{total} busy samples", "", "self %  area (where the sampled frame's code lives)"]
    lines += [f"{100 * c / total:6.1f}  {a}" for a, c in by_area.most_common()]
    lines += ["", "self %  function (file:line)"]
    lines += [f"{100 * c / total:6.1f}  {f}" for f, c in self_c.most_common(top)]
    lines += ["", "incl %  function (file:line)"]
    lines += [f"{100 * c / total:6.1f}  {f}" for f, c in incl_c.most_common(top)]
    return "\n".join(lines)


async def _drive(server, binding: str, method: str, concurrency: int, seconds: float) -> str:  # type: ignore[no-untyped-def]
    endpoints = await discover(server.grpc_port, server.http_port)
    client = make_client(endpoints, binding, concurrency)
    try:
        ids = await prepare_task_ids(client, 64) if method == "GetTask" else None
        ws = await run_load(
            client, method, concurrency=concurrency, warmup=0.5, window=seconds, windows=1, task_ids=ids
        )
    finally:
        await client.close()
    w = ws[0]
    return f"{w.rps:,.0f} req/s under the profiler, errors {w.error_count}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="ours-memory", choices=sorted(SERVERS))
    ap.add_argument("--binding", default="grpc", choices=("grpc", "jsonrpc", "rest"))
    ap.add_argument("--method", default="SendMessage")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--keep", type=Path, help="write the collapsed stacks here")
    ap.add_argument("--native", action="store_true", help="include native (C/Cython) frames")
    ap.add_argument(
        "--by-line", action="store_true", help="keep line numbers (default: one entry per function)"
    )
    ap.add_argument("--summarize", type=Path, help="only summarize an existing collapsed-stacks file")
    args = ap.parse_args(argv)
    if args.summarize:
        print(summarize(args.summarize.read_text(), args.top))
        return 0
    pyspy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    pin_self()
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    spec = SERVERS[args.server]
    db = asyncio.run(pg.create_database()) if spec.store == "postgres" else ""
    try:
        return _profile(spec, db, pyspy, args)
    finally:
        if db:
            asyncio.run(pg.drop_database(db))


def _profile(spec: ServerSpec, db: str, pyspy: str, args: argparse.Namespace) -> int:
    """Runs the load on the server of ``spec`` (``{pg}`` = ``db``) under py-spy and prints the summary."""
    server = start_server(spec, subst={"{pg}": db})
    out = Path(args.keep or Path(tempfile.mkdtemp()) / "stacks.txt")
    try:
        spy = subprocess.Popen(
            [
                pyspy,
                "record",
                "--pid",
                str(server.pid),
                "--format",
                "raw",
                "--rate",
                str(args.rate),
                "--duration",
                str(int(args.seconds + 1)),
                *([] if args.by_line else ["--function"]),
                *(["--native"] if args.native else ["--nonblocking"]),
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        status = asyncio.run(_drive(server, args.binding, args.method, args.concurrency, args.seconds))
        _, err = spy.communicate(timeout=60)
        if spy.returncode:
            print(err.decode(errors="replace"), file=sys.stderr)
            return 1
    finally:
        server.stop()
    print(f"# {args.server} {args.binding} {args.method} c={args.concurrency}: {status}")
    print(summarize(out.read_text(), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
