"""The ``a2a-grpc`` command line: ``serve`` and the client commands.

Every command exits non-zero on failure and prints the A2A error reason
(``error: TASK_NOT_FOUND: ...``), never a traceback.
"""

from __future__ import annotations

import click

from a2a_grpc.cli.auth_cmd import auth
from a2a_grpc.cli.proto_cmd import proto
from a2a_grpc.cli.serve import serve

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="a2a-grpc")
def main() -> None:
    """a2a-grpc: serve and talk to A2A v1.0 agents over gRPC, JSON-RPC and HTTP+JSON."""


main.add_command(serve)
main.add_command(proto)
main.add_command(auth)

try:  # the client commands live in their own module
    from a2a_grpc.cli.client_cmds import register
except ImportError:  # pragma: no cover - only while the module is being written
    pass
else:
    register(main)

if __name__ == "__main__":  # python -m a2a_grpc.cli
    main()
