"""Push-notification delivery: the outbox worker (spec §4.3.3, §13.2; digest §11).

The request handler writes one :class:`~a2a_grpc.core.ports.OutboxEntry` per
push config of a task for every task update, in the same store transaction as
the update, then calls :meth:`PushDispatcher.wake`. This module turns those
rows into HTTP POSTs:

* **What is sent** — ``POST {config.url}`` with the stored event in the
  dialect the config was registered in (legacy digest C21): for A2A 1.0 the
  ProtoJSON of the ``StreamResponse`` (camelCase names, enum names; a NaN or
  infinite number in a data value is ``null``), ``Content-Type:
  application/a2a+json``; for another dialect the body its encoder makes
  (the ``bodies`` given to :meth:`PushDispatcher.start`: the server gives
  the legacy dialects', :mod:`a2a_grpc.dialects._push` — for A2A 0.3 the bare
  v0.3 event, ``Content-Type: application/json``); a dialect without one
  gets the v1.0 body. Then
  ``Authorization: {scheme} {credentials}`` when the
  config has ``authentication``, ``X-A2A-Notification-Token`` when it has a
  ``token``, and ``A2A-Notification-Id: {event_id}`` — stable across retries so
  a receiver can drop duplicates (delivery is at-least-once).
* **Ordered** — per (task id, config id) one event at a time, in outbox order:
  a later event is never sent before an earlier one was delivered or declared
  dead. Different pairs are delivered concurrently (``max_concurrency``).
* **Durable** — outcomes are written back to the outbox; after a restart the
  pending rows are simply delivered then. A pair whose head is waiting for a
  retry keeps its later rows waiting too, in the store (their
  ``next_attempt_at`` is moved to the head's), so the order survives restarts.
* **Retries** — timeouts, connection/DNS errors, 408, 429 and 5xx are retried
  with exponential backoff and full jitter (``uniform(0, min(max_backoff,
  base * 2**(attempt-1)))``); a ``Retry-After`` (seconds or HTTP date) replaces
  the computed delay, capped at ``max_backoff_seconds``. After
  ``max_attempts`` attempts the row becomes ``dead`` (kept in the store,
  logged, counted). Other 4xx and 3xx (redirects are never followed: the
  receiver must register its final URL) are dead at once, as is a target
  refused by the SSRF guard at delivery time.
* **Safe** — the config is read from the store at delivery time (a deleted
  config drops its rows without a POST); its URL goes through the SSRF guard
  again and aiohttp connects only to addresses the guard's resolver checked
  (:mod:`a2a_grpc.push._ssrf`).
* **Observable** — ``logging.getLogger("a2a_grpc.push")`` records attempts
  (DEBUG), deliveries (INFO), retries and dead letters (WARNING; a dead
  letter also counts in ``a2a_push_dead_letters_total``) with task id,
  config id, event id and the target host — never credentials, tokens or
  the URL's path/query; :attr:`PushDispatcher.stats` counts them.

One dispatcher per store: the outbox has no claim/lease, so two processes
draining the same store would both send (receivers would see duplicates with
the same notification id) — except in cluster mode, where the cluster store's
``outbox_due`` returns only the rows of the (task, config) pairs this replica
claimed (:mod:`a2a_grpc.cluster._store`), so every replica runs a dispatcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import aiohttp
from google.protobuf.message import DecodeError

from a2a_grpc.context import Owner
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import V1_DIALECT, OutboxEntry, OutboxRecord, PushConfigStore, PushOutbox
from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.protocol import protojson
from a2a_grpc.push._ssrf import (
    AddressPolicy,
    BlockedAddressError,
    GetAddrInfo,
    GuardedResolver,
    UnsafeURLError,
    header_value_problem,
    scheme_problem,
)
from a2a_grpc.types import pb

__all__ = [
    "BODIES",
    "CONTENT_TYPE",
    "NOTIFICATION_ID_HEADER",
    "TOKEN_HEADER",
    "BodyEncoder",
    "DeliveryStore",
    "PushDispatcher",
]

log = logging.getLogger("a2a_grpc.push")

#: Media type of a push-notification body (spec §4.3.3).
CONTENT_TYPE = "application/a2a+json"
#: Header carrying ``TaskPushNotificationConfig.token`` (design.md, ambiguity A9).
TOKEN_HEADER = "X-A2A-Notification-Token"
#: Header carrying the outbox event id, stable across retries.
NOTIFICATION_ID_HEADER = "A2A-Notification-Id"

_Pair = tuple[Owner, str, str]  # (the task's owner, task_id, config_id): task ids are per owner


def _pair(entry: OutboxEntry) -> _Pair:
    """The (task, config) pair whose deliveries go out in order."""
    return (entry.owner, entry.task_id, entry.config_id)


# Pending rows read once at start() to learn which pairs wait on a retry.
_RECOVERY_SCAN_LIMIT = 10_000
# bytes of a webhook's answer read before the connection is released
_MAX_ANSWER_BYTES = 64 * 1024
# far enough in the future to read every pending row, finite for every SQL backend
_FOREVER_SECONDS = 1e9


class DeliveryStore(PushOutbox, PushConfigStore, Protocol):
    """What the dispatcher uses of a store: the outbox, and the configs it
    delivers to."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    state: str  # "delivered", "dead" or "pending" (retry)
    next_attempt_at: float
    error: str = ""


