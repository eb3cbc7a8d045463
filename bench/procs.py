"""Server processes for the benchmark: launch pinned to one CPU, read their CPU time and RSS.

Each server is a subprocess that prints ``READY grpc=<port> http=<port>`` (either part
optional) on stdout once it listens. It is pinned to ``SERVER_CPU`` with
``sched_setaffinity`` (what ``taskset -c 0`` does) so its CPU time and throughput
are those of one core; the load generator pins itself to the other core.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ALL_CPUS", "SERVER_CPU", "ServerProc", "ServerSpec", "cpu_seconds", "pin_self", "start_server"]

SERVER_CPU = 0
LOADGEN_CPU = 1
_CLK_TCK = os.sysconf("SC_CLK_TCK")
REPO = Path(__file__).resolve().parent.parent


# The CPUs this process may use, read once at import: before pin_self() narrows them.
ALL_CPUS = frozenset(os.sched_getaffinity(0))


def _cpus() -> frozenset[int]:
    return ALL_CPUS


def pin_self(cpu: int = LOADGEN_CPU) -> bool:
    """Pins the calling process to ``cpu`` when the machine has it; False otherwise."""
    if cpu not in _cpus() or len(_cpus()) < 2:
        return False
    # sched_setaffinity(0) pins only the calling thread: threads started earlier (grpc's
    # C-core pollers and executors) keep running anywhere, so pin every thread we have.
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(tid), {cpu})
    return True


def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid`` so far, in seconds (/proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """A server to benchmark: a display ``name``, the python ``-m`` module and its
    arguments, the ``bindings`` it serves and the ``family`` its ratios use
    ("ours", "sdk", "ceiling"). ``store`` is "memory", "sqlite" or "postgres" (an
    argument ``{pg}`` becomes the URL of a fresh database); ``slow`` marks a server
    whose cells use fewer windows (``--slow-windows``)."""

    name: str
    family: str
    module: str
    args: tuple[str, ...] = ()
    bindings: tuple[str, ...] = ("grpc", "jsonrpc", "rest")
    store: str = ""
    env: tuple[tuple[str, str], ...] = ()
    slow: bool = False


@dataclass(slots=True)
class ServerProc:
    """A running server: its process, ports and captured output."""

    spec: ServerSpec
    proc: subprocess.Popen[bytes]
    grpc_port: int | None
    http_port: int | None
    log_path: Path
    workdir: Path
    lines: list[str] = field(default_factory=list)
    #: The PostgreSQL database it serves from ("" for none): whose backends' CPU to count.
    database: str = ""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu_seconds(self) -> float:
        """utime + stime of the server process so far, in seconds (/proc/<pid>/stat)."""
        return cpu_seconds(self.pid)

    def rss_mb(self) -> float:
        """Resident set size now, in MiB (VmRSS of /proc/<pid>/status)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        """SIGINT, then SIGKILL after 5 s; removes the server's temp dir (SQLite files, log)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self, n: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        return ""


_READY = re.compile(r"READY(?: grpc=(\d+))?(?: http=(\d+))?")


def _expand(args: tuple[str, ...], subst: dict[str, str]) -> list[str]:
    out = []
    for a in args:
        for key, value in subst.items():
            a = a.replace(key, value)
        out.append(a)
    return out


def start_server(
    spec: ServerSpec,
    *,
    timeout: float = 60.0,
    pin: bool = True,
    subst: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
) -> ServerProc:
    """Starts ``python -m spec.module spec.args extra_args`` pinned to ``SERVER_CPU``
    and waits for its READY line. ``{workdir}`` in the arguments becomes a fresh temp
    dir (for SQLite files), and each key of ``subst`` its value (``{pg}``: a database
    URL). Raises RuntimeError with the log tail if it does not come up."""
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{spec.name.replace(' ', '_')}-"))
    args = _expand((*spec.args, *extra_args), {"{workdir}": str(workdir), **(subst or {})})
    log_path = workdir / "server.log"
    log = log_path.open("wb")
    cpus = _cpus()
    do_pin = pin and SERVER_CPU in cpus and len(cpus) > 1

    def preexec() -> None:  # runs in the child before exec: same as `taskset -c 0`
        if do_pin:
            os.sched_setaffinity(0, {SERVER_CPU})

    env = {**os.environ, "PYTHONUNBUFFERED": "1", **dict(spec.env)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", spec.module, *args],
        stdout=subprocess.PIPE,
        stderr=log,
        cwd=REPO,
        env=env,
        preexec_fn=preexec,  # affinity must be set before exec
    )
    log.close()
    assert proc.stdout is not None
    ready: list[tuple[int | None, int | None]] = []
    lines: list[str] = []

    def reader() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            lines.append(line)
            m = _READY.search(line)
            if m and not ready:
                ready.append(
                    (int(m.group(1)) if m.group(1) else None, int(m.group(2)) if m.group(2) else None)
                )

    threading.Thread(target=reader, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not ready:
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            tail = log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{spec.name} did not start (exit {proc.poll()}):\n{tail}")
        time.sleep(0.02)
    grpc_port, http_port = ready[0]
    database = (subst or {}).get("{pg}", "").partition("?")[0].rsplit("/", 1)[-1]  # pg.name_of
    return ServerProc(spec, proc, grpc_port, http_port, log_path, workdir, lines, database)
