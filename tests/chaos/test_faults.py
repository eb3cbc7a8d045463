"""One focused scenario per known fault of cluster mode (the issue "Replicas
that survive real faults", faults 1–11), each on its own fresh database and
replicas. A scenario asserts the behaviour the fix must give; those that
fail today are ``xfail(strict=False)`` (chaos is timing-bound: an XPASS is
reported, not an error) with what is seen today as the reason."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import statistics
import subprocess
import time
from pathlib import Path

import aiohttp
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError
from a2a_grpc.types import pb
from tests.chaos.agent import LOG_ENV, read_exec_log
from tests.chaos.conftest import redis_skip_reason
from tests.chaos.harness import AGENT, ChaosCluster, ChaosReplica, terminal
from tests.chaos.invariants import FinalTask, RunRecord, check
from tests.cluster.replicas import CLI, ROOT

pytestmark = [pytest.mark.chaos, pytest.mark.postgres]

NOW = pb.SendMessageConfiguration(return_immediately=True)
SERVING = health_pb2.HealthCheckResponse.SERVING
BINDINGS = ("grpc", "jsonrpc", "rest")


async def _health(replica: ChaosReplica) -> int:
    """The replica's grpc.health.v1 status (-1: no answer within 2 s)."""
    channel = grpc.aio.insecure_channel(replica.urls["GRPC"])
    try:
        stub = health_pb2_grpc.HealthStub(channel)
        return int((await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)).status)
    except grpc.aio.AioRpcError:
        return -1
    finally:
        await channel.close()


