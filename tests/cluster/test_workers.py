"""``a2a-grpc serve --workers 2`` (issue 12, item 7): two cluster replicas
sharing both ports (SO_REUSEPORT) under a supervisor, on a fresh PostgreSQL
database. Calls succeed on every binding and reach both workers; ``kill -9``
of one → the supervisor restarts it and its in-flight tasks are taken over
(FAILED "execution lost: …") while the other worker's finish; SIGTERM to the
supervisor stops every worker. A store that is not PostgreSQL is refused in
one line."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from a2a_grpc.client import A2AClient
from a2a_grpc.cluster._store import ClusterStore
from a2a_grpc.context import Owner
from a2a_grpc.types import pb
from tests.cluster.conftest import TTL
from tests.cluster.replicas import AGENT, BINDINGS, CLI, ROOT

pytestmark = pytest.mark.slow

NOW = pb.SendMessageConfiguration(return_immediately=True)
_STARTED = re.compile(r"worker (\d) \(replica (\S+)\) started: pid (\d+)")
_PORTS = re.compile(r"sharing gRPC port (\d+), HTTP port (\d+)")


def _start(database: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("A2A_GRPC_WORKER", None)
    args = [CLI, "serve", "--agent", AGENT, "--grpc-port", "0", "--http-port", "0", "--grace", "1"]
    args += ["--store", database, "--workers", "2", "--lease-ttl", str(TTL), "--replica-id", "wk"]
    with log.open("wb") as out:
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=out)


def _wait_log(log: Path, proc: subprocess.Popen[bytes], serving: int, timeout: float = 30) -> str:
    """The log once it shows ``serving`` "is serving:" blocks."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if text.count("card      http") >= serving:
            return text
        assert proc.poll() is None, text
        time.sleep(0.05)
    raise AssertionError(f"not {serving} workers serving after {timeout} s:\n{log.read_text()}")


def _exists(pid: int) -> bool:
    """Whether process ``pid`` exists (running or a zombie)."""
    return Path(f"/proc/{pid}").exists()


async def _wait_state(client: A2AClient, task_id: str, states: set[int], timeout: float) -> pb.Task:
    deadline = time.monotonic() + timeout
    while True:
        task = await client.get_task(task_id)
        if task.status.state in states or time.monotonic() > deadline:
            return task
        await asyncio.sleep(0.1)


async def _long_tasks(http: str, n: int) -> list[str]:
    """``n`` long tasks, each sent over a new connection (so the kernel spreads
    them over the workers), cycling through the bindings."""
    ids = []
    for i in range(n):
        client = await A2AClient.connect(http, bindings=(BINDINGS[i % 3],), timeout=30.0)
        try:
            ids.append((await client.send_message("steps=80 delay=0.1", configuration=NOW)).task.id)
        finally:
            await client.close()
    return ids


async def test_workers_share_ports_restart_and_take_over(database: str, tmp_path: Path) -> None:
    log = tmp_path / "supervisor.log"
    proc = _start(database, log)
    store = ClusterStore(database)
    await store.open()
    try:
        text = _wait_log(log, proc, 2)
        grpc_port, http_port = map(int, _PORTS.search(text).groups())  # type: ignore[union-attr]
        pids = {rid: int(pid) for _i, rid, pid in _STARTED.findall(text)}
        assert set(pids) == {"wk-w1", "wk-w2"}
        http = f"http://127.0.0.1:{http_port}"
        for binding in BINDINGS:  # every binding, quick tasks end COMPLETED
            client = await A2AClient.connect(http, bindings=(binding,), timeout=30.0)
            try:
                done = (await client.send_message("steps=1 delay=0")).task
            finally:
                await client.close()
            assert done.status.state == pb.TASK_STATE_COMPLETED, binding
        tasks = await _long_tasks(http, 12)
        holders = {tid: await store.lease_holder(Owner(), tid) for tid in tasks}
        assert set(holders.values()) == {"wk-w1", "wk-w2"}, holders  # both workers serve the ports
        os.kill(pids["wk-w1"], signal.SIGKILL)
        killed = time.monotonic()
        client = await A2AClient.connect(f"grpc://127.0.0.1:{grpc_port}", bindings=("grpc",), timeout=30.0)
        try:
            ends = {
                tid: await _wait_state(client, tid, {pb.TASK_STATE_FAILED, pb.TASK_STATE_COMPLETED}, 20)
                for tid in tasks
            }
            took = time.monotonic() - killed
        finally:
            await client.close()
        for tid, task in ends.items():
            if holders[tid] == "wk-w1":
                assert task.status.state == pb.TASK_STATE_FAILED, task
                assert task.status.message.parts[0].text.startswith("execution lost: replica wk-w1 stopped")
            else:
                assert task.status.state == pb.TASK_STATE_COMPLETED, task
        text = _wait_log(log, proc, 3)  # the restarted worker serves again
        assert "worker 1 (replica wk-w1.1) started" in text
        assert took < 20
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        final = dict((rid, int(pid)) for _i, rid, pid in _STARTED.findall(log.read_text()))
        for pid in final.values():
            assert not _exists(pid), pid  # every worker stopped (and reaped)
        assert "all workers stopped" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await store.close()


def test_workers_need_a_cluster_store(tmp_path: Path) -> None:
    """SQLite cannot be shared by replicas: --workers says so in one line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [CLI, "serve", "--store", f"sqlite:///{tmp_path}/a.db", "--workers", "2"]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, timeout=30)
    assert done.returncode == 1
    assert done.stderr.decode().strip() == (
        "Error: --workers needs a cluster store: --store postgresql://... (SQLite serves one process only)"
    )


def test_workers_end_with_a_killed_supervisor(database: str, tmp_path: Path) -> None:
    """``kill -9`` of the supervisor leaves no worker behind."""
    log = tmp_path / "supervisor.log"
    proc = _start(database, log)
    try:
        text = _wait_log(log, proc, 2)
        pids = [int(pid) for _i, _rid, pid in _STARTED.findall(text)]
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 15
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if _running(pid)]


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
