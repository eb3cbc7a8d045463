"""The mixed workload of a chaos run: concurrent clients, each repeating
operations chosen from its seeded random generator on a random replica over
a random binding, recording what they were answered into the run's
:class:`~tests.chaos.invariants.RunRecord`.

Operations (:data:`OPS`, with their weights): a blocking send of a short task;
a return-immediately send of a longer one; a streamed long task (followed to
its end, resubscribing on another replica when the stream breaks); a
multi-turn task (INPUT_REQUIRED, then continued on another replica); a
cancel (a long task, canceled on another replica after a while); a subscribe
on another replica than the one running the task; a push config given with
SendMessage; a push config set on another replica after the task started.
A call that fails (the replica was killed, paused, cut off) is counted by
its error and the operation ends: what was never acknowledged is not owed.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator

from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.chaos.harness import ChaosCluster, ChaosReplica, terminal
from tests.chaos.invariants import Ack, CancelRecord, PushExpectation, RunRecord, SubscriberRecord, state_name

__all__ = ["OPS", "Workload", "chunk_index"]

BINDINGS = ("grpc", "jsonrpc", "rest")
NOW = pb.SendMessageConfiguration(return_immediately=True)
OPS = {
    "blocking": 3,
    "immediate": 2,
    "stream": 2,
    "multiturn": 2,
    "cancel": 2,
    "subscribe": 2,
    "push_inline": 2,
    "push_set": 1,
}


class _Failed(Exception):
    """An operation's call failed: counted, the operation ends."""


def chunk_index(text: str) -> int:
    """The step number of a chaos-agent chunk (``i@replica/pid``), -1 if none."""
    head = text.partition("@")[0]
    return int(head) if head.isdigit() else -1