async def _wait_state(client: A2AClient, task_id: str, want: set[int] | None, timeout: float) -> pb.Task:
    """Polls GetTask until the task is in ``want`` (None: terminal) or ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        task = await client.get_task(task_id, history_length=0, timeout=10)
        done = terminal(task.status.state) if want is None else task.status.state in want
        if done or time.monotonic() > deadline:
            return task
        await asyncio.sleep(0.05)


async def _until(predicate: object, timeout: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        await asyncio.sleep(every)
    return False


def _staged(ok: bool, why: str) -> None:
    """Skips a scenario the machine was too slow to stage (that is no verdict on the fault)."""
    if not ok:
        pytest.skip(f"could not stage the scenario: {why}")


def _ended_at(task: pb.Task) -> float:
    return task.status.timestamp.seconds + task.status.timestamp.nanos / 1e9


# --------------------------------------------------------------------- 1
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 1: after its PostgreSQL connections were black-holed for 35 s the replica is SERVING "
    "again ~5 s after the heal, yet every SendMessage on it times out (the pooled connections wait "
    "forever for answers that were lost)",
)
@pytest.mark.timeout(240)
async def test_fault1_replica_works_after_a_partition_heals(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=1, ttl=None, push=False) as c:
        r1 = c.replicas[0]
        assert r1.proxy is not None
        client = await c.client(r1, timeout=15)
        for _ in range(3):  # writes in flight when the partition starts
            await client.send_message("steps=400 delay=0.05", configuration=NOW)
        await asyncio.to_thread(r1.proxy.set, "blackhole")
        await asyncio.sleep(35)
        await asyncio.to_thread(r1.proxy.set, "pass")
        healed = time.monotonic()
        while await _health(r1) != SERVING:
            assert time.monotonic() - healed < 60, "not SERVING 60 s after the heal"
            await asyncio.sleep(0.2)
        answers = []
        for binding in BINDINGS:
            began = time.monotonic()
            try:
                c2 = await c.client(r1, binding, timeout=15)
                task = (await c2.send_message("steps=1 delay=0", timeout=15)).task
                answers.append(f"{binding}: {pb.TaskState.Name(task.status.state)}")
            except A2AError as err:
                answers.append(f"{binding}: {err.code.name} after {time.monotonic() - began:.1f} s")
    assert all(a.endswith("COMPLETED") for a in answers), answers


# --------------------------------------------------------------------- 2
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 2: a webhook registered on another replica than the one running the task never fires",
)
async def test_fault2_webhook_set_on_another_replica_fires(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=2) as c:
        r1, r2 = c.replicas
        c1, c2 = await c.client(r1), await c.client(r2, "rest")
        task = (await c1.send_message("steps=30 delay=0.05", configuration=NOW)).task
        hook = pb.TaskPushNotificationConfig(
            task_id=task.id, id="late", url=c.receiver.url("late"), token="t"
        )
        await c2.create_task_push_notification_config(hook)
        _staged(not terminal((await c2.get_task(task.id)).status.state), "the task ended before the set")
        done = await _wait_state(c2, task.id, None, 20)
        assert done.status.state == pb.TASK_STATE_COMPLETED
        await _until(lambda: any(d.terminal for d in c.receiver.of(task.id)), 10)
        got = c.receiver.of(task.id)
    assert any(d.terminal for d in got), f"{len(got)} notifications, none terminal"


# --------------------------------------------------------------------- 3
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason='fault 3: replicas started together on a fresh database crash (relation "a2a_lease_epoch" '
    "already exists: each creates the schema)",
)
async def test_fault3_replicas_started_together_on_a_fresh_database(tmp_path: Path) -> None:
    crashed = []
    for round_ in range(3):
        c = ChaosCluster(tmp_path / str(round_), replicas=3, push=False, proxied=False)
        try:
            await c.open(start=False)
            for r in c.replicas:
                r.proc = r.spawn()
            for r in c.replicas:
                try:
                    await asyncio.to_thread(r.wait_serving, 60)
                except RuntimeError:
                    error = re.findall(r"^\S*Error: .*$", r.log.read_text(errors="replace"), re.M)
                    crashed.append(f"round {round_} {r.name}: {error[-1] if error else r.tail(3)}")
        finally:
            await c.close()
    assert not crashed, crashed


# --------------------------------------------------------------------- 4
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 4: the push-claim holder paused beyond the 60 s claim re-sends, once resumed, the rows "
    "it read before the pause: duplicates, and the webhook gets WORKING after COMPLETED",
)
@pytest.mark.timeout(300)
async def test_fault4_paused_claim_holder_sends_nothing_stale(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=3) as c:
        receiver = c.receiver
        receiver.hold(2, 1.0)  # the creation snapshot: the task is done meanwhile
        receiver.hold(3)  # WORKING: its holder is caught mid-POST, the later rows read
        client = await c.client(c.replicas[0])
        hook = pb.TaskPushNotificationConfig(id="h", url=receiver.url("h"), token="t")
        config = pb.SendMessageConfiguration(task_push_notification_config=hook)
        task = (await client.send_message("steps=4 delay=0", configuration=config)).task
        _staged(task.status.state == pb.TASK_STATE_COMPLETED, f"the task ended {task.status.state}")
        _staged(await _until(lambda: any(d.version == 3 for d in receiver.of(task.id)), 15), "no v3 POST")
        rows = await c.query("SELECT replica FROM a2a_push_claims WHERE task_id = $1", task.id)
        holder = c.replica(rows[0]["replica"])
        holder.pause()
        paused = time.monotonic()
        receiver.release()  # its answer waits in the paused holder's socket
        got_terminal = await _until(lambda: any(d.terminal for d in receiver.of(task.id)), 80, 0.5)
        await asyncio.sleep(max(0.0, 66 - (time.monotonic() - paused)))
        holder.resume()
        await asyncio.sleep(6)  # what the resumed holder sends
        run = RunRecord(deliveries=receiver.of(task.id))
        run.finals[task.id] = FinalTask(task.id, int(task.status.state), ended_at=_ended_at(task))
    assert got_terminal, "nobody delivered the terminal notification while the holder was paused"
    seen = [f"v{d.version} {d.state or d.kind}".replace("TASK_STATE_", "") for d in run.deliveries]
    assert not check(run), f"the webhook got {seen}: {[str(v) for v in check(run)]}"


# --------------------------------------------------------------------- 5
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 5: with the default --lease-ttl 10 a killed replica's task is taken over after ~10-13 s "
    "(target: within 4 s by default)",
)
@pytest.mark.timeout(120)
async def test_fault5_takeover_within_4_s_by_default(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=2, ttl=None, push=False, proxied=False) as c:
        r1, r2 = c.replicas
        task = (await (await c.client(r1)).send_message("steps=1000 delay=0.05", configuration=NOW)).task
        watcher = await c.client(r2)
        await _wait_state(watcher, task.id, {pb.TASK_STATE_WORKING}, 10)
        r1.kill()
        killed = time.monotonic()
        ended = await _wait_state(watcher, task.id, None, 30)
        took = time.monotonic() - killed
    assert ended.status.state == pb.TASK_STATE_FAILED
    assert took < 4.0, f"taken over after {took:.1f} s"


# --------------------------------------------------------------------- 6
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 6: restarted under the same --replica-id, the replica's new LISTEN session is ended "
    "by the peer that takes its old leases over; a cancel sent meanwhile is lost (forced after the "
    "grace, and the agent runs on)",
)
@pytest.mark.timeout(120)
async def test_fault6_restart_under_the_same_id_loses_no_cancel(tmp_path: Path) -> None:
    c = ChaosCluster(tmp_path, replicas=3, push=False, proxied=False)
    try:
        await c.open(start=False)
        r1, r2, _ = c.replicas
        base = list(r1.args)
        r1.args = [*base, "--lease-ttl", "12"]  # the old process's leases outlive its restart
        for r in c.replicas:
            await asyncio.to_thread(r.start)
        c1 = await c.client(r1)
        old = [(await c1.send_message("steps=400 delay=0.05", configuration=NOW)).task.id for _ in range(4)]
        await _wait_state(await c.client(r2), old[-1], {pb.TASK_STATE_WORKING}, 10)
        r1.kill()
        r1.args = [*base, "--lease-ttl", "4"]
        await asyncio.to_thread(r1.start)
        await c.forget(r1)
        c1 = await c.client(r1)
        new = [(await c1.send_message("steps=400 delay=0.05", configuration=NOW)).task.id for _ in range(6)]
        left = await c.query(
            "SELECT min(expires_at) - EXTRACT(EPOCH FROM clock_timestamp()) FROM a2a_leases WHERE task_id = ANY($1)",
            old,
        )
        _staged(left[0][0] is not None and left[0][0] > 0.5, "the old leases expired before the restart")
        await asyncio.sleep(left[0][0] - 0.4)
        r1.pause()  # held still meanwhile, so that a peer (not r1 itself) takes the old leases over
        try:
            lost = await _wait_state(await c.client(r2), old[0], {pb.TASK_STATE_FAILED}, 5)
            cancels = [
                asyncio.ensure_future((await c.client(r2, b)).cancel_task(t))
                for t, b in zip(new, BINDINGS * 2, strict=True)
            ]
            await asyncio.sleep(0.3)
        finally:
            r1.resume()
        done = await asyncio.gather(*cancels)
        await asyncio.sleep(1.0)
        log = list(read_exec_log(c.exec_log))
        ended_session = any("ended its event-relay session" in r.log.read_text() for r in c.replicas[1:])
    finally:
        await c.close()
    assert lost.status.state == pb.TASK_STATE_FAILED
    forced = [t.id for t in done if "forced it" in t.status.message.parts[0].text]
    late = sorted(
        {
            e.task
            for e in log
            for t in done
            if e.task == t.id and e.what == "step" and e.t > _ended_at(t) + 0.02
        }
    )
    assert not forced and not late, (
        f"{len(forced)} of {len(done)} cancels forced; the agent ran on after {len(late)}; "
        f"a peer ended r1's relay session: {ended_session}"
    )


# --------------------------------------------------------------------- 7
_STARTED = re.compile(r"worker (\d) \(replica (\S+)\) started: pid (\d+)")
_PORTS = re.compile(r"sharing gRPC port (\d+), HTTP port (\d+)")


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 7: with --workers 2, a restarted worker receives no traffic from the gRPC clients that "
    "were connected before (their connections moved to the surviving worker and stay there)",
)
@pytest.mark.timeout(120)
async def test_fault7_restarted_worker_gets_traffic(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=0, push=False, proxied=False) as c:
        log = tmp_path / "supervisor.log"
        proc = _start_workers(c, log)
        clients: list[A2AClient] = []
        try:
            text = await asyncio.to_thread(_wait_workers, log, proc, 2)
            grpc_port = int(_PORTS.search(text).group(1))  # type: ignore[union-attr]
            pids = {rid: int(pid) for _i, rid, pid in _STARTED.findall(text)}
            for _ in range(8):
                client = await A2AClient.connect(
                    f"grpc://127.0.0.1:{grpc_port}", bindings=("grpc",), timeout=15
                )
                await client.send_message("steps=1 delay=0")
                clients.append(client)
            os.kill(pids["wk-w1"], signal.SIGKILL)
            for client in clients:  # busy clients: those of w1 reconnect (to w2) at once
                await _one_call(client)
            await asyncio.to_thread(_wait_workers, log, proc, 3)
            await asyncio.sleep(1.0)
            sends = [clients[i % len(clients)].send_message("steps=1 delay=0", timeout=15) for i in range(24)]
            ids = [(await send).task.id for send in sends]
        finally:
            for client in clients:
                await client.close()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        served = {e.task: e.replica for e in read_exec_log(c.exec_log) if e.what == "begin"}
    by = {r: sum(1 for t in ids if served.get(t) == r) for r in sorted(set(served.values()))}
    assert by.get("wk-w1.1", 0) > 0, f"calls per worker after the restart: {by}"


async def _one_call(client: A2AClient) -> None:
    """A quick task; a call lost with the killed worker's connection is sent again."""
    for attempt in range(3):
        try:
            await client.send_message("steps=1 delay=0", timeout=15)
            return
        except A2AError:
            if attempt == 2:
                raise
            await asyncio.sleep(0.2)


