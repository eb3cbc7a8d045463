"""Execution leases: one execution per task across every replica.

:class:`LeasedExecutions` is :class:`~a2a_grpc.core._execution.Executions` with a
lease behind ``start``: a new task's lease is taken by the write that creates
it (:class:`~a2a_grpc.cluster._store.NewLease`; none if that write leaves it
terminal and has no push config, whose snapshot write follows); the
execution of a message to an existing task takes it in the store
(:class:`~a2a_grpc.cluster._store.ClusterStore`) before the agent runs, and a
task whose lease another replica holds gets today's "task is busy" error.
The execution carries the lease as its :class:`~a2a_grpc.core.ports.Fence`,
so every task write it makes commits only while the lease holds. The write
that makes the task terminal drops the lease in its own transaction (the
caller is answered at that commit); an execution that ends otherwise
(input-required) releases it as it ends, before its caller is answered, so
the next message to the task is never refused as busy by a lease still
held. Two replicas given the same new, client-chosen task id may both run
the agent: the first creation wins, the other caller gets "task id already
in use".

:class:`Cluster` keeps the leases alive and reaps the dead ones:

- heartbeat: every ``ttl / 3`` seconds one statement extends all of this
  replica's leases; an execution whose lease is gone (a reaper took it over
  while this replica was paused or cut off) is interrupted, and its fenced
  writes fail;
- reaper: every ``reap_interval`` seconds (default ``ttl / 3``) it takes over
  expired leases (a new epoch: the old holder is fenced off from then on),
  ends the old holder's PostgreSQL-bus listening session (a frozen replica's
  session would let the notification queue fill; a replica that was only
  paused listens again) and applies the default policy, marking the task FAILED ("execution lost:
  replica … stopped", :mod:`a2a_grpc.cluster._recovery`) in a write that
  drops the lease.

It also runs the event relay (:mod:`a2a_grpc.cluster._bus`): the server's
bus is a :class:`~a2a_grpc.cluster._bus.ClusterBus` fed by other replicas'
committed events, so SubscribeToTask follows a task running anywhere.
:class:`Cluster` is a :class:`~a2a_grpc.core.features.Feature`: the
composition root builds the bus and the executions through it.

A replica killed mid-execution therefore has its tasks FAILED within ``ttl +
reap_interval`` seconds by any surviving replica, or by itself once it is
restarted (the reaper runs at start).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from a2a_grpc.cluster._bus import ClusterBus, EventRelay, PgEventRelay
from a2a_grpc.cluster._recovery import fail_lost_task
from a2a_grpc.cluster._store import ClusterStore, NewLease, TakenLease, control_message
from a2a_grpc.context import Owner
from a2a_grpc.core._drive import TaskWriter
from a2a_grpc.core._events import Subscription
from a2a_grpc.core._execution import Drive, Execution, Executions, Lease, busy_error
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.core.features import Feature, Kernel
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import Fence, LeaseLostError, StoredTask, TaskKey, task_key
from a2a_grpc.errors import A2AError
from a2a_grpc.types import is_terminal, pb

__all__ = ["Cluster", "ClusterConfig", "LeasedExecutions", "default_replica_id"]

_ACTIVE = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)

log = logging.getLogger("a2a_grpc.cluster")


def default_replica_id() -> str:
    """``HOST-PID-XXXX``: unique per process start."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:4]}"


@dataclass(slots=True)
class ClusterConfig:
    """Cluster mode settings (``a2a-grpc serve --cluster``).

    ``replica_id`` names this replica in leases and status messages (default
    :func:`default_replica_id`); ``lease_ttl`` is how long a lease lives
    without a heartbeat, seconds; ``reap_interval`` how often expired leases
    are looked for (None: ``lease_ttl / 3``); ``event_retention`` how long
    the event log keeps a terminal task's events, seconds (a subscriber
    never needs them once the task is terminal: it gets the snapshot);
    ``bus`` what wakes the other replicas: ``postgresql`` (LISTEN/NOTIFY on
    the store) or ``redis://HOST:PORT`` (Redis Streams)."""

    replica_id: str = ""
    lease_ttl: float = 10.0
    reap_interval: float | None = None
    event_retention: float = 3600.0
    bus: str = "postgresql"

    def __post_init__(self) -> None:
        if not self.replica_id:
            self.replica_id = default_replica_id()
        if self.lease_ttl <= 0:
            raise ValueError("lease_ttl must be positive")
        if self.bus != "postgresql" and not self.bus.startswith(("redis://", "rediss://")):
            raise ValueError(f"unsupported bus {self.bus!r}: use postgresql or redis://HOST:PORT")