class Workload:
    """``workers`` clients running operations until ``until`` (``time.monotonic()``)."""

    def __init__(self, cluster: ChaosCluster, run: RunRecord, seed: int, *, workers: int = 6) -> None:
        self.cluster = cluster
        self.run = run
        self.seed = seed
        self.workers = workers
        self._tags = 0
        self.stopping = False

    async def run_until(self, until: float) -> None:
        await asyncio.gather(*(self._worker(i, until) for i in range(self.workers)))

    async def _worker(self, index: int, until: float) -> None:
        rng = random.Random(self.seed * 1000 + index)
        names, weights = list(OPS), list(OPS.values())
        while time.monotonic() < until and not self.stopping:
            op = rng.choices(names, weights)[0]
            self.run.ops[op] += 1
            try:
                await asyncio.wait_for(getattr(self, f"_{op}")(rng), 120)
            except _Failed:
                pass
            except TimeoutError:
                self.run.errors[f"{op}:op_timeout"] += 1

    # ------------------------------------------------------------ helpers
    def _pick(self, rng: random.Random, *, other_than: ChaosReplica | None = None) -> ChaosReplica:
        choices = [r for r in self.cluster.replicas if r is not other_than] or self.cluster.replicas
        return rng.choice(choices)

    async def _client(self, op: str, replica: ChaosReplica, rng: random.Random) -> A2AClient:
        try:
            return await self.cluster.client(replica, rng.choice(BINDINGS))
        except Exception as exc:
            raise self._fail(op, "connect", exc) from None

    def _fail(self, op: str, call: str, exc: BaseException) -> _Failed:
        what = exc.code.name if isinstance(exc, A2AError) else type(exc).__name__
        self.run.errors[f"{op}:{call}:{what}"] += 1
        return _Failed(f"{op} {call}: {exc}")

    async def _send(
        self,
        op: str,
        replica: ChaosReplica,
        rng: random.Random,
        text: str,
        *,
        config: pb.SendMessageConfiguration | None = None,
        task_id: str | None = None,
        timeout: float = 20.0,
    ) -> pb.Task:
        client = await self._client(op, replica, rng)
        try:
            resp = await client.send_message(text, task_id=task_id, configuration=config, timeout=timeout)
        except Exception as exc:
            raise self._fail(op, "send", exc) from None
        task = resp.task
        self.run.acks.append(Ack(task.id, op, time.time(), int(task.status.state), replica.name))
        return task

    def _tag(self, prefix: str) -> str:
        self._tags += 1
        return f"{prefix}{self._tags}"

    # ---------------------------------------------------------- operations
    async def _blocking(self, rng: random.Random) -> None:
        await self._send("blocking", self._pick(rng), rng, f"steps={rng.randint(1, 4)} delay=0.02")

    async def _immediate(self, rng: random.Random) -> None:
        text = f"steps={rng.randint(10, 40)} delay={rng.choice((0.03, 0.05, 0.08))}"
        await self._send("immediate", self._pick(rng), rng, text, config=NOW)

    async def _stream(self, rng: random.Random) -> None:
        replica = self._pick(rng)
        client = await self._client("stream", replica, rng)
        sub = SubscriberRecord("", replica.name)
        seen: list[int] = []
        try:
            stream = client.send_streaming_message(f"steps={rng.randint(10, 30)} delay=0.05")
            async for event in _until_terminal(stream, 90):
                if not sub.task_id:
                    sub.task_id = _task_of(event)
                    self.run.subscribers.append(sub)
                    self.run.acks.append(
                        Ack(sub.task_id, "stream", time.time(), _state_of(event), replica.name)
                    )
                if _note(event, seen):
                    sub.terminal = True
        except Exception as exc:
            sub.error = f"stream: {exc}"
            self._fail("stream", "stream", exc)
        finally:
            sub.attempts.append(seen)
        if sub.task_id and not sub.terminal:
            await self._follow(sub, rng, other_than=replica)

    async def _follow(self, sub: SubscriberRecord, rng: random.Random, *, other_than: ChaosReplica) -> None:
        """Subscribes to ``sub.task_id`` (on another replica than ``other_than``
        first, then another than the last one tried) until a subscription sees
        it terminal, up to 6 attempts a second apart."""
        for _ in range(6):
            replica = self._pick(rng, other_than=other_than)
            other_than = replica
            seen: list[int] = []
            sub.replica = sub.replica or replica.name
            try:
                client = await self.cluster.client(replica, rng.choice(BINDINGS))
                async for event in _until_terminal(client.subscribe_to_task(sub.task_id), 90):
                    if _note(event, seen):
                        sub.terminal = True
            except A2AError as exc:
                sub.error = f"subscribe on {replica.name}: {exc.code.name} {exc.message}"
                self._fail("subscribe", "subscribe", exc)
                if exc.code == ErrorCode.UNSUPPORTED_OPERATION and await self._ended(
                    sub.task_id, replica, rng
                ):
                    sub.terminal = True  # it was terminal already: the snapshot is all there is
            except Exception as exc:
                sub.error = f"subscribe on {replica.name}: {exc!r}"
                self._fail("subscribe", "subscribe", exc)
            finally:
                sub.attempts.append(seen)
            if sub.terminal:
                return
            await asyncio.sleep(1.0)

    async def _ended(self, task_id: str, replica: ChaosReplica, rng: random.Random) -> bool:
        with contextlib.suppress(Exception):
            client = await self.cluster.client(replica, rng.choice(BINDINGS))
            return terminal((await client.get_task(task_id, history_length=0, timeout=10)).status.state)
        return False

    async def _multiturn(self, rng: random.Random) -> None:
        first = self._pick(rng)
        task = await self._send("multiturn", first, rng, "ask")
        if task.status.state != pb.TASK_STATE_INPUT_REQUIRED:
            return
        other = first
        for _ in range(4):
            other = self._pick(rng, other_than=other)
            try:
                await self._send("multiturn", other, rng, "steps=3 delay=0.02", task_id=task.id)
                return
            except _Failed:
                await asyncio.sleep(0.3)  # busy, or that replica is faulted: another one

    async def _cancel(self, rng: random.Random) -> None:
        runner = self._pick(rng)
        task = await self._send("cancel", runner, rng, "steps=200 delay=0.05", config=NOW)
        await asyncio.sleep(rng.uniform(0.2, 1.5))
        record = CancelRecord(task.id, time.time())
        self.run.cancels.append(record)
        other = self._pick(rng, other_than=runner)
        for _ in range(4):
            outcome = await self._cancel_on(other, rng, task.id)
            record.attempts.append((other.name, outcome))
            if not outcome.startswith("error:"):
                return
            await asyncio.sleep(0.5)
            # Retried elsewhere, as a client behind a load balancer would be.
            healthy = [r for r in self.cluster.healthy() if r is not other]
            other = rng.choice(healthy) if healthy else self._pick(rng, other_than=other)

    async def _cancel_on(self, replica: ChaosReplica, rng: random.Random, task_id: str) -> str:
        try:
            client = await self.cluster.client(replica, rng.choice(BINDINGS))
            done = await client.cancel_task(task_id, timeout=15)
        except A2AError as exc:
            self._fail("cancel", "cancel", exc)
            if exc.code == ErrorCode.TASK_NOT_CANCELABLE:
                return "not_cancelable"
            return f"error:{exc.code.name}"
        except Exception as exc:
            self._fail("cancel", "cancel", exc)
            return f"error:{type(exc).__name__}"
        return state_name(done.status.state)

    async def _subscribe(self, rng: random.Random) -> None:
        runner = self._pick(rng)
        task = await self._send("subscribe", runner, rng, "steps=20 delay=0.05", config=NOW)
        sub = SubscriberRecord(task.id, "")
        self.run.subscribers.append(sub)
        await self._follow(sub, rng, other_than=runner)

    async def _push_inline(self, rng: random.Random) -> None:
        tag = self._tag("i")
        hook = pb.TaskPushNotificationConfig(id=tag, url=self.cluster.receiver.url(tag), token=tag)
        config = pb.SendMessageConfiguration(return_immediately=True, task_push_notification_config=hook)
        text = f"steps={rng.randint(3, 10)} delay=0.03"
        task = await self._send("push_inline", self._pick(rng), rng, text, config=config)
        self.run.pushes.append(PushExpectation(task.id, tag, inline=True))

    async def _push_set(self, rng: random.Random) -> None:
        runner = self._pick(rng)
        task = await self._send("push_set", runner, rng, "steps=30 delay=0.05", config=NOW)
        tag = self._tag("s")
        other = self._pick(rng, other_than=runner)
        client = await self._client("push_set", other, rng)
        hook = pb.TaskPushNotificationConfig(
            task_id=task.id, id=tag, url=self.cluster.receiver.url(tag), token=tag
        )
        try:
            await client.create_task_push_notification_config(hook, timeout=10)
            after = await client.get_task(task.id, history_length=0, timeout=10)
        except Exception as exc:
            raise self._fail("push_set", "set", exc) from None
        self.run.pushes.append(
            PushExpectation(task.id, tag, inline=False, expect_terminal=not terminal(after.status.state))
        )


def _task_of(event: pb.StreamResponse) -> str:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.id
    if kind == "status_update":
        return event.status_update.task_id
    if kind == "artifact_update":
        return event.artifact_update.task_id
    return ""


def _state_of(event: pb.StreamResponse) -> int:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return int(event.task.status.state)
    if kind == "status_update":
        return int(event.status_update.status.state)
    return 0


def _note(event: pb.StreamResponse, seen: list[int]) -> bool:
    """Adds the chunk indices ``event`` carries to ``seen``; whether it leaves the task terminal."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        seen.extend(
            chunk_index(p.text) for a in event.task.artifacts if a.artifact_id == "out" for p in a.parts
        )
    elif kind == "artifact_update":
        seen.extend(chunk_index(p.text) for p in event.artifact_update.artifact.parts)
    return terminal(_state_of(event))


async def _until_terminal(
    events: AsyncIterator[pb.StreamResponse], timeout: float
) -> AsyncIterator[pb.StreamResponse]:
    """The events of a stream, which must end within ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    iterator = aiter(events)
    try:
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError("the subscription did not end in time")
            try:
                event = await asyncio.wait_for(anext(iterator), left)
            except StopAsyncIteration:
                return
            yield event
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
