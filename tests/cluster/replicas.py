"""Server processes for the cluster tests: ``a2a-grpc serve`` subprocesses
on 127.0.0.1 (ephemeral ports), each logging to its own file, and fresh
PostgreSQL databases for them to share."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from a2a_grpc.client import A2AClient

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "a2a-grpc")
AGENT = "tests.cluster.agents:StepsAgent"
_IFACE = re.compile(r"^\s+(GRPC|JSONRPC|HTTP\+JSON)\s+(\S+)\s*$", re.M)
#: The binding names A2AClient.connect takes.
BINDINGS = ("grpc", "jsonrpc", "rest")


@dataclass
class Replica:
    """One server process and where it listens."""

    name: str
    args: list[str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    urls: dict[str, str] = field(default_factory=dict)

    @property
    def http(self) -> str:
        return self.urls["HTTP+JSON"]

    async def client(self, binding: str = "grpc") -> A2AClient:
        """A client of this replica over ``binding`` (grpc, jsonrpc or rest)."""
        return await A2AClient.connect(self.http, bindings=(binding,), timeout=30.0)

    def start(self, timeout: float = 30.0) -> Replica:
        """Starts the process and waits until it serves (its interfaces are
        read from its log)."""
        env = {**os.environ, "PYTHONPATH": str(ROOT), "A2A_GRPC_LOG_LEVEL": "INFO"}
        out = self.log.open("ab")
        offset = out.tell()
        self.proc = subprocess.Popen(
            [
                CLI,
                "serve",
                "--agent",
                AGENT,
                "--grpc-port",
                "0",
                "--http-port",
                "0",
                "--grace",
                "1",
                *self.args,
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )
        out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_bytes()[offset:].decode(errors="replace").rsplit(" is serving:", 1)
            if len(text) == 2 and "card " in text[1]:
                self.urls = dict(_IFACE.findall(text[1]))
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}:\n{self.log.read_text()}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start in {timeout} s:\n{self.log.read_text()}")

    def kill(self) -> None:
        """``kill -9``."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


async def fresh_database(admin_url: str) -> str:
    """Creates an empty database next to ``admin_url``'s and returns its URL."""
    import asyncpg

    name = f"a2a_cluster_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(admin_url, timeout=5)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return admin_url.rsplit("/", 1)[0] + "/" + name


async def drop_database(admin_url: str, url: str) -> None:
    """Drops the database ``fresh_database`` made (its sessions included)."""
    import asyncpg

    conn = await asyncpg.connect(admin_url, timeout=5)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
    finally:
        await conn.close()
