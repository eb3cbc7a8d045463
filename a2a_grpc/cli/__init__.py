"""The ``a2a-grpc`` command line: ``serve``, the client commands and ``console``.

Every command exits non-zero on failure and prints the A2A error reason
(``error: TASK_NOT_FOUND: ...``), never a traceback. The command line needs
the ``cli`` extra (click, rich); without it ``a2a-grpc`` says how to install it.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

__all__ = ["main"]

#: The command line's own dependencies: the ``cli`` extra.
CLI_EXTRA_MODULES = ("click", "rich")

main: Any  # the click group, or without the cli extra a function that says how to get it

if any(importlib.util.find_spec(m) is None for m in CLI_EXTRA_MODULES):

    def _without_cli() -> None:
        """Without the ``cli`` extra there is no command line: say how to get it."""
        sys.stderr.write("a2a-grpc: the command line needs the cli extra: pip install 'a2a-grpc[cli]'\n")
        sys.exit(1)

    main = _without_cli

else:
    import click

    from a2a_grpc.cli._admin import admin
    from a2a_grpc.cli._auth_cmd import auth
    from a2a_grpc.cli._client_cmds import register
    from a2a_grpc.cli._console_cmd import console
    from a2a_grpc.cli._proto_cmd import proto
    from a2a_grpc.cli._registry_cmd import registry
    from a2a_grpc.cli._serve import serve

    @click.group(name="a2a-grpc", context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="a2a-grpc")
    def _group() -> None:
        """a2a-grpc: serve and talk to A2A v1.0 agents over gRPC, JSON-RPC and HTTP+JSON."""

    _group.add_command(serve)
    _group.add_command(proto)
    _group.add_command(admin)
    _group.add_command(auth)
    _group.add_command(registry)
    _group.add_command(console)
    register(_group)
    main = _group

if __name__ == "__main__":  # python -m a2a_grpc.cli
    main()
