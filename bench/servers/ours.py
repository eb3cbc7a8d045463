"""a2a-grpc's ``A2AServer`` for the benchmark: gRPC + JSON-RPC + HTTP+JSON in one loop.

``python -m bench.servers.ours --store memory|sqlite:///PATH [--agent echo]`` serves the
agent (``load_agent`` spec, default the built-in ``echo``) on ephemeral ports with
uvloop, exactly as ``a2a-grpc serve`` would, and prints ``READY grpc=<port>
http=<port>``. SIGINT/SIGTERM stop it gracefully.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from a2a_grpc.agents import load_agent
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import open_store


async def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--grpc-port", type=int, default=0)
    ap.add_argument("--http-port", type=int, default=0)
    ap.add_argument("--store", default="memory")
    ap.add_argument("--agent", default="echo")
    args = ap.parse_args(argv)
    server = A2AServer(
        load_agent(args.agent),
        open_store(args.store),
        ServerConfig(
            host=args.host,
            grpc_port=args.grpc_port,
            http_port=args.http_port,
            grace_seconds=1.0,
            freeze_gc=True,  # as a2a-grpc serve does
        ),
    )
    await server.start()
    print(f"READY grpc={server.grpc_port} http={server.http_port}", flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, done.set)
    await done.wait()
    await server.stop()


if __name__ == "__main__":
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    asyncio.run(main(sys.argv[1:]))