def _start_workers(c: ChaosCluster, log: Path) -> subprocess.Popen[bytes]:
    """``serve --workers 2`` (replica ids wk-w1, wk-w2) on the cluster's database."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), LOG_ENV: str(c.exec_log)}
    env.pop("A2A_GRPC_WORKER", None)
    argv = [CLI, "serve", "--agent", AGENT, "--grpc-port", "0", "--http-port", "0", "--grace", "1"]
    argv += [
        "--store",
        c.database,
        "--workers",
        "2",
        "--lease-ttl",
        "2",
        "--replica-id",
        "wk",
        "--no-access-log",
    ]
    with log.open("wb") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=out)


def _wait_workers(log: Path, proc: subprocess.Popen[bytes], serving: int, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if text.count("card      http") >= serving:
            return text
        if proc.poll() is not None:
            raise RuntimeError(text)
        time.sleep(0.05)
    raise RuntimeError(f"not {serving} workers serving:\n{log.read_text()}")


# --------------------------------------------------------------------- 8
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 8: a replica frozen past its lease runs one more agent step after SIGCONT, for a task "
    "another replica already ended FAILED",
)
@pytest.mark.timeout(120)
async def test_fault8_frozen_agent_runs_no_step_after_the_takeover(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=2, push=False, proxied=False) as c:
        r1, r2 = c.replicas
        tasks = [
            (await (await c.client(r1)).send_message("steps=400 delay=0.05", configuration=NOW)).task
            for _ in range(3)
        ]
        watcher = await c.client(r2)
        await _wait_state(watcher, tasks[-1].id, {pb.TASK_STATE_WORKING}, 10)
        await asyncio.sleep(0.3)
        r1.pause()
        try:
            ended = [await _wait_state(watcher, t.id, None, c.bound * 2 + 5) for t in tasks]
        finally:
            r1.resume()
        await asyncio.sleep(1.5)
        run = RunRecord(exec_log=list(read_exec_log(c.exec_log)))
        for t in ended:
            run.finals[t.id] = FinalTask(t.id, int(t.status.state), ended_at=_ended_at(t))
    assert all(t.status.state == pb.TASK_STATE_FAILED for t in ended)
    late = [str(v) for v in check(run) if v.kind == "step_after_end"]
    assert not late, late


# --------------------------------------------------------------------- 9
async def _outage(c: ChaosCluster) -> ChaosReplica:
    """The cluster's one replica, its database now down (connections refused)."""
    r1 = c.replicas[0]
    assert r1.proxy is not None
    client = await c.client(r1)
    assert (await client.send_message("steps=1 delay=0")).task.status.state == pb.TASK_STATE_COMPLETED
    await asyncio.to_thread(r1.proxy.set, "refuse")
    return r1


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 9: with the database down SendMessage answers INTERNAL (the agent failed: "
    "ConnectionRefusedError), not UNAVAILABLE",
)
@pytest.mark.timeout(120)
async def test_fault9_database_down_answers_unavailable(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=1, push=False) as c:
        r1 = await _outage(c)
        codes = {}
        for binding in BINDINGS:
            client = await c.client(r1, binding)
            try:
                await client.send_message("steps=1 delay=0", timeout=20)
                codes[binding] = "OK"
            except A2AError as err:
                codes[binding] = f"{err.code.name}: {err.message[:80]}"
    assert all(v.startswith("UNAVAILABLE") for v in codes.values()), codes


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 9: with the database down the push dispatcher logs a traceback every second, no backoff",
)
@pytest.mark.timeout(120)
async def test_fault9_database_down_push_dispatcher_backs_off(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=1) as c:
        r1 = await _outage(c)
        before = r1.log.read_text(errors="replace")
        await asyncio.sleep(12)
        during = r1.log.read_text(errors="replace")[len(before) :]
    push = len(re.findall(r"(?:WARNING|ERROR) a2a_grpc\.push: ", during))
    tracebacks = during.count("Traceback")
    assert push <= 4, f"{push} push-dispatcher complaints in 12 s of outage ({tracebacks} tracebacks in all)"


