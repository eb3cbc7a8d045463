"""Group commit: the SQL store's writes, many callers to one transaction.

Every write of the store is a *body*: a synchronous function ``body(conn,
*args)`` that runs SQLAlchemy Core statements on ``conn`` (a
:class:`~a2a_grpc.store._sql.raw.SqliteConnection` or
:class:`~a2a_grpc.store._sql.raw.AsyncpgConnection`: both offer
``execute(statement, params)`` like SQLAlchemy's ``Connection``) and returns the
caller's result or raises the caller's error. Callers queue bodies with
:meth:`GroupCommit.submit` and await their own future.

The queue is flushed once per event-loop iteration to one writer (on SQLite a
dedicated thread with its own ``sqlite3`` connection, on PostgreSQL one task
on one asyncpg connection). The writer runs everything it finds queued in
ONE transaction (:func:`run_batch`): all writes queued while the previous
commit ran are committed together, so under load the cost of BEGIN, COMMIT
(and its fsync policy) is shared.

Each caller gets only its own outcome:

- a body decides its own failure before its first write: a compare-and-swap
  UPDATE that matched no row (VersionConflictError), a fence whose lease row
  is gone (LeaseLostError), an ``INSERT ... ON CONFLICT DO NOTHING`` that
  inserted nothing (TaskExistsError) — no database error, so the transaction
  goes on and the other bodies commit (:data:`DECIDED`);
- any other failure of a body (a database error such as a full disk or a
  deadlock victim, a bug) may come after some of its statements: the whole
  transaction is rolled back, that caller gets its error, and the batch runs
  again without it (a second such failure fails the rest of the batch with
  it). On PostgreSQL an error aborts the whole transaction anyway, so this is
  the only way to keep the others' writes;
- the task-count moves of the batch's successful bodies are summed and
  written last, in key order (:meth:`~a2a_grpc.store._sql.tasks.SqlTasks._flush_counts`):
  one statement per batch, and concurrent PostgreSQL batches lock count rows
  in one order (no deadlock between two processes);
- when the COMMIT fails, every caller of that batch whose body had succeeded
  gets the commit's error: nothing of the batch was written. Callers of
  earlier and later batches are not affected.

Why not a SAVEPOINT per write: on PostgreSQL each SAVEPOINT and RELEASE is
one more round trip with its statement overhead (a create would go from one
statement to three); the bodies' order (decide, then write) makes them
unnecessary on the common paths, and the rare undecided failure pays with a
re-run instead.

A caller's future is resolved only after the COMMIT returned, so
"acknowledged" means what the database's commit means: on SQLite with WAL and
``synchronous=NORMAL`` (the default) the transaction is in the WAL file, safe
against a crash of the process (kill -9) but not against a power loss before
the next checkpoint; ``synchronous=FULL`` (``?synchronous=full`` on the store
URL) fsyncs the WAL on every commit. On PostgreSQL it is the server's
``synchronous_commit`` (default ``on``: the commit record is flushed to disk).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from a2a_grpc.core.ports import TaskExistsError, VersionConflictError

__all__ = ["COUNTS_KEY", "GroupCommit", "Job", "Transactions", "WriteConnection", "run_batch"]

log = logging.getLogger("a2a_grpc.store.sql")

#: A writer connection as a body sees it (:mod:`a2a_grpc.store._sql.raw`):
#: ``execute(statement, params)`` and the ``info`` dict, as on SQLAlchemy's
#: ``Connection``.
WriteConnection = Any

#: The errors a body raises only before its first write (a compare-and-swap
#: miss, a lost fence, a taken id): its caller gets the error, and the other
#: bodies of the batch commit as if it had not been there.
DECIDED = (VersionConflictError, TaskExistsError)

#: Where a body's task-count moves go while it runs (``conn.info`` key).
COUNTS_KEY = "a2a_counts"


@dataclass(slots=True)
class Job:
    """One caller's write: ``body(conn, *args)``, and where its outcome goes."""

    future: asyncio.Future[Any]
    body: Callable[..., Any]
    args: tuple[Any, ...]
    result: Any = None
    error: BaseException | None = None
    counts: dict[Any, int] = field(default_factory=dict)


