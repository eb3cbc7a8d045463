"""Ports for tests that start servers in subprocesses."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A 127.0.0.1 TCP port nothing listens on now (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