class LeasedExecutions(Executions):
    """Executions whose ``start`` takes the task's lease cluster-wide.
    ``control`` sends a control message to every replica (the cluster's bus;
    default: the store's channel); ``observer`` and ``time_limit`` as for
    :class:`~a2a_grpc.core._execution.Executions`."""

    def __init__(
        self,
        drive: Drive,
        writer: TaskWriter,
        store: ClusterStore,
        config: ClusterConfig,
        *,
        control: Callable[[str], Awaitable[None]] | None = None,
        observer: Observer = NO_OBSERVER,
        time_limit: float | None = None,
    ) -> None:
        super().__init__(self._leased(drive), writer.bus, observer=observer, time_limit=time_limit)
        self.writer = writer
        self.store = store
        self.config = config
        self.control = control or store.send_control
        #: lease epoch → execution, for the heartbeat.
        self.leased: dict[int, Execution] = {}
        store.on_lease_dropped = self._dropped

    def _leased(self, drive: Drive) -> Drive:
        async def leased_drive(ex: Execution, ctx: ExecutorContext) -> None:
            try:
                await drive(ex, ctx)
            finally:
                await asyncio.shield(self._release(ex))

        return leased_drive

    def _hold(self, ex: Execution, fence: Fence | None) -> None:
        """``ex`` holds the lease ``fence`` (None: it took none, and may not write again)."""
        if fence is None:
            ex.lease = Lease(Fence(ex.task_id, 0))  # no lease has epoch 0: a later write fails
            return
        ex.lease = Lease(fence, held=True)
        self.leased[fence.epoch] = ex

    def _dropped(self, fence: Fence) -> None:
        """A write of the execution holding ``fence`` dropped its lease."""
        ex = self.leased.pop(fence.epoch, None)
        if ex is not None and ex.lease is not None:
            ex.lease.held = False

    def lost(self, epoch: int) -> Execution | None:
        """The heartbeat found the lease ``epoch`` taken over: its execution
        (None: none here) holds it no more."""
        ex = self.leased.pop(epoch, None)
        if ex is not None and ex.lease is not None:
            ex.lease.held = False
        return ex

    async def _release(self, ex: Execution) -> None:
        lease = ex.lease
        if lease is not None and lease.held:
            lease.held = False
            self.leased.pop(lease.fence.epoch, None)
            try:
                await self.store.release_lease(lease.fence)
            except Exception:  # the reaper drops it once it expires
                log.exception("task %s: could not release its lease", ex.task_id)

    async def start(
        self, ex: Execution, prepare: Callable[[], Awaitable[ExecutorContext]], *, stream: bool
    ) -> None:
        """As :meth:`Executions.start`, with the task's lease: a new task's
        is taken by the write that creates it (:class:`~a2a_grpc.cluster._store.NewLease`;
        none when that write leaves it terminal); an existing task's before
        ``prepare``: UNSUPPORTED_OPERATION ("task is busy") when another
        replica holds it."""
        if ex.existing is None:
            ttl, hold = self.config.lease_ttl, lambda f: self._hold(ex, f)
            # A push config: the creation snapshot is a second write (drive._create).
            always = ex.request.push_config is not None
            ex.lease = Lease(NewLease(ex.task_id, 0, self.config.replica_id, ttl, hold, [], always))
            await super().start(ex, prepare, stream=stream)
            return

        async def leased_prepare() -> ExecutorContext:
            fence = await self.store.acquire_lease(
                ex.task_id, ex.owner, self.config.replica_id, self.config.lease_ttl
            )
            if fence is None:
                raise busy_error(ex.task_id)
            self._hold(ex, fence)
            # Another replica's execution of the task may have ended since
            # the handler read it: count one so that prepare reads it again.
            self.ended += 1
            try:
                return await prepare()
            except BaseException:
                await asyncio.shield(self._release(ex))
                raise

        await super().start(ex, leased_prepare, stream=stream)

    async def start_leased(
        self, ex: Execution, fence: Fence, prepare: Callable[[], Awaitable[ExecutorContext]]
    ) -> None:
        """Starts ``ex`` under ``fence``, a lease already taken (a resumed
        execution, :mod:`a2a_grpc.cluster._resume`): it holds the lease once
        ``prepare`` runs. Raises as :meth:`Executions.start` (busy, closing)."""
        ex.lease = Lease(fence)

        async def holding() -> ExecutorContext:
            self._hold(ex, fence)
            return await prepare()

        await super().start(ex, holding, stream=False)

    def cancel_here(self, key: TaskKey) -> None:
        """Another replica asked for the task ``key`` to be canceled:
        interrupts its execution here, if any (the agent gets
        CancelledError; the drive loop writes CANCELED)."""
        ex = self.get(key)
        if ex is not None and ex.cancel_reason is None:
            self.interrupt(ex, "cancel")

    async def cancel_elsewhere(self, stored: StoredTask, owner: Owner, grace_seconds: float) -> bool:
        """CancelTask of a task whose lease another replica holds: asks it over
        the control channel, waits up to ``grace_seconds`` for the task to end,
        then forces CANCELED (taking the lease over: the holder's later writes
        are fenced off). False when no replica holds the task's lease."""
        task_id = stored.task.id
        if await self.store.lease_holder(owner, task_id) is None:
            return False
        key = task_key(owner, task_id)
        sub = self._bus.subscribe(key)
        try:
            await self.control(control_message("cancel", key))
            fresh = await self.store.get(task_id, owner)  # it may have ended before the subscription
            if fresh is not None and not is_terminal(fresh.task.status.state):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_drain(sub), grace_seconds)
        finally:
            sub.close()
        fresh = await self.store.get(task_id, owner)
        if fresh is not None and not is_terminal(fresh.task.status.state):
            await self._force_cancel(fresh, owner, grace_seconds)
        return True

    async def _force_cancel(self, stored: StoredTask, owner: Owner, grace_seconds: float) -> None:
        fence = await self.store.steal_lease(
            owner, stored.task.id, self.config.replica_id, self.config.lease_ttl
        )
        if fence is None:
            return  # the execution ended meanwhile: the caller reads the task again
        why = f"canceled at the client's request (replica {self.config.replica_id} forced it: "
        why += f"the execution did not stop within {grace_seconds:g} s)"
        log.warning("task %s: %s", stored.task.id, why)
        try:
            done = await fail_lost_task(self.writer, owner, stored, why, fence=fence, canceled=True)
        except LeaseLostError:
            return
        if done is None:  # the task ended meanwhile; else the CANCELED write dropped the lease
            await self.store.release_lease(fence)