class Transactions(Protocol):
    """The transaction verbs of one writer connection (SQLite or PostgreSQL)."""

    def begin(self) -> None:
        """Starts the batch's transaction."""

    def commit(self) -> None:
        """Commits the transaction."""

    def rollback(self) -> None:
        """Rolls the transaction back (no error when there is none)."""


def run_batch(
    conn: Any, tx: Transactions, jobs: list[Job], finish: Callable[[Any, dict[Any, int]], None]
) -> None:
    """Runs ``jobs``' bodies on ``conn`` in one transaction and records each
    one's ``result`` or ``error`` (see the module docstring); ``finish(conn,
    counts)`` writes the summed count moves before the COMMIT.

    A body that fails with anything but a :data:`DECIDED` error (a database
    error, a bug) may have written part of its statements: the transaction is
    rolled back and the batch runs once more without it. Should a second body
    fail so, the rest of the batch fails with that error."""
    culprit = _attempt(conn, tx, jobs, finish)
    if culprit is None:
        return
    rest = [job for job in jobs if job is not culprit]
    second = _attempt(conn, tx, rest, finish)
    if second is not None and second.error is not None:
        _fail([job for job in rest if job is not second and not isinstance(job.error, DECIDED)], second.error)


def _attempt(
    conn: Any, tx: Transactions, jobs: list[Job], finish: Callable[[Any, dict[Any, int]], None]
) -> Job | None:
    """One transaction over ``jobs``; returns the job whose undecided failure
    rolled it back (the others' outcomes then do not count), else None."""
    for job in jobs:
        job.result, job.error, job.counts = None, None, {}
    try:
        tx.begin()
    except Exception as exc:
        _fail(jobs, exc)
        return None
    counts: dict[Any, int] = {}
    done: list[Job] = []
    for job in jobs:
        conn.info[COUNTS_KEY] = job.counts
        try:
            job.result = job.body(conn, *job.args)
        except DECIDED as exc:  # raised before the body wrote anything
            job.error = exc
            continue
        except Exception as exc:
            job.error = exc
            _rollback(tx)
            return job
        finally:
            conn.info.pop(COUNTS_KEY, None)
        done.append(job)
        for key, n in job.counts.items():
            counts[key] = counts.get(key, 0) + n
    try:
        if done:
            finish(conn, counts)
        tx.commit()
    except Exception as exc:
        _rollback(tx)
        _fail(done, exc)
    return None


def _rollback(tx: Transactions) -> None:
    try:
        tx.rollback()
    except Exception:  # the connection is broken; the next batch finds out
        log.debug("rollback failed", exc_info=True)


def _fail(jobs: list[Job], exc: BaseException) -> None:
    for job in jobs:
        job.result, job.error = None, exc


class GroupCommit:
    """The loop side of the group commit: queues jobs and resolves their
    futures. ``send(jobs)`` hands one flushed batch to the writer, which
    calls :meth:`deliver` (on the loop) once the batch's transaction ended.

    Jobs queued in one event-loop iteration are flushed together; while the
    writer is busy, flushed batches wait in its queue and it takes all of them
    at once (see :class:`SqliteWriterThread` and :class:`AsyncWriter`)."""

    def __init__(self, send: Callable[[list[Job]], None]) -> None:
        self._send = send
        self._pending: list[Job] = []
        self._flush_at: asyncio.Handle | None = None
        #: Transactions committed or rolled back, and writes they carried (stats, tests).
        self.batches = 0
        self.writes = 0

    def submit(self, body: Callable[..., Any], args: tuple[Any, ...]) -> asyncio.Future[Any]:
        """Queues ``body(conn, *args)``; the future holds its result or error."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append(Job(future, body, args))
        if self._flush_at is None:
            self._flush_at = loop.call_soon(self._flush)
        return future

    def flush(self) -> None:
        """Hands what is queued to the writer now (before it stops)."""
        if self._flush_at is not None:
            self._flush_at.cancel()
        self._flush()

    def _flush(self) -> None:
        self._flush_at = None
        jobs, self._pending = self._pending, []
        if jobs:
            self._send(jobs)

    def deliver(self, jobs: list[Job]) -> None:
        """Resolves each job's future with its outcome (on the loop)."""
        self.batches += 1
        self.writes += len(jobs)
        for job in jobs:
            if job.future.done():  # the caller was cancelled meanwhile
                continue
            if job.error is not None:
                job.future.set_exception(job.error)
            else:
                job.future.set_result(job.result)


