"""The chaos cluster: replicas of ``a2a-grpc serve --cluster`` serving
:class:`~tests.chaos.agent.ChaosAgent` on a fresh PostgreSQL database, each
through its own :class:`~tests.chaos.proxy.Proxy`, with the recording
webhook receiver, the agent-side execution log, and what a run reads back
from the store at its end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError
from a2a_grpc.types import pb
from tests.chaos.agent import LOG_ENV, read_exec_log
from tests.chaos.invariants import ACTIVE, FinalTask, LoggedEvent, RunRecord
from tests.chaos.proxy import Background, Proxy
from tests.chaos.receiver import Receiver
from tests.cluster.replicas import _IFACE, CLI, ROOT, Replica, drop_database, fresh_database
from tests.store.storekit import PG_URL

__all__ = ["AGENT", "REDIS_URL", "ChaosCluster", "ChaosReplica", "bus_url"]

AGENT = "tests.chaos.agent:ChaosAgent"
REDIS_URL = os.environ.get("A2A_GRPC_TEST_REDIS_URL", "redis://127.0.0.1:6379")
_PUSH_ARGS = ("--push", "--push-allow", "127.0.0.1", "--push-max-backoff", "1", "--push-max-attempts", "50")


def bus_url(bus: str) -> str:
    """The ``--bus`` value of a bus name: postgresql, or redis (the test Redis)."""
    return REDIS_URL if bus == "redis" else bus


def _raw(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


class ChaosReplica(Replica):
    """A :class:`~tests.cluster.replicas.Replica` serving the chaos agent with
    its own environment (the execution log), that can also be paused."""

    def __init__(self, name: str, args: list[str], log: Path, env: dict[str, str]) -> None:
        super().__init__(name, args, log)
        self.env = env
        self.paused = False
        self.proxy: Proxy | None = None
        self._offset = 0

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc is not None else 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 60.0) -> ChaosReplica:
        """Starts the process (``--agent`` the chaos agent) and waits until it
        serves; raises RuntimeError when it exits or does not serve in time."""
        self.proc = self.spawn()
        return self.wait_serving(timeout)

    def wait_serving(self, timeout: float = 60.0) -> ChaosReplica:
        """Waits until the process :meth:`spawn` started serves (see :meth:`start`)."""
        assert self.proc is not None
        offset = self._offset
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_bytes()[offset:].decode(errors="replace").rsplit(" is serving:", 1)
            if len(text) == 2 and "card " in text[1]:
                self.urls = dict(_IFACE.findall(text[1]))
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}:\n{self.tail()}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start in {timeout} s:\n{self.tail()}")

    def spawn(self) -> subprocess.Popen[bytes]:
        """Starts the process without waiting (see :meth:`start`)."""
        env = {**os.environ, "PYTHONPATH": str(ROOT), "A2A_GRPC_LOG_LEVEL": "INFO", **self.env}
        self.paused = False
        with self.log.open("ab") as out:
            self._offset = out.tell()
            argv = [CLI, "serve", "--grpc-port", "0", "--http-port", "0", "--grace", "1", "--no-access-log"]
            return subprocess.Popen(
                [*argv, *self.args, "--agent", AGENT], cwd=ROOT, env=env, stdout=out, stderr=out
            )

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def pause(self) -> None:
        if self.alive and not self.paused:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.paused:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        self.resume()
        super().stop()


class ChaosCluster:
    """``replicas`` replicas (r1, r2, …) on a fresh database, each through its
    own proxy (``proxied``), lease TTL ``ttl``, bus ``bus`` (postgresql or
    redis), push delivery to the receiver on when ``push``; ``extra`` are
    more ``serve`` options. Use ``async with``; files go to ``tmp``."""

    def __init__(
        self,
        tmp: Path,
        *,
        replicas: int = 3,
        ttl: float | None = 2.0,
        bus: str = "postgresql",
        push: bool = True,
        proxied: bool = True,
        cancel_grace: float = 1.0,
        extra: Sequence[str] = (),
        fail_rate: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.tmp = tmp
        self.count = replicas
        self.ttl = ttl
        self.bus = bus
        self.push = push
        self.proxied = proxied
        self.cancel_grace = cancel_grace
        self.extra = list(extra)
        self.exec_log = tmp / "exec.log"
        self.bg = Background()
        self.receiver = Receiver(seed=seed, fail_rate=fail_rate)
        self.replicas: list[ChaosReplica] = []
        self.database = ""
        self._clients: dict[tuple[str, int, str], A2AClient] = {}

    @property
    def effective_ttl(self) -> float:
        return self.ttl if self.ttl is not None else 10.0

    @property
    def bound(self) -> float:
        """The takeover bound: TTL + the reaper's interval (a third of it) + 2 s for the load."""
        return self.effective_ttl * 4 / 3 + 2.0

    async def __aenter__(self) -> ChaosCluster:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self, *, start: bool = True) -> None:
        """Creates the database, starts the receiver and the proxies, and
        (``start``) the replicas."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.database = await fresh_database(PG_URL)
        await self.bg.arun(self.receiver.start())
        for i in range(1, self.count + 1):
            self.replicas.append(await self.add(f"r{i}"))
        if start and self.replicas:
            # The first creates the schema; the others start together (not all
            # at once on a fresh database: that is fault 3, test_faults).
            await asyncio.to_thread(self.replicas[0].start)
            await asyncio.gather(*(asyncio.to_thread(r.start) for r in self.replicas[1:]))

    async def add(self, name: str, *, extra: Sequence[str] = ()) -> ChaosReplica:
        """A new replica ``name`` (not started), with its proxy when proxied."""
        store = self.database
        proxy = None
        if self.proxied:
            parts = urlsplit(self.database)
            proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432, name=name)
            await self.bg.arun(proxy.start())
            store = self.database.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{proxy.port}", 1)
        args = ["--store", store, "--cluster", "--replica-id", name, "--cancel-grace", str(self.cancel_grace)]
        if self.ttl is not None:
            args += ["--lease-ttl", str(self.ttl)]
        if self.bus != "postgresql":
            args += ["--bus", bus_url(self.bus)]
        if self.push:
            args += list(_PUSH_ARGS)
        replica = ChaosReplica(name, [*args, *self.extra, *extra], self.tmp / f"{name}.log", self.env())
        replica.proxy = proxy
        return replica

    def env(self) -> dict[str, str]:
        return {LOG_ENV: str(self.exec_log)}

    async def close(self) -> None:
        for client in self._clients.values():
            with contextlib.suppress(Exception):
                await client.close()
        self._clients.clear()
        await asyncio.gather(*(asyncio.to_thread(r.stop) for r in self.replicas))
        for r in self.replicas:
            if r.proxy is not None:
                with contextlib.suppress(Exception):
                    await self.bg.arun(r.proxy.stop())
        with contextlib.suppress(Exception):
            await self.bg.arun(self.receiver.stop())
        self.bg.close()
        if self.database:
            with contextlib.suppress(Exception):
                await drop_database(PG_URL, self.database)

    def replica(self, name: str) -> ChaosReplica:
        return next(r for r in self.replicas if r.name == name)

    async def client(self, replica: ChaosReplica, binding: str = "grpc", timeout: float = 10.0) -> A2AClient:
        """A client of ``replica``'s current process over ``binding`` (cached)."""
        key = (replica.name, replica.pid, binding)
        client = self._clients.get(key)
        if client is None:
            # The card fetch's own deadline (cancelling connect would leak its HTTP session).
            client = await A2AClient.connect(
                replica.http, bindings=(binding,), timeout=5.0, connect_timeout=3.0
            )
            client.timeout = timeout
            if key in self._clients:  # another caller connected meanwhile
                await client.close()
                return self._clients[key]
            self._clients[key] = client
        return client

    async def forget(self, replica: ChaosReplica) -> None:
        """Closes the cached clients of ``replica``'s earlier processes."""
        for key in [k for k in self._clients if k[0] == replica.name and k[1] != replica.pid]:
            with contextlib.suppress(Exception):
                await self._clients.pop(key).close()

    def healthy(self) -> list[ChaosReplica]:
        return [
            r
            for r in self.replicas
            if r.alive and not r.paused and (r.proxy is None or r.proxy.mode == "pass")
        ]

    # ----------------------------------------------------------- the store
    async def db(self) -> asyncpg.Connection:
        """A direct connection to the run's database (not through a proxy)."""
        return await asyncpg.connect(_raw(self.database), timeout=5)

    async def query(self, sql: str, *args: object) -> list[asyncpg.Record]:
        conn = await self.db()
        try:
            return list(await conn.fetch(sql, *args))
        finally:
            await conn.close()

    async def settle(self, timeout: float) -> int:
        """Waits until no task is SUBMITTED or WORKING and no push row is
        pending (or ``timeout`` seconds); returns how many tasks are still active."""
        active = sorted(ACTIVE)
        deadline = time.monotonic() + timeout
        while True:
            left = (await self.query("SELECT count(*) FROM a2a_tasks WHERE state = ANY($1)", active))[0][0]
            pending = 0
            if self.push and not left:
                pending = (await self.query("SELECT count(*) FROM a2a_push_outbox WHERE state = 'pending'"))[
                    0
                ][0]
            if (not left and not pending) or time.monotonic() > deadline:
                return int(left)
            await asyncio.sleep(0.25)

    async def collect(self, run: RunRecord) -> None:
        """Reads the end of the run into ``run``: every task's state and event
        log rows from the store, each task as GetTask answers it, the
        execution log and the webhook deliveries."""
        rows = await self.query("SELECT id, state FROM a2a_tasks")
        run.states = {r["id"]: int(r["state"]) for r in rows}
        events = await self.query("SELECT task_id, version, final FROM a2a_task_events")
        run.events = [LoggedEvent(r["task_id"], int(r["version"]), bool(r["final"])) for r in events]
        ids = sorted(set(run.states) | {a.task_id for a in run.acks})
        reader = next(iter(self.healthy()), None)
        if reader is not None:
            client = await self.client(reader, "grpc", timeout=15)
            sem = asyncio.Semaphore(16)

            async def one(task_id: str) -> None:
                async with sem:
                    run.finals[task_id] = await final_task(client, task_id)

            await asyncio.gather(*(one(t) for t in ids))
        run.exec_log = list(read_exec_log(self.exec_log))
        run.deliveries = self.receiver.snapshot()


async def final_task(client: A2AClient, task_id: str) -> FinalTask:
    """``task_id`` as GetTask answers it (state 0: not found)."""
    for _ in range(3):
        try:
            task = await client.get_task(task_id, timeout=15)
            break
        except A2AError as err:
            if err.code.name == "TASK_NOT_FOUND":
                return FinalTask(task_id, 0)
            await asyncio.sleep(0.5)
    else:
        return FinalTask(task_id, 0, "GetTask kept failing")
    text = " ".join(p.text for p in task.status.message.parts)
    ended = task.status.timestamp.seconds + task.status.timestamp.nanos / 1e9
    chunks = tuple(p.text for a in task.artifacts if a.artifact_id == "out" for p in a.parts)
    return FinalTask(task_id, int(task.status.state), text, ended, chunks)


def terminal(state: int) -> bool:
    return state in (
        pb.TASK_STATE_COMPLETED,
        pb.TASK_STATE_FAILED,
        pb.TASK_STATE_CANCELED,
        pb.TASK_STATE_REJECTED,
    )
