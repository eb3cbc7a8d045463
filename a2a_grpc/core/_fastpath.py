"""The drive loop's fast paths, behind one switch (:data:`enabled`).

Each stores and publishes exactly what the plain path of
:mod:`a2a_grpc.core._drive` does — the same tasks, versions and stream
events — in fewer writes and copies; ``tests/core/test_plain_path.py`` runs
the core scenarios with the switch off and on and compares them.

- **Folding** (:func:`run_agent`, :func:`_ready`): after an artifact update,
  the events the agent yields right after it *without waiting* (a zero-time
  step of its generator, :meth:`_Pull.ready`) go into the same write: an
  artifact followed by the terminal status (the echo agent) is one write,
  and so is a run of chunks. A status update is where an agent says what it
  does next, and the code after it (often the start of slow work) runs once
  it is stored, as on the plain path.
- **Creation with its events** (:func:`_create_with`): a new task and the
  events applied to it are one write (versions 1, 2, ...), not a creation
  then an update.
- **In place** (:func:`_applied`): an appended chunk changes the task the
  execution holds instead of a copy of it (streaming an artifact costs its
  size, not its size squared), and every event does when nobody reads the
  task as it was (no event log, no observer, no listener); the task's size
  is remembered after a chunk, not serialized again.
- **The eager first step** (:func:`run_eagerly`): an execution's first step
  runs inside ``start`` — an agent that answers at once on a store that
  never waits needs no asyncio task and no turn of the event loop.

The switch is for tests: the server always runs with it on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import types
from collections.abc import AsyncIterator, Coroutine, Generator, Sequence
from typing import TYPE_CHECKING, Any

from a2a_grpc.core.hooks import NO_OBSERVER
from a2a_grpc.core.ports import LeaseLostError, StoredTask, TaskExistsError, TaskWrite, VersionConflictError
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol._taskupdate import TaskEvent, apply_event, check_event, open_task, snapshot
from a2a_grpc.types import is_final, is_terminal, pb

if TYPE_CHECKING:
    from a2a_grpc.core._drive import Driver
    from a2a_grpc.core._execution import Execution
    from a2a_grpc.core._executor import ExecutorContext

__all__ = ["enabled", "run_agent", "run_eagerly"]

#: The one switch: False runs the plain path alone (tests).
enabled = True

#: The most events one write carries (an agent that yields without end
#: still has its events stored as it goes).
_MOST_EVENTS = 64
#: The creation snapshot given to a store that does not keep events: it only
#: counts the events of a write (``TaskStore.keeps_events``).
_UNLOGGED = pb.StreamResponse()


async def run_agent(driver: Driver, ex: Execution, ctx: ExecutorContext) -> bool:
    """``Driver._run_agent`` with folding: the events the agent yields
    together are applied together. True when the agent stopped at a reply or
    a terminal task (False: its generator ended)."""
    pull = _Pull(aiter(driver.executor.execute(ctx)))
    progress = ex.progress
    try:
        progress.started = True
        if ex.cancel_reason:  # interrupted before it could start
            raise asyncio.CancelledError
        while True:
            try:
                event = await pull.next()
            except StopAsyncIteration:
                return False
            events = _ready(ex, pull, event)
            progress.applying = True  # (never applied halfway: see the plain loop)
            try:
                await _apply_all(driver, ex, events)
            except Exception:
                if ex.cancel_reason:  # interrupted meanwhile: the interruption wins
                    raise asyncio.CancelledError from None
                raise
            finally:
                progress.applying = False
            current = progress.current
            if progress.reply is not None or (current is not None and is_terminal(current.task.status.state)):
                return True
            if ex.cancel_reason:
                if not pull.waiting:
                    raise asyncio.CancelledError
                # The agent is inside an await (see _ready): it is cancelled
                # there, as when CancelTask comes while the loop waits on it.
                task = asyncio.current_task()
                assert task is not None
                task.cancel()
    finally:
        await pull.aclose()


def _ready(ex: Execution, pull: _Pull, event: object) -> list[object]:
    """``event`` and the events the agent yields right after it without
    waiting, to be stored in one write: looked for after an artifact update
    only (see the module docstring), no more than ``_MOST_EVENTS``, none once
    a cancel is requested. The code after a looked-for artifact runs before
    that artifact is stored; if it waits, the agent is inside that wait
    meanwhile."""
    events = [event]
    while len(events) < _MOST_EVENTS and not ex.cancel_reason:
        if not isinstance(events[-1], pb.TaskArtifactUpdateEvent):
            break
        ready, after = pull.ready()
        if not ready:
            break
        events.append(after)
    return events


async def _apply_all(driver: Driver, ex: Execution, events: Sequence[object]) -> None:
    """Applies the events the agent yielded together: as many as apply in
    one write, then the rest one at a time (so an event refused there ends
    the task FAILED saying why, as on the plain path)."""
    done = await _fold(driver, ex, events) if len(events) > 1 else 0
    for event in events[done:]:
        if done and ex.cancel_reason:  # a cancel came during the write: it wins
            raise asyncio.CancelledError
        await _apply_one(driver, ex, event)
        done += 1


async def _apply_one(driver: Driver, ex: Execution, event: object) -> None:
    """``Driver.apply`` of one event, the creation merged with it and a
    chunk applied in place; anything else as the plain path does."""
    progress = ex.progress
    if progress.reply is None and not isinstance(event, pb.Message):
        if progress.current is not None:
            await _store(driver, ex, (event,))
            return
        req = ex.request
        if ex.existing is None and req.push_config is None:  # (see _fold)
            first = check_event(event, req.task_id, req.context_id)
            if not isinstance(first, pb.Task) and await _create_with(driver, ex, first, (event,)):
                return
    await driver.apply(ex, event)


async def _fold(driver: Driver, ex: Execution, events: Sequence[object]) -> int:
    """Stores the longest run of ``events`` that applies, in one write;
    returns how many it stored (0: none, nothing written)."""
    progress, req = ex.progress, ex.request
    if progress.reply is not None:
        return 0
    if progress.current is not None:
        try:
            return await _store(driver, ex, events)
        except A2AError:  # the first one is refused: applied alone, it says so
            return 0
    # The first write carries the first events for a new task without a
    # webhook (whose creation snapshot is a write of its own).
    if ex.existing is not None or req.push_config is not None or isinstance(events[0], pb.Message):
        return 0
    try:
        first = check_event(events[0], req.task_id, req.context_id)
    except A2AError:
        return 0
    return 0 if isinstance(first, pb.Task) else await _create_with(driver, ex, first, events)


async def _store(driver: Driver, ex: Execution, events: Sequence[object]) -> int:
    """``Driver.store_one`` for a run of events: applies them in order (an
    appended chunk in place), writes the result once and publishes them;
    returns how many it stored: all up to the first one refused, whose
    refusal is raised when it is the first."""
    req, progress, writer = ex.request, ex.progress, driver.writer
    lease = ex.lease
    for _attempt in range(3):
        current = progress.current
        assert current is not None
        was, expected = current.task.status.state, current.version
        known = progress.size
        base = known[1] if known[1] and known[0] == expected else None
        # An appended chunk changes progress.current in place; a lost race
        # replaces progress.current anyway.
        tasks, outs, size = _applied(driver, current.task, base, events, own=True)
        configs = progress.push_configs
        outbox = []
        if configs:
            for i, out in enumerate(outs):
                outbox += writer.outbox(req.owner, req.task_id, configs, expected + 1 + i, out)
        head = events[0]
        chunk = None
        if len(outs) == 1 and isinstance(head, pb.TaskArtifactUpdateEvent) and head.append:
            chunk = head.artifact
        final = tasks[-1]
        fence = None if lease is None else lease.fence
        write = TaskWrite(final, req.owner, expected, outs, outbox, fence, chunk)
        try:
            version = await writer.write(write, was, tasks)
        except (LeaseLostError, TaskExistsError) as exc:
            await driver.refused(ex, exc)
            raise
        except VersionConflictError:
            progress.current = await driver.reread(ex)
            continue
        progress.current = StoredTask(final, version)
        last = events[len(outs) - 1]
        if size and isinstance(last, pb.TaskArtifactUpdateEvent) and last.append:
            progress.size = (version, size)
        driver.publish(ex, version, tasks, outs)
        return len(outs)
    raise A2AError(ErrorCode.INTERNAL, f"task {req.task_id} kept changing under the execution")


async def _create_with(driver: Driver, ex: Execution, first: TaskEvent, events: Sequence[object]) -> int:
    """Stores the new task the first event makes together with the
    ``events`` (the first one first) applied to it, in one write (versions
    1, 2, ...: what the plain path writes in several), and publishes them
    all; returns how many events it stored. 0, with nothing written, when the
    first is refused (too large, or invalid on the task): the task must then
    exist first, to end FAILED saying why; a later refused event is left for
    the caller."""
    req, progress, keeps, bus = ex.request, ex.progress, driver.store.keeps_events, driver.bus
    task = open_task(req.message, None, first)
    # Nobody reads the task as it was before the events (no event log, no
    # observer, no listener): they change it in place, no copy per event.
    alone = not keeps and driver.writer.observer is NO_OBSERVER and not bus.subscriber_count(ex.key)
    try:
        tasks, outs, size = _applied(driver, task, None, events, own=alone, fresh=alone)
    except A2AError:  # the two writes: the task exists, then the event fails it
        return 0
    # The creation snapshot is a copy of the task: made only for a store that keeps it.
    head = snapshot(task) if keeps else _UNLOGGED
    after, lease = tasks[-1], ex.lease
    write = TaskWrite(after, req.owner, 0, (head, *outs), (), None if lease is None else lease.fence)
    try:
        version = await driver.writer.write(write, 0, (task, *tasks))
    except (LeaseLostError, TaskExistsError) as exc:
        await driver.refused(ex, exc)
        raise
    progress.current = StoredTask(after, version)
    progress.push_configs = []
    if size:
        progress.size = (version, size)
    ex.signals.commit()
    state = after.status.state
    if not bus.subscriber_count(ex.key):
        pass  # no listener: nothing to publish
    elif alone:
        # A listener came during the write: the task as it was is gone, so
        # it gets the task as stored, as SubscribeToTask's snapshot.
        bus.publish(ex.key, version, snapshot(after), last=is_terminal(state))
    else:  # the snapshot is a copy: only for a listener
        bus.publish(ex.key, 1, snapshot(task))
        driver.publish(ex, version, tasks, outs)
        return len(outs)  # (publish settled it if final)
    if is_final(state):
        ex.settle()
    return len(outs)


def _applied(
    driver: Driver,
    task: pb.Task,
    base: int | None,
    events: Sequence[object],
    *,
    own: bool,
    fresh: bool = False,
) -> tuple[list[pb.Task], list[pb.StreamResponse], int]:
    """``events`` applied to ``task`` in order, up to the first one refused
    (that refusal is raised when it is the first): the task after each, its
    stream event, and the size of the last task when checked (see
    ``check_size``; ``base`` is ``task``'s size when known). With ``own``,
    ``task`` may be changed in place by an appended chunk (no copy of what
    the task already holds); with ``fresh`` by every event (the tasks then
    are all ``task``: nobody reads it as it was)."""
    tasks: list[pb.Task] = []
    outs: list[pb.StreamResponse] = []
    size = 0
    for event in events:
        chunk = isinstance(event, pb.TaskArtifactUpdateEvent) and event.append
        try:
            checked = driver.check_size(task, base, event)
            after, out = apply_event(task, event, in_place=fresh or (chunk and own))
        except A2AError:
            if not tasks:
                raise
            break
        tasks.append(after)
        outs.append(out)
        size = checked
        task, base, own = after, checked if chunk and checked else None, True
    return tasks, outs, size


class _Pull:
    """The agent's events, as ``async for`` takes them (:meth:`next`), plus
    :meth:`ready`: the next event only if the agent yields it without
    waiting. That runs the agent up to its next ``yield`` or its first real
    wait; in the second case :meth:`next` continues that step later, as an
    ``await`` would have (a cancel then reaches the agent inside that wait).
    The agent's end or failure met by ``ready`` is raised by ``next``."""

    __slots__ = ("_agen", "_error", "_step", "_waits_on")

    def __init__(self, agen: AsyncIterator[object]) -> None:
        self._agen = agen
        self._step: Generator[Any, Any, Any] | None = None
        self._waits_on: Any = None
        self._error: BaseException | None = None

    @property
    def waiting(self) -> bool:
        """The agent is inside a wait that :meth:`ready` began."""
        return self._step is not None

    def ready(self) -> tuple[bool, object]:
        """(True, the next event) when the agent yields it at once; else
        (False, None) and :meth:`next` gives what comes."""
        step = self._agen.__anext__().__await__()
        try:
            waits_on = step.send(None)
        except StopIteration as done:
            return True, done.value
        except (Exception, asyncio.CancelledError) as exc:  # the end, or the agent failed: next raises it
            self._error = exc
            return False, None
        self._step, self._waits_on = step, waits_on
        return False, None

    async def next(self) -> object:
        """The next event; raises StopAsyncIteration at the agent's end and
        whatever the agent raised."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        if self._step is None:
            return await anext(self._agen)
        step, waits_on = self._step, self._waits_on
        self._step = self._waits_on = None
        return await _resume(step, waits_on)

    async def aclose(self) -> None:
        """Closes the agent's generator (inside a wait: at that wait)."""
        if self._step is not None:
            step, self._step = self._step, None
            with contextlib.suppress(Exception, GeneratorExit, asyncio.CancelledError):
                step.throw(GeneratorExit)
        aclose = getattr(self._agen, "aclose", None)
        if aclose is not None:
            try:  # noqa: SIM105 (not contextlib.suppress: it costs ~4k instructions per execution)
                await aclose()
            except (Exception, asyncio.CancelledError):
                pass


@types.coroutine
def _resume(step: Generator[Any, Any, Any], waits_on: Any) -> Generator[Any, Any, Any]:
    """Continues an agent step that :meth:`_Pull.ready` began, exactly as
    ``await`` would have: what it waits on goes to the event loop, what the
    loop sends or throws (a cancel) goes back into it."""
    while True:
        try:
            sent = yield waits_on
        except BaseException as exc:
            try:
                waits_on = step.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                waits_on = step.send(sent)
            except StopIteration as done:
                return done.value


def run_eagerly(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None] | None:
    """Runs ``coro``'s first step now, in a context of its own (as a task's
    step would run), and the rest, if it waits, in a task (named ``name``)
    that continues in that context: that task, or None when ``coro`` ended
    without waiting (an agent that answers at once on a store that never
    waits: no task, no extra turn of the event loop)."""
    context = contextvars.copy_context()
    try:
        waits_on = context.run(coro.send, None)
    except StopIteration:
        return None
    rest = _Begun(coro, waits_on)
    return asyncio.get_running_loop().create_task(rest, name=name, context=context)


_NOTHING: Any = object()


class _Begun(Coroutine[Any, Any, None]):
    """A coroutine whose first step ran (it waits on ``waits_on``), as the
    coroutine of a task: the task's first step hands ``waits_on`` to the
    event loop; a cancel that comes before it goes into the coroutine, at
    that wait, as it would have in a task that started it."""

    __slots__ = ("_coro", "_waits_on")

    def __init__(self, coro: Coroutine[Any, Any, None], waits_on: Any) -> None:
        self._coro = coro
        self._waits_on = waits_on

    def send(self, value: Any) -> Any:
        waits_on, self._waits_on = self._waits_on, _NOTHING
        return self._coro.send(value) if waits_on is _NOTHING else waits_on

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._waits_on = _NOTHING
        return self._coro.throw(typ if val is None else val)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a begun execution is run by its task, not awaited")