def _relay(
    config: ClusterConfig,
    store: ClusterStore,
    bus: ClusterBus,
    on_cancel: Callable[[TaskKey], None],
    on_health: Callable[[bool], Awaitable[None]] | None,
) -> EventRelay:
    """The relay of ``config.bus``."""
    name = config.replica_id
    if config.bus == "postgresql":
        return PgEventRelay(store, bus, name=name, on_cancel=on_cancel, on_health=on_health)
    from a2a_grpc.cluster._redis_bus import RedisEventRelay

    return RedisEventRelay(store, bus, config.bus, name=name, on_cancel=on_cancel, on_health=on_health)


async def _drain(sub: Subscription) -> None:
    async for _event in sub:
        pass


class Cluster(Feature):
    """This replica's part of the cluster, as a Feature of the server: it
    builds the event bus (a :class:`~a2a_grpc.cluster._bus.ClusterBus` fed
    by the relay of ``config.bus``) and the leased executions, and runs the
    relay, the heartbeat and the reaper. ``start`` reaps once, then runs
    both loops; ``stop`` ends them (leases of executions still running are
    released by the executions as they end). ``resumable``: a taken-over
    task's agent is run again (:attr:`AgentExecutor.resumable`);
    ``on_bus_health`` hears when the relay stops and starts listening
    (the server's health)."""

    def __init__(
        self,
        store: ClusterStore,
        config: ClusterConfig,
        *,
        resumable: bool = False,
        on_bus_health: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        store.claimant = config.replica_id
        self.config = config
        self.store = store
        self.resumable = resumable
        self.reaped = 0
        self._on_bus_health = on_bus_health
        self._loops: list[asyncio.Task[None]] = []
        #: Built by the root through :meth:`new_event_bus` and :meth:`new_executions`.
        self.relay: EventRelay | None = None
        self._executions: LeasedExecutions | None = None

    def new_event_bus(self, *, buffer: int, buffer_bytes: int, observer: Observer) -> ClusterBus:
        """The cluster bus, and the relay that feeds it."""
        bus = ClusterBus(buffer=buffer, buffer_bytes=buffer_bytes, observer=observer)
        self.relay = _relay(self.config, self.store, bus, self._cancel_here, self._on_bus_health)
        return bus

    def new_executions(
        self, drive: Drive, writer: TaskWriter, *, observer: Observer, time_limit: float | None
    ) -> LeasedExecutions:
        """The leased executions (control messages over the relay)."""
        control = self.relay.send_control if self.relay is not None else None
        self._executions = LeasedExecutions(
            drive, writer, self.store, self.config, control=control, observer=observer, time_limit=time_limit
        )
        return self._executions

    @property
    def executions(self) -> LeasedExecutions:
        """The leased executions (once built: :meth:`new_executions`)."""
        assert self._executions is not None, "the cluster's executions are not built yet"
        return self._executions

    def _cancel_here(self, key: TaskKey) -> None:
        self.executions.cancel_here(key)

    async def start(self, kernel: Kernel | None = None) -> None:
        """Listens for other replicas' task events, reaps what expired while
        no replica was watching, then starts the heartbeat and reaper loops
        (the reaper also prunes the events of tasks terminal for longer than
        ``event_retention``)."""
        if self.relay is not None:
            await self.relay.start()
        await self.reap()
        loop = asyncio.get_running_loop()
        reap_every = self.config.reap_interval or self.config.lease_ttl / 3
        self._loops = [
            loop.create_task(self._every(self.config.lease_ttl / 3, self.heartbeat), name="a2a-heartbeat"),
            loop.create_task(self._every(reap_every, self.reap), name="a2a-reaper"),
            loop.create_task(self._every(reap_every * 10, self.prune), name="a2a-event-pruner"),
        ]

    async def stop(self) -> None:
        """Ends the heartbeat and reaper loops."""
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._loops = []
        if self.relay is not None:
            await self.relay.stop()

    @staticmethod
    async def _every(seconds: float, step: Callable[[], Awaitable[object]]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await step()
            except Exception:  # a database hiccup: try again next round
                log.exception("cluster: %s failed", getattr(step, "__name__", step))

    async def heartbeat(self) -> None:
        """Extends every lease of this replica; interrupts the executions
        whose lease was taken over meanwhile."""
        held = dict(self.executions.leased)
        alive = await self.store.renew_leases(list(held), self.config.lease_ttl)
        for epoch, ex in held.items():
            if epoch in alive or epoch in self.store.dropping:  # dropping: its final write is in flight
                continue
            if self.executions.lost(epoch) is not None:
                log.warning("task %s: lease %d was taken over; stopping its execution", ex.task_id, epoch)
                self.executions.interrupt(ex, "shutdown")

    async def reap(self) -> int:
        """Takes over expired leases and fails their active tasks
        ("execution lost: replica … stopped"); returns how many it took."""
        taken = await self.store.take_over_expired(self.config.replica_id, self.config.lease_ttl)
        await self._end_relays({lease.previous_replica for lease in taken} - {self.config.replica_id})
        for lease in taken:
            await self._settle(lease)
        self.reaped += len(taken)
        return len(taken)

    async def _end_relays(self, replicas: set[str]) -> None:
        """Ends the PostgreSQL-bus listening sessions of replicas whose leases
        expired (see :meth:`ClusterStore.end_relay_session`)."""
        if self.config.bus != "postgresql":
            return
        for replica in sorted(replicas):
            try:
                if await self.store.end_relay_session(replica):
                    log.warning(
                        "replica %s stopped renewing its leases: ended its event-relay session, "
                        "so that PostgreSQL's notification queue does not fill behind it",
                        replica,
                    )
            except Exception:  # e.g. not allowed to signal that session: the queue is the operator's
                log.exception("cluster: could not end the event-relay session of replica %s", replica)

    async def prune(self) -> int:
        """Deletes the events of tasks terminal for over ``event_retention`` seconds."""
        return await self.store.prune_events(self.config.event_retention)

    async def _settle(self, lease: TakenLease) -> None:
        """The default policy for one taken-over lease: an active task
        becomes FAILED (fenced by the reaper's new epoch); the lease goes."""
        fence = lease.fence
        try:
            stored = await self.store.get(fence.task_id, lease.owner)
            if stored is not None:
                why = f"replica {lease.previous_replica} stopped while running the task"
                if (
                    self.resumable
                    and stored.task.status.state in _ACTIVE
                    and await self._resume(lease, stored)
                ):
                    return  # the resumed execution releases the lease when it ends
                done = await fail_lost_task(self.executions.writer, lease.owner, stored, why, fence=fence)
                if done is not None:
                    log.warning("task %s: execution lost (%s): marked FAILED", fence.task_id, why)
                    return  # the FAILED write dropped the lease
        except LeaseLostError:
            return  # another reaper took it from this one (it was paused too long)
        await self.store.release_lease(fence)

    async def _resume(self, lease: TakenLease, stored: StoredTask) -> bool:
        """Runs a resumable agent again for ``stored`` under the taken-over
        lease; False when it cannot start here (busy, closing)."""
        from a2a_grpc.cluster._resume import resume

        try:
            await resume(self.executions, stored, lease.owner, lease.fence, lease.previous_replica)
        except A2AError as err:
            log.warning("task %s: cannot resume it here (%s); failing it", stored.task.id, err.message)
            return False
        log.warning(
            "task %s: execution lost (replica %s stopped): running the resumable agent again",
            stored.task.id,
            lease.previous_replica,
        )
        return True