READINESS = ("/readyz", "/ready", "/healthz", "/health")


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 9: there is no HTTP readiness endpoint (503 while the database is down, 200 once it is back)",
)
@pytest.mark.timeout(120)
async def test_fault9_http_readiness_follows_the_database(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=1, push=False) as c:
        r1 = await _outage(c)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
            await asyncio.sleep(3)
            down = {p: await _status(http, r1.http + p) for p in READINESS}
            assert r1.proxy is not None
            await asyncio.to_thread(r1.proxy.set, "pass")
            up: dict[str, int] = {}
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                up = {p: await _status(http, r1.http + p) for p in READINESS}
                if any(up[p] == 200 and down[p] == 503 for p in READINESS):
                    break
                await asyncio.sleep(0.5)
    assert any(down[p] == 503 and up[p] == 200 for p in READINESS), (down, up)


async def _status(http: aiohttp.ClientSession, url: str) -> int:
    try:
        async with http.get(url) as resp:
            return resp.status
    except (aiohttp.ClientError, TimeoutError):
        return -1


# -------------------------------------------------------------------- 10
@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 10: the webhook given with SendMessage is stored in a second write after the task: "
    "killed between the two, the task stays without it and its end is never pushed",
)
@pytest.mark.timeout(120)
async def test_fault10_inline_webhook_is_stored_with_the_task(tmp_path: Path) -> None:
    async with ChaosCluster(tmp_path, replicas=1) as c:
        r1 = c.replicas[0]
        assert r1.proxy is not None
        client = await c.client(r1, timeout=20)
        await asyncio.to_thread(r1.proxy.set, "delay", 0.15)  # a slower database: the window is wider
        db = await c.db()
        try:
            hook = pb.TaskPushNotificationConfig(id="h", url=c.receiver.url("h"), token="t")
            config = pb.SendMessageConfiguration(return_immediately=True, task_push_notification_config=hook)
            sending = asyncio.ensure_future(client.send_message("steps=400 delay=0.05", configuration=config))
            while not (row := await db.fetchrow("SELECT id FROM a2a_tasks LIMIT 1")):
                assert not sending.done(), "answered before any task row was seen"
                await asyncio.sleep(0.002)
            r1.kill()  # the moment the task is stored
            task_id = row["id"]
            configs_at_kill = await db.fetchval(
                "SELECT count(*) FROM a2a_push_configs WHERE task_id = $1", task_id
            )
        finally:
            await db.close()
        sending.cancel()
        await asyncio.to_thread(r1.proxy.set, "pass")
        await asyncio.to_thread(r1.start)
        await c.forget(r1)
        ended = await _wait_state(await c.client(r1), task_id, None, c.bound * 2 + 5)
        await _until(lambda: any(d.terminal for d in c.receiver.of(task_id)), 10)
        pushed = [d.state for d in c.receiver.of(task_id)]
    assert ended.status.state == pb.TASK_STATE_FAILED
    assert configs_at_kill == 1 and "TASK_STATE_FAILED" in pushed, (configs_at_kill, pushed)


