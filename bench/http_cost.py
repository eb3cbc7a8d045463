"""Instructions per HTTP request on the server, counted by callgrind (robust to load).

``python -m bench.http_cost [--servers bare-aiohttp,ours-memory,ours-sqlite]
[--bindings jsonrpc,rest] [--methods GetTask,SendMessage,SendStreamingMessage]
[-n 200] [--concurrency 16]`` runs each server (the benchmark's own
``bench.servers.*`` modules, with uvloop) under ``valgrind --tool=callgrind
--dump-before=getppid`` and drives it from this process (not under valgrind)
with the load generator's clients (:mod:`bench.loadgen`, answers checked).

Per cell: a warm-up of ``n // 4`` calls, a mark, ``n`` calls, a mark. A mark is a
line on the server's stdin; a thread of the server answers it by calling
``os.getppid()``, which makes callgrind dump (and zero) its counters, so the dump
between the two marks holds exactly the instructions of the ``n`` calls (all
threads: the aiosqlite worker included). Printed: instructions per call (``Ir``,
in thousands), per server, binding and method. The counts barely move with the
machine's load (unlike CPU time); run twice to see their spread (~1%).

``python -m bench.http_cost serve MODULE [ARGS...]`` is the server side: it runs
``MODULE.main(ARGS)`` (e.g. ``bench.servers.ours --store memory``) with the mark
thread.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench import loadgen
from bench.loadgen import discover, make_client, make_text, prepare_task_ids

SERVERS = {
    "bare-aiohttp": ("bench.servers.bare_aiohttp",),
    "ours-memory": ("bench.servers.ours", "--store", "memory"),
    "ours-sqlite": ("bench.servers.ours", "--store", "sqlite:///{workdir}/tasks.db"),
}
_TOTALS = re.compile(rb"^(?:totals|summary): (\d+)", re.M)


def _serve(argv: list[str]) -> None:
    """Runs ``argv[0].main(argv[1:])`` with a thread that calls os.getppid()
    (callgrind's dump trigger) for each line on stdin, then prints ``MARK``."""

    def marks() -> None:
        for _ in sys.stdin:
            os.getppid()
            print("MARK", flush=True)

    threading.Thread(target=marks, daemon=True).start()
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    module = importlib.import_module(argv[0])
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(module.main(argv[1:]))


class _Server:
    """One server process under callgrind, with its dump directory."""

    def __init__(self, name: str, workdir: Path) -> None:
        args = [a.format(workdir=workdir) for a in SERVERS[name]]
        self.out = workdir / "cg"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--dump-before=getppid",
            f"--callgrind-out-file={self.out}.%p",
            sys.executable,
            "-m",
            "bench.http_cost",
            "serve",
            *args,
        ]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        ports = dict(re.findall(r"(\w+)=(\d+)", self._line("READY")))
        self.http_port = int(ports["http"])

    def _line(self, prefix: str) -> str:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline().decode()
            if not line:
                raise RuntimeError("server exited")
            if line.startswith(prefix):
                return line

    def mark(self) -> int:
        """Dumps the counters; the instructions since the previous mark."""
        assert self.proc.stdin is not None
        before = set(self.out.parent.glob(self.out.name + ".*"))
        self.proc.stdin.write(b"mark\n")
        self.proc.stdin.flush()
        self._line("MARK")
        (new,) = set(self.out.parent.glob(self.out.name + ".*")) - before
        found = _TOTALS.search(new.read_bytes())
        return int(found.group(1)) if found else 0

    def stop(self) -> None:
        self.proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(60)
        if self.proc.poll() is None:
            self.proc.kill()


async def _calls(client, method: str, n: int, concurrency: int, ids: list[str]) -> None:  # type: ignore[no-untyped-def]
    todo = iter(range(n))

    async def worker() -> None:
        for i in todo:
            if method == "GetTask":
                await client.get(ids[i % len(ids)])
            elif method == "SendMessage":
                await client.send(make_text())
            else:
                await client.stream(make_text())

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _cells(server: _Server, args: argparse.Namespace) -> list[tuple[str, str, float]]:
    loadgen.TIMEOUT_S = 300.0  # a server under callgrind on a loaded machine is slow
    endpoints = await discover(None, server.http_port)
    out = []
    for binding in args.bindings.split(","):
        client = make_client(endpoints, binding, args.concurrency)
        try:
            ids = await prepare_task_ids(client, 16) if "GetTask" in args.methods else []
            for method in args.methods.split(","):
                await _calls(client, method, max(args.n // 4, args.concurrency), args.concurrency, ids)
                server.mark()
                await _calls(client, method, args.n, args.concurrency, ids)
                out.append((binding, method, server.mark() / args.n))
        finally:
            await client.close()
    return out


def main(argv: list[str]) -> None:
    if argv[:1] == ["serve"]:
        _serve(argv[1:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="bare-aiohttp,ours-memory")
    ap.add_argument("--bindings", default="jsonrpc,rest")
    ap.add_argument("--methods", default="GetTask,SendMessage,SendStreamingMessage")
    ap.add_argument("-n", type=int, default=200, help="calls per cell")
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args(argv)
    print(f"{'server':14} {'binding':8} {'method':22} {'kIr/call':>9}")
    for name in args.servers.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            server = _Server(name, Path(tmp))
            try:
                for binding, method, ir in asyncio.run(_cells(server, args)):
                    print(f"{name:14} {binding:8} {method:22} {ir / 1000:9.1f}", flush=True)
            finally:
                server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