class SqliteWriterThread:
    """SQLite's writer: one thread owning one ``sqlite3`` connection, taking
    every batch queued since its last transaction into the next one.
    ``connect()`` runs on the thread (the connection never leaves it);
    ``run(conn, jobs)`` runs one transaction (:func:`run_batch`)."""

    def __init__(
        self,
        connect: Callable[[], Any],
        run: Callable[[Any, list[Job]], None],
        loop: asyncio.AbstractEventLoop,
        deliver: Callable[[list[Job]], None],
    ) -> None:
        self._connect, self._run, self._loop, self._deliver = connect, run, loop, deliver
        self._queue: queue.SimpleQueue[list[Job] | None] = queue.SimpleQueue()
        self._ready: asyncio.Future[None] = loop.create_future()
        self._thread = threading.Thread(target=self._main, name="a2a-sqlite-writer", daemon=True)

    async def start(self) -> None:
        """Starts the thread and waits until its connection is open (its
        error, if the database cannot be opened)."""
        self._thread.start()
        await self._ready

    def send(self, jobs: list[Job]) -> None:
        """Queues one batch (any thread)."""
        self._queue.put(jobs)

    async def stop(self) -> None:
        """Lets the thread finish what is queued, close its connection and end."""
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    def _main(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:
            self._loop.call_soon_threadsafe(_settle, self._ready, exc)
            return
        self._loop.call_soon_threadsafe(_settle, self._ready, None)
        try:
            while True:
                jobs, stop = self._take()
                if jobs:
                    try:
                        self._run(conn, jobs)
                    except Exception as exc:  # a bug: the callers must still hear of it
                        _fail(jobs, exc)
                    self._loop.call_soon_threadsafe(self._deliver, jobs)
                if stop:
                    return
        finally:
            conn.close()

    def _take(self) -> tuple[list[Job], bool]:
        """Waits for a batch, then takes every other one already queued."""
        item = self._queue.get()
        if item is None:
            return [], True
        jobs = item
        while not self._queue.empty():  # this thread alone takes from the queue
            more = self._queue.get_nowait()
            if more is None:
                return jobs, True
            jobs = jobs + more
        return jobs, False


def _settle(future: asyncio.Future[None], exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is None:
        future.set_result(None)
    else:
        future.set_exception(exc)


class AsyncWriter:
    """PostgreSQL's writer: one task that runs ``run(jobs)`` (one transaction
    on the writer connection) for everything queued, over and over until the
    queue is empty; what arrives while a transaction runs goes into the next."""

    def __init__(self, run: Callable[[list[Job]], Any], deliver: Callable[[list[Job]], None]) -> None:
        self._run, self._deliver = run, deliver
        self._queued: list[Job] = []
        self._task: asyncio.Task[None] | None = None

    def send(self, jobs: list[Job]) -> None:
        """Queues one batch (on the loop); starts the writer task if idle."""
        self._queued.extend(jobs)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queued:
                jobs, self._queued = self._queued, []
                try:
                    await self._run(jobs)
                except BaseException as exc:  # the connection broke (or we are cancelled)
                    _fail([j for j in jobs if j.error is None], exc)
                    self._deliver(jobs)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                self._deliver(jobs)
        finally:
            self._task = None

    async def stop(self) -> None:
        """Waits for what is queued to be written."""
        while self._task is not None:
            await asyncio.shield(self._task)
