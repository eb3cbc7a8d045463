"""Instructions per call of one RPC, counted by valgrind's callgrind: robust to load.

``python -m bench.callgrind [--method SendMessage|SendStreamingMessage|GetTask]
[-n 300] [--warmup 100] [--store memory] [--server] [--top 40] [--keep DIR]``

runs itself under ``valgrind --tool=callgrind --collect-atstart=no`` and, inside,
drives :class:`a2a_grpc.bindings._servicer.A2AServicer` (the interceptor chain, CallContext,
validation, the handler, the drive loop and the store: everything but the gRPC
transport, as the HTTP gateway calls it) with the built-in ``echo`` agent, through
a minimal ``RpcContext``, on uvloop when installed; the handler and servicer are
built alone, or with ``--server`` as an unconfigured ``A2AServer`` builds them (its
composition root, not started: no port). ``--warmup`` calls run first,
not counted (caches, type caches, first allocations); then the counter is switched on
for exactly ``-n`` calls (``CALLGRIND_TOGGLE_COLLECT`` through a tiny C helper, built
with ``gcc`` from ``valgrind/callgrind.h`` into a temporary directory) and off
again. The garbage collector is frozen and disabled around the counted calls, as
``a2a-grpc serve`` freezes it, so a collection does not land in one run and not
in another.

It prints the instructions per call (``Ir`` of the counted region / n) and the
C functions with the most inclusive instructions per call (``callgrind_annotate
--inclusive=yes``): the protobuf (upb) encode/decode/copy entry points, the
interpreter, the allocator. Python functions all run inside the one interpreter
loop of CPython 3.11, so a Python-level split comes from comparing runs (before /
after a change). Repeatable to about 0.2 % on an idle or a busy machine: it counts
instructions, not time. Needs valgrind (with its headers) and gcc; a run of
``-n 300`` takes about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import os
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

_HELPER_C = r"""
#include <valgrind/callgrind.h>
void a2a_cg_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
"""
_CHILD_ENV = "A2A_CALLGRIND_CHILD"


def _build_helper(tmp: Path) -> Path:
    src, lib = tmp / "cg.c", tmp / "libcg.so"
    src.write_text(_HELPER_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", str(lib), str(src)], check=True)
    return lib


class _Context:
    """The ``RpcContext`` of one call; slotted, like grpc.aio's own context
    (no instance attributes: no gateway extras)."""

    __slots__ = ()
    metadata = (("a2a-version", "1.0"),)

    def invocation_metadata(self) -> Any:
        return self.metadata

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def time_remaining(self) -> float | None:
        return None

    async def send_initial_metadata(self, initial_metadata: Any) -> None:
        return None

    def set_trailing_metadata(self, trailing_metadata: Any) -> None:
        return None

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> Any:
        raise RuntimeError(f"call aborted: {code} {details}")


def _request() -> Any:
    from a2a_grpc.types import pb

    return pb.SendMessageRequest(
        message=pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="x" * 100)])
    )


def _servicer(agent: Any, store: Any, server: bool) -> Any:
    """The servicer of ``agent`` on ``store``: built alone, or by an
    unconfigured A2AServer's composition root (``server``)."""
    if server:
        from a2a_grpc.server import A2AServer, ServerConfig

        return A2AServer(agent, store, ServerConfig(health_check_seconds=None)).servicer
    from a2a_grpc.bindings._servicer import A2AServicer
    from a2a_grpc.core._handler import RequestHandler

    return A2AServicer(RequestHandler(agent, store, agent.card))


async def _child(method: str, n: int, warmup: int, store_url: str, lib: str, server: bool) -> None:
    from a2a_grpc.agents import load_agent
    from a2a_grpc.store import open_store
    from a2a_grpc.types import pb

    toggle = ctypes.CDLL(lib).a2a_cg_toggle
    agent = load_agent("echo")
    store = open_store(store_url)
    await store.open()
    servicer = _servicer(agent, store, server)
    handler = servicer.handler
    task_id = (await servicer.SendMessage(_request(), _Context())).task.id

    # The requests are made before the counter starts: only the server's work is counted.
    requests = [_request() for _ in range(warmup + n)]
    gets = [pb.GetTaskRequest(id=task_id) for _ in range(warmup + n)]
    contexts = [_Context() for _ in range(warmup + n)]

    async def send(i: int) -> None:
        await servicer.SendMessage(requests[i], contexts[i])

    async def stream(i: int) -> None:
        async for _event in servicer.SendStreamingMessage(requests[i], contexts[i]):
            pass

    async def get(i: int) -> None:
        await servicer.GetTask(gets[i], contexts[i])

    call = {"SendMessage": send, "SendStreamingMessage": stream, "GetTask": get}[method]
    for i in range(warmup):
        await call(i)
    gc.collect()
    gc.freeze()
    gc.disable()
    toggle()
    for i in range(warmup, warmup + n):
        await call(i)
    toggle()
    gc.enable()
    await handler.close()
    await store.close()


def _annotate(out: Path, n: int, top: int) -> tuple[float, list[tuple[float, str]]]:
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    total = None
    rows: list[tuple[float, str]] = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(PROGRAM TOTALS|\S.*)$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        if m.group(2) == "PROGRAM TOTALS":
            total = ir
        elif len(rows) < top and total is not None and ir < total:  # (not the callers of everything)
            rows.append((ir / n, m.group(2)))
    if total is None:
        raise SystemExit("callgrind_annotate printed no total:\n" + text[:2000])
    return total / n, rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--method", default="SendMessage", choices=["SendMessage", "SendStreamingMessage", "GetTask"]
    )
    ap.add_argument("-n", type=int, default=300, help="counted calls")
    ap.add_argument("--warmup", type=int, default=100, help="calls run first, not counted")
    ap.add_argument("--store", default="memory", help="store URL (memory, sqlite:///PATH, ...)")
    ap.add_argument("--server", action="store_true", help="build them as an unconfigured A2AServer does")
    ap.add_argument("--top", type=int, default=40, help="C functions listed (0: only the total)")
    ap.add_argument("--keep", type=Path, help="keep callgrind.out here (for kcachegrind)")
    args = ap.parse_args(argv)
    if os.environ.get(_CHILD_ENV):
        with contextlib.suppress(ImportError):
            import uvloop

            uvloop.install()
        asyncio.run(_child(args.method, args.n, args.warmup, args.store, os.environ[_CHILD_ENV], args.server))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        lib = _build_helper(Path(tmp))
        out = (args.keep or Path(tmp)) / f"callgrind.out.{args.method}"
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "bench.callgrind",
            *argv,
        ]
        env = {**os.environ, _CHILD_ENV: str(lib), "PYTHONHASHSEED": "0"}
        subprocess.run(cmd, check=True, env=env, stderr=subprocess.DEVNULL)
        per_call, rows = _annotate(out, args.n, args.top)
    built = "A2AServer-built servicer" if args.server else "servicer"
    print(
        f"{args.method} ({args.store} store, echo agent, {built} in-process): {per_call:,.0f} instructions/call"
    )
    if rows:
        print(f"{'Ir/call':>10}  inclusive, C function")
        for ir, name in rows:
            print(f"{ir:10,.0f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