# -------------------------------------------------------------------- 11
async def _latencies(c: ChaosCluster, tasks: int, chunks: int) -> list[float]:
    """Milliseconds from each chunk's yield on r1 to its arrival at a subscriber on r2."""
    r1, r2 = c.replicas
    runner, watcher = await c.client(r1), await c.client(r2)
    out: list[float] = []
    for i in range(tasks + 1):
        task = (await runner.send_message(f"steps={chunks} delay=0.02 stamp=1", configuration=NOW)).task
        got = [
            (time.time_ns() - int(event.artifact_update.artifact.parts[0].text)) / 1e6
            async for event in watcher.subscribe_to_task(task.id)
            if event.WhichOneof("payload") == "artifact_update"
        ]
        if i:  # the first is the warm-up
            out += got
    return out


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="fault 11: the Redis bus misses the 10 ms p99 cross-replica latency that the PostgreSQL bus "
    "meets (on a loaded machine both miss it: then Redis must stay within 1.5x of PostgreSQL's p99)",
)
@pytest.mark.timeout(180)
async def test_fault11_redis_bus_latency_matches_postgresql(tmp_path: Path) -> None:
    if reason := redis_skip_reason():
        pytest.skip(reason)
    p99 = {}
    for bus in ("postgresql", "redis"):
        async with ChaosCluster(tmp_path / bus, replicas=2, bus=bus, push=False, proxied=False) as c:
            values = await _latencies(c, 5, 100)
        p99[bus] = statistics.quantiles(values, n=100)[98]
    # On a loaded machine neither may meet 10 ms: then Redis must be no worse than 1.5x PostgreSQL.
    assert p99["redis"] < max(10.0, 1.5 * p99["postgresql"]), {k: f"{v:.1f} ms" for k, v in p99.items()}