class PushDispatcher:
    """Delivers the push outbox of ``store``; implements the handler's ``PushSink``.

    ``allow`` extends the SSRF allow-list (CIDRs, addresses, host names,
    ``*.suffix``; ValueError for anything else). ``timeout_seconds`` bounds
    one POST, from resolving the host to reading the answer (spec §13.2
    suggests 10–30 s). ``max_attempts`` counts every POST of one event, the first included.
    Backoff bounds are in seconds. ``max_concurrency`` bounds the pairs
    (task, config) delivered at once and the open connections.
    ``poll_interval_seconds`` is how often the outbox is read without a
    :meth:`wake`; ``batch_size`` how many due rows one read returns.
    ``getaddrinfo`` replaces the DNS resolver (tests).

    Lifecycle: ``await start()`` on the serving loop (after ``store.open()``),
    ``await stop()`` before ``store.close()``; the server starts it with its
    observer and the dialects' push bodies (see :meth:`start`).
    """

    def __init__(
        self,
        store: DeliveryStore,
        *,
        allow: Sequence[str] = (),
        timeout_seconds: float = 10.0,
        max_attempts: int = 8,
        base_backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 300.0,
        max_concurrency: int = 32,
        poll_interval_seconds: float = 1.0,
        batch_size: int = 512,
        getaddrinfo: GetAddrInfo | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if timeout_seconds <= 0 or poll_interval_seconds <= 0:
            raise ValueError("timeout_seconds and poll_interval_seconds must be positive")
        if base_backoff_seconds < 0 or max_backoff_seconds < base_backoff_seconds:
            raise ValueError("need 0 <= base_backoff_seconds <= max_backoff_seconds")
        self._store = store
        self.policy = AddressPolicy(allow, getaddrinfo=getaddrinfo, resolve_timeout_seconds=timeout_seconds)
        self.timeout_seconds = timeout_seconds
        self.max_attempts = max_attempts
        self.base_backoff_seconds = base_backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.max_concurrency = max_concurrency
        self.poll_interval_seconds = poll_interval_seconds
        self.batch_size = batch_size
        #: Counters since construction: attempts (POSTs started), delivered,
        #: retried (failed attempts scheduled again), dead, dropped (config gone).
        self.stats: dict[str, int] = {"attempts": 0, "delivered": 0, "retried": 0, "dead": 0, "dropped": 0}
        self._observer: Observer = NO_OBSERVER
        self._bodies: Mapping[str, BodyEncoder] = BODIES
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None
        self._wakeup = asyncio.Event()
        self._workers: dict[_Pair, asyncio.Task[None]] = {}
        # pair -> (when its head is retried, the head's seq)
        self._parked: dict[_Pair, tuple[float, int]] = {}
        # Rows read while a pair's worker was running may be stale (already
        # delivered): a read ignores pairs whose worker finished after it began.
        self._epoch = 0
        self._finished: dict[_Pair, int] = {}

    # --- PushSink ---------------------------------------------------------------

    async def check_config(self, config: pb.TaskPushNotificationConfig) -> None:
        """Validates a config before it is stored (Create, and the config inline
        in ``SendMessageConfiguration``).

        Raises ``A2AError(INVALID_PARAMS)`` with one field violation per
        problem: ``url`` (not http/https, userinfo, bad host, a non-canonical
        IPv4 spelling, a host that does not resolve or resolves to a blocked
        address — spec §13.2), ``authentication.scheme`` (not an HTTP token),
        ``authentication.credentials`` and ``token`` (control characters such
        as CR/LF, or non-ASCII: they become HTTP headers)."""
        violations: list[FieldViolation] = []
        try:
            await self.policy.check_url(config.url)
        except UnsafeURLError as err:
            violations.append(FieldViolation("url", str(err)))
        if config.HasField("authentication"):
            problem = scheme_problem(config.authentication.scheme)
            if problem:
                violations.append(FieldViolation("authentication.scheme", problem))
            problem = header_value_problem(config.authentication.credentials)
            if problem:
                violations.append(FieldViolation("authentication.credentials", problem))
        if config.token:
            problem = header_value_problem(config.token)
            if problem:
                violations.append(FieldViolation("token", problem))
        if violations:
            raise A2AError.invalid_params(*violations)

    def wake(self) -> None:
        """Says new outbox rows were committed: the worker reads the outbox now
        instead of at its next poll. Safe to call from any thread, before
        :meth:`start` and after :meth:`stop` (then it does nothing)."""
        loop = self._loop
        if loop is None or self._runner is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._wakeup.set()
        else:
            loop.call_soon_threadsafe(self._wakeup.set)

    # --- lifecycle --------------------------------------------------------------

    async def start(
        self, *, observer: Observer = NO_OBSERVER, bodies: Mapping[str, BodyEncoder] | None = None
    ) -> None:
        """Opens the HTTP client and starts the delivery loop. Idempotent.

        ``observer`` wraps each POST of this run and hears of each outcome
        (metrics, spans: :mod:`a2a_grpc.telemetry`); ``bodies`` encode the
        bodies of configs registered in other dialects than v1.0 (dialect →
        encoder, :data:`BodyEncoder`). Rows left pending by an earlier
        process are delivered from here on."""
        if self._runner is not None:
            return
        self._observer = observer
        self._bodies = {**BODIES, **(bodies or {})}
        self._loop = asyncio.get_running_loop()
        self._wakeup = asyncio.Event()
        connector = aiohttp.TCPConnector(
            resolver=GuardedResolver(self.policy),
            use_dns_cache=False,  # every new connection resolves and checks again
            limit=self.max_concurrency,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.timeout_seconds),
            trust_env=False,  # never route webhooks through an environment proxy
            headers={"User-Agent": "a2a-grpc-push/1.0"},
        )
        try:
            await self._recover()
        except Exception:
            log.exception("push: reading pending deliveries at start failed; continuing")
        self._runner = asyncio.create_task(self._run(), name="a2a-push-dispatcher")

    async def stop(self) -> None:
        """Stops the loop, cancels deliveries in flight (their rows stay
        pending and are sent again after a restart) and closes the client.
        Idempotent."""
        runner, self._runner = self._runner, None
        tasks = [runner] if runner is not None else []
        tasks += self._workers.values()
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # stop() itself is being cancelled
        self._workers.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None

    # --- the loop ---------------------------------------------------------------

    async def _recover(self) -> None:
        """Learns which pairs have a head waiting for a retry, so their later
        rows (due now) are not sent before it."""
        now = time.time()
        rows = await self._store.outbox_due(now + _FOREVER_SECONDS, _RECOVERY_SCAN_LIMIT)
        heads: dict[_Pair, OutboxRecord] = {}
        for rec in rows:
            heads.setdefault(_pair(rec.entry), rec)
        for pair, head in heads.items():
            if head.next_attempt_at > now:
                self._parked[pair] = (head.next_attempt_at, head.seq)
        if rows:
            log.info("push: %d pending deliveries found at start", len(rows))

    async def _run(self) -> None:
        while self._runner is not None:  # stop() clears it first
            self._wakeup.clear()
            try:
                delay = await self._poll()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception(
                    "push: reading the outbox failed; retrying in %.1fs", self.poll_interval_seconds
                )
                delay = self.poll_interval_seconds
            if delay > 0:
                # asyncio.timeout, not wait_for: on 3.11 a stop() landing while
                # wait_for tears down its inner task could leave stop() hanging.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._wakeup.wait()

    async def _poll(self) -> float:
        """Starts workers for due pairs; returns how long to sleep at most."""
        free = self.max_concurrency - len(self._workers)
        if free > 0:
            started = self._epoch
            now = time.time()
            groups: dict[_Pair, list[OutboxRecord]] = {}
            rows = await self._store.outbox_due(now, self.batch_size)
            for rec in rows:
                groups.setdefault(_pair(rec.entry), []).append(rec)
            for pair, recs in groups.items():
                if pair in self._workers or self._finished.get(pair, 0) > started:
                    continue  # being sent, or read mid-send (stale): the worker's end wakes the loop
                parked = self._parked.get(pair)
                if parked is not None:
                    until, head_seq = parked
                    if until > now:
                        await self._defer([r for r in recs if r.seq > head_seq], until)
                        continue
                    del self._parked[pair]
                if free == 0:
                    break  # a finishing worker wakes the loop
                self._workers[pair] = asyncio.create_task(self._deliver_pair(pair, recs))
                free -= 1
            if len(rows) < self.batch_size:
                # Every due row was read: a pair whose retry time has come but
                # has no due row has nothing left (its config was deleted).
                for pair in [
                    p
                    for p, (until, _) in self._parked.items()
                    if until <= now and p not in groups and p not in self._workers
                ]:
                    del self._parked[pair]
            for pair in [p for p, e in self._finished.items() if e <= started]:
                del self._finished[pair]
        now = time.time()
        delay = self.poll_interval_seconds
        upcoming = [until for until, _ in self._parked.values() if until > now]
        if upcoming:
            delay = min(delay, min(upcoming) - now)
        return max(delay, 0.0)

    async def _defer(self, recs: Sequence[OutboxRecord], until: float) -> None:
        """Keeps rows behind their pair's head, durably (survives a restart)."""
        for rec in recs:
            if rec.next_attempt_at < until:
                await self._store.outbox_mark(
                    rec.seq,
                    state="pending",
                    attempts=rec.attempts,
                    next_attempt_at=until,
                    last_error=rec.last_error or "waiting for an earlier event of the same task and config",
                )

    async def _deliver_pair(self, pair: _Pair, recs: list[OutboxRecord]) -> None:
        """Sends one pair's rows in order; stops at the first that must wait."""
        rec: OutboxRecord | None = None
        try:
            for i, rec in enumerate(recs):
                outcome = await self._deliver(rec)
                if outcome.state == "pending":
                    self._parked[pair] = (outcome.next_attempt_at, rec.seq)
                    await self._defer(recs[i + 1 :], outcome.next_attempt_at)
                    break
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("push: delivery worker failed task=%s config=%s", pair[1], pair[2])
            if rec is not None:
                self._parked[pair] = (time.time() + self.poll_interval_seconds, rec.seq - 1)
        finally:
            self._workers.pop(pair, None)
            self._epoch += 1
            self._finished[pair] = self._epoch
            self._wakeup.set()

    # --- one delivery -----------------------------------------------------------

    async def _deliver(self, rec: OutboxRecord) -> _Outcome:
        entry = rec.entry
        target = await self._store.get_push_target(entry.owner, entry.task_id, entry.config_id)
        if target is None:
            self.stats["dropped"] += 1
            self._observer.push_outcome("dropped")
            log.info(
                "push: dropped task=%s config=%s event=%s: the config no longer exists",
                entry.task_id,
                entry.config_id,
                entry.event_id,
            )
            out = _Outcome("delivered", time.time(), "dropped: the push config no longer exists")
            await self._mark(rec, out, rec.attempts)
            return out
        attempt = rec.attempts + 1
        outcome, host = await self._post(rec, *target, attempt)
        await self._mark(rec, outcome, attempt)
        ids = (entry.task_id, entry.config_id, entry.event_id, host, attempt)
        self._observer.push_outcome("retried" if outcome.state == "pending" else outcome.state)
        if outcome.state == "delivered":
            self.stats["delivered"] += 1
            log.info("push: delivered task=%s config=%s event=%s host=%s attempt=%d", *ids)
        elif outcome.state == "pending":
            self.stats["retried"] += 1
            log.warning(
                "push: attempt failed, retrying in %.2fs task=%s config=%s event=%s host=%s attempt=%d: %s",
                max(0.0, outcome.next_attempt_at - time.time()),
                *ids,
                outcome.error,
            )
        else:
            self.stats["dead"] += 1
            log.warning(
                "push: dead letter task=%s config=%s event=%s host=%s attempts=%d: %s", *ids, outcome.error
            )
        return outcome

    async def _mark(self, rec: OutboxRecord, out: _Outcome, attempts: int) -> None:
        await self._store.outbox_mark(
            rec.seq,
            state=out.state,
            attempts=attempts,
            next_attempt_at=out.next_attempt_at,
            last_error=out.error,
        )

    async def _post(
        self, rec: OutboxRecord, config: pb.TaskPushNotificationConfig, dialect: str, attempt: int
    ) -> tuple[_Outcome, str]:
        """One POST; never raises (except cancellation)."""
        try:
            target = self.policy.parse_url(config.url)
        except UnsafeURLError as err:
            return self._dead(f"refused by the SSRF guard: {err}"), "?"
        host = target.host
        try:
            content_type, body = _body(rec.entry.payload, dialect, self._bodies)
        except (DecodeError, ValueError, protojson.EncodeError, A2AError) as err:
            return self._dead(f"the stored event cannot be encoded: {err}"), host
        headers = {"Content-Type": content_type, NOTIFICATION_ID_HEADER: rec.entry.event_id}
        if config.HasField("authentication") and config.authentication.scheme:
            auth = config.authentication
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}".rstrip()
        if config.token:
            headers[TOKEN_HEADER] = config.token
        assert self._session is not None
        self.stats["attempts"] += 1
        log.debug(
            "push: attempt %d task=%s config=%s event=%s host=%s",
            attempt,
            rec.entry.task_id,
            rec.entry.config_id,
            rec.entry.event_id,
            host,
        )
        try:
            with self._observer.push_delivery(rec.entry, headers):
                async with self._session.post(
                    target.url, data=body, headers=headers, allow_redirects=False
                ) as resp:
                    status = resp.status
                    self._observer.push_response(status)
                    retry_after = resp.headers.get("Retry-After")
                    # A short answer is read so the connection can be reused; a
                    # longer one is not waited for (the connection is closed).
                    await resp.content.read(_MAX_ANSWER_BYTES)
        except BlockedAddressError as err:
            return self._dead(f"refused by the SSRF guard at delivery: {err}"), host
        except aiohttp.ClientConnectorDNSError as err:
            return self._retry(attempt, f"DNS lookup failed: {_os_error(err)}"), host
        except aiohttp.ClientConnectorError as err:
            return self._retry(attempt, f"connection failed: {_os_error(err)}"), host
        except TimeoutError:
            return self._retry(attempt, f"timed out after {self.timeout_seconds:g}s"), host
        except (aiohttp.ClientError, OSError) as err:
            # the type only: some aiohttp errors print the URL (with its query)
            return self._retry(attempt, f"transport error ({type(err).__name__})"), host
        if 200 <= status < 300:
            return _Outcome("delivered", time.time()), host
        if status in (408, 429) or status >= 500:
            return self._retry(attempt, f"HTTP {status}", _retry_after_seconds(retry_after)), host
        if 300 <= status < 400:
            return self._dead(f"HTTP {status}: redirects are not followed"), host
        return self._dead(f"HTTP {status}"), host

    def _dead(self, error: str) -> _Outcome:
        return _Outcome("dead", time.time(), error)

    def _retry(self, attempt: int, error: str, retry_after: float | None = None) -> _Outcome:
        if attempt >= self.max_attempts:
            return self._dead(f"{error} (gave up after {attempt} attempts)")
        if retry_after is not None:
            delay = min(retry_after, self.max_backoff_seconds)
        else:
            cap = min(self.max_backoff_seconds, self.base_backoff_seconds * 2 ** (attempt - 1))
            delay = random.uniform(0, cap)
        return _Outcome("pending", time.time() + delay, error)


