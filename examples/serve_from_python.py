"""Serve an agent from Python, without the command line (the README's "Serve from Python").

Run it from the repository root (or anywhere a2a-grpc is installed)::

    python -m examples.serve_from_python 50053 8082

It serves the word-count agent of ``examples/my_agent.py`` with a SQLite store until Ctrl-C.
"""

import sys

from a2a_grpc import A2AServer, ServerConfig, serve
from a2a_grpc.store import open_store
from examples.my_agent import WordCountAgent


def started(server: A2AServer) -> None:
    for iface in server.card.supported_interfaces:
        print(f"{iface.protocol_binding:<9} {iface.url}", flush=True)


if __name__ == "__main__":
    grpc_port, http_port = (int(p) for p in sys.argv[1:3]) if len(sys.argv) > 2 else (50053, 8082)
    serve(
        WordCountAgent(),
        open_store("sqlite:///data/word-count.db"),
        ServerConfig(grpc_port=grpc_port, http_port=http_port),
        on_started=started,
    )
