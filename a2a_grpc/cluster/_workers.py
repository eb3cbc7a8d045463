"""``a2a-grpc serve --workers N``: N cluster replicas on one machine.

The supervisor (:func:`supervise`) runs the same ``a2a-grpc serve`` command
line N times as child processes. Each child is a cluster replica with its own
replica id (``BASE-wI``, ``BASE-wI.G`` for its G-th restart; BASE is
``--replica-id`` or the host name) and binds the same gRPC and HTTP ports with
``SO_REUSEPORT``, so the kernel spreads connections over the workers. The
supervisor holds a bound, non-listening ``SO_REUSEPORT`` socket on each port
for as long as it runs: port 0 becomes one free port all workers share, and a
restarted worker finds its port still reserved.

A worker that exits is started again, after a backoff that doubles (0.5 s up
to 10 s) while it keeps dying within 10 s of its start. SIGINT/SIGTERM stops
all workers (SIGTERM, each drains as ``a2a-grpc serve`` does; SIGKILL after
the grace period plus 10 s) and the supervisor exits 0. A supervisor killed
outright takes its workers with it (they get SIGTERM: ``PR_SET_PDEATHSIG``).

A child learns it is a worker from the ``A2A_GRPC_WORKER`` environment
variable (JSON: ``index``, ``replica_id``, ``grpc_port``, ``http_port``), which
:func:`worker_settings` reads; it is set by the supervisor only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WORKER_ENV", "Worker", "supervise", "worker_settings"]

#: The environment variable that makes ``a2a-grpc serve`` a worker.
WORKER_ENV = "A2A_GRPC_WORKER"
_MIN_BACKOFF, _MAX_BACKOFF, _STABLE_SECONDS = 0.5, 10.0, 10.0


def worker_settings() -> dict[str, Any] | None:
    """This process's worker settings (index, replica_id, grpc_port,
    http_port) when a supervisor started it, else None."""
    raw = os.environ.get(WORKER_ENV)
    return json.loads(raw) if raw else None


@dataclass
class Worker:
    """One worker process slot: its index, restarts and current process."""

    index: int
    base: str
    proc: subprocess.Popen[bytes] | None = None
    generation: int = 0
    started_at: float = 0.0
    backoff: float = _MIN_BACKOFF
    due: float = 0.0
    ports: tuple[int, int | None] = field(default=(0, None))

    @property
    def replica_id(self) -> str:
        name = f"{self.base}-w{self.index}"
        return name if self.generation == 0 else f"{name}.{self.generation}"

    def start(self, argv: list[str]) -> None:
        """Starts the worker process (the supervisor's own command line)."""
        env = dict(os.environ)
        env[WORKER_ENV] = json.dumps(
            {
                "index": self.index,
                "replica_id": self.replica_id,
                "grpc_port": self.ports[0],
                "http_port": self.ports[1],
            }
        )
        env["A2A_GRPC_CLUSTER"] = "true"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "a2a_grpc.cli", *argv], env=env, preexec_fn=_die_with_parent
        )
        self.started_at = time.monotonic()
        _say(f"worker {self.index} (replica {self.replica_id}) started: pid {self.proc.pid}")

    def reap(self, now: float) -> bool:
        """True when the worker's process has exited (and schedules its
        restart after the backoff)."""
        if self.proc is None or self.proc.poll() is None:
            return False
        code = self.proc.returncode
        self.backoff = (
            _MIN_BACKOFF if now - self.started_at >= _STABLE_SECONDS else min(self.backoff * 2, _MAX_BACKOFF)
        )
        self.due = now + self.backoff
        _say(f"worker {self.index} (pid {self.proc.pid}) exited {code}; restarting in {self.backoff:.1f} s")
        self.proc = None
        self.generation += 1
        return True


def _die_with_parent() -> None:
    """In the worker, before it runs: SIGTERM when the supervisor dies, even
    by SIGKILL (Linux ``PR_SET_PDEATHSIG``; elsewhere a no-op)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def _say(line: str) -> None:
    print(f"supervisor: {line}", file=sys.stderr, flush=True)


def reserve_port(host: str, port: int) -> socket.socket:
    """A bound, non-listening ``SO_REUSEPORT`` socket on ``host:port`` (port
    0: a free port); raises OSError("port N on H is already in use")."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"port {port} on {host} is already in use ({exc.strerror})") from None
    return sock


def supervise(
    argv: list[str], workers: int, host: str, ports: tuple[int, int | None], base: str, grace: float
) -> None:
    """Runs ``workers`` copies of ``a2a-grpc <argv>`` sharing ``ports`` (gRPC,
    HTTP; None: no HTTP) until SIGINT/SIGTERM, restarting any that exits.
    Raises OSError when a port cannot be reserved."""
    reserved = [reserve_port(host, p) for p in ports if p is not None]
    bound = tuple(s.getsockname()[1] for s in reserved)
    shared: tuple[int, int | None] = (bound[0], bound[1] if len(bound) > 1 else None)
    slots = [Worker(i + 1, base, ports=shared) for i in range(workers)]
    stopping: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda s, _f: stopping.append(s)) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    _say(f"{workers} workers sharing gRPC port {shared[0]}, HTTP port {shared[1]}")
    try:
        for slot in slots:
            slot.start(argv)
        while not stopping:
            now = time.monotonic()
            for slot in slots:
                slot.reap(now)
                if slot.proc is None and now >= slot.due and not stopping:
                    slot.start(argv)
            time.sleep(0.1)
        _stop_all(slots, grace)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sock in reserved:
            sock.close()


def _stop_all(slots: list[Worker], grace: float) -> None:
    """SIGTERM to every worker; SIGKILL to those still running after
    ``grace`` + 10 s."""
    _say("stopping all workers")
    running = [s.proc for s in slots if s.proc is not None and s.proc.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace + 10.0
    for proc in running:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    _say("all workers stopped")