#: One dialect's push body: (Content-Type, body) of a ``StreamResponse`` (as
#: ProtoJSON, :func:`a2a_grpc.protocol.protojson.to_dict`).
BodyEncoder = Callable[[dict[str, Any]], tuple[str, bytes]]


def _v1_body(event: dict[str, Any]) -> tuple[str, bytes]:
    return CONTENT_TYPE, protojson.dumps(event).encode()


#: The push body of each dialect a config may be registered in (C21): here
#: v1.0's; the others come from the dialects (:meth:`PushDispatcher.start`).
#: A dialect without an entry (e.g. one a newer release recorded) gets the
#: v1.0 body.
BODIES: Mapping[str, BodyEncoder] = {V1_DIALECT: _v1_body}


def _body(
    payload: bytes, dialect: str = V1_DIALECT, bodies: Mapping[str, BodyEncoder] = BODIES
) -> tuple[str, bytes]:
    """(Content-Type, body) of a serialized ``StreamResponse`` for a webhook
    registered in ``dialect``, encoded by ``bodies[dialect]`` (the v1.0 body
    when it has none). Encoded by :mod:`a2a_grpc.protocol.protojson`, so a NaN
    or infinite number in a data value is ``null`` rather than a failure."""
    event = pb.StreamResponse.FromString(payload)
    if event.WhichOneof("payload") is None:
        raise ValueError("the StreamResponse is empty")
    return bodies.get(dialect, _v1_body)(protojson.to_dict(event))


def _retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delay-seconds or an HTTP date
    (RFC 9110 §10.2.3); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _os_error(err: aiohttp.ClientConnectorError) -> str:
    os_error = err.os_error
    return _short(os_error.strerror or str(os_error) or type(os_error).__name__)


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."
