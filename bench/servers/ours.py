"""a2a-grpc's ``A2AServer`` for the benchmark: gRPC + JSON-RPC + HTTP+JSON in one loop.

``python -m bench.servers.ours --store memory|sqlite:///PATH|postgresql://... [--agent echo]``
serves the agent (``load_agent`` spec, default the built-in ``echo``) on ephemeral ports
with uvloop, exactly as ``a2a-grpc serve`` would, and prints ``READY grpc=<port>
http=<port>``. ``--cluster --replica-id NAME`` runs it as one replica of a cluster on
the PostgreSQL store (``a2a-grpc serve --cluster``: leases, the LISTEN/NOTIFY bus).
SIGINT/SIGTERM stop it gracefully.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from a2a_grpc.agents import load_agent
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import Store, open_store


async def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--grpc-port", type=int, default=0)
    ap.add_argument("--http-port", type=int, default=0)
    ap.add_argument("--store", default="memory")
    ap.add_argument("--agent", default="echo")
    ap.add_argument("--cluster", action="store_true", help="cluster mode (PostgreSQL store)")
    ap.add_argument("--replica-id", default="")
    ap.add_argument("--lease-ttl", type=float, default=10.0)
    args = ap.parse_args(argv)
    cluster = None
    store: Store
    if args.cluster:
        from a2a_grpc.cluster._leases import ClusterConfig
        from a2a_grpc.cluster._store import ClusterStore

        cluster = ClusterConfig(replica_id=args.replica_id, lease_ttl=args.lease_ttl)
        store = ClusterStore(args.store, idle_transaction_timeout=args.lease_ttl)
    else:
        store = open_store(args.store)
    server = A2AServer(
        load_agent(args.agent),
        store,
        ServerConfig(
            host=args.host,
            grpc_port=args.grpc_port,
            http_port=args.http_port,
            grace_seconds=1.0,
            freeze_gc=True,  # as a2a-grpc serve does
            cluster=cluster,
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
