"""Per-caller limits: request rate, concurrent executions, execution time
(issue 11 item 5), and the rate of failed authentications per peer.

Configured in the auth file's ``[limits]`` table (docs/auth.md) and per API
key (``rate``, ``concurrency``); :class:`Limits` holds them.

* :class:`RequestLimits` (the chain's *limits* slot, right after
  authentication): every call of a principal counts against its rate — a
  sliding (moving) window of the ``limits`` package, in memory or in Redis
  (``storage = "redis://..."``) so that replicas share it; a SendMessage or
  SendStreamingMessage while the caller already has ``concurrency`` executions
  running in this process is refused.
* :class:`AuthFailureLimits` (just ahead of authentication): each
  UNAUTHENTICATED answer counts against the caller's peer address; once over
  ``auth_failures`` the peer is refused before its credential is even read.
* ``execution_timeout``: an execution running longer is interrupted and its
  task ends FAILED (``DEADLINE_EXCEEDED: ...`` in the status message;
  :class:`a2a_grpc.core._execution.Executions` ``time_limit``).

Every refusal is :class:`RateLimited`: RESOURCE_EXHAUSTED with a
``google.rpc.RetryInfo`` detail, a ``retry-after`` trailer on gRPC and a
``Retry-After`` header on both HTTP bindings (429 on REST; JSON-RPC keeps
HTTP 200, design.md). Needs the ``limits`` package (extra ``a2a-grpc[limits]``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message as ProtoMessage
from google.rpc import error_details_pb2

from a2a_grpc.auth._base import AuthConfigError
from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.errors import A2AError, ErrorCode

__all__ = [
    "RETRY_AFTER",
    "AuthFailureLimits",
    "Limits",
    "RateLimited",
    "RequestLimits",
    "limit_interceptors",
    "limits_from_mapping",
    "parse_rate",
]

#: The gRPC trailer (and HTTP header, through the gateway) saying when to retry.
RETRY_AFTER = "retry-after"
#: The RPCs that start an execution (the concurrency limit applies to them).
STARTS_EXECUTION = frozenset({"SendMessage", "SendStreamingMessage"})


class RateLimited(A2AError):
    """RESOURCE_EXHAUSTED with ``google.rpc.RetryInfo{retry_delay}`` among the
    details and ``retry-after`` (whole seconds) in the trailing metadata."""

    def __init__(self, message: str, retry_after: float, *, limit: str) -> None:
        super().__init__(ErrorCode.RESOURCE_EXHAUSTED, message, metadata={"limit": limit})
        self.retry_after = max(1, math.ceil(retry_after))
        self.trailing_metadata: tuple[tuple[str, str], ...] = ((RETRY_AFTER, str(self.retry_after)),)

    def details(self) -> list[any_pb2.Any]:
        """ErrorInfo, then RetryInfo."""
        info = any_pb2.Any()
        info.Pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=self.retry_after)))
        return [*super().details(), info]


def parse_rate(text: Any, where: str) -> Any:
    """A ``limits`` rate item from ``"100/minute"`` (``N/second|minute|hour|day``,
    also ``"10 per 5 seconds"``). Raises AuthConfigError naming ``where``."""
    from limits import parse

    if not isinstance(text, str):
        raise AuthConfigError(f'{where} must be a rate such as "100/minute"')
    try:
        return parse(text)
    except ValueError:
        raise AuthConfigError(f'{where} must be a rate such as "100/minute" (got {text!r})') from None


def _positive(value: Any, where: str, kind: type = int) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int) or value <= 0:
        raise AuthConfigError(f"{where} must be a positive {'number' if kind is float else 'integer'}")
    return value


@dataclass(frozen=True, slots=True)
class Limits:
    """The ``[limits]`` table: default ``rate`` (text, e.g. ``"100/minute"``) and
    ``concurrency`` per caller (None: unlimited), ``execution_timeout`` in
    seconds, ``auth_failures`` per peer, and the ``storage`` URI of the
    counters (``memory://`` or ``redis://host:port/db``)."""

    rate: str | None = None
    concurrency: int | None = None
    execution_timeout: float | None = None
    auth_failures: str | None = None
    storage: str = "memory://"

    def summary(self) -> str:
        """A few words for the start-up line (no secret: a Redis URL's password is left out)."""
        parts = [
            f"rate {self.rate}" if self.rate else "",
            f"concurrency {self.concurrency}" if self.concurrency else "",
        ]
        parts += [f"execution timeout {self.execution_timeout:g} s" if self.execution_timeout else ""]
        parts += [f"auth failures {self.auth_failures} per peer" if self.auth_failures else ""]
        where = "memory" if self.storage.startswith("memory") else "redis " + self.storage.rsplit("@", 1)[-1]
        return "limits: " + (", ".join(p for p in parts if p) or "per key only") + f" (counters in {where})"


def limits_from_mapping(table: Any) -> Limits:
    """:class:`Limits` from the ``[limits]`` table. Raises AuthConfigError."""
    if not isinstance(table, Mapping):
        raise AuthConfigError("limits must be a table ([limits])")
    unknown = set(table) - {"rate", "concurrency", "execution_timeout", "auth_failures", "storage"}
    if unknown:
        raise AuthConfigError(f"limits: unknown setting(s) {', '.join(sorted(unknown))}")
    for name in ("rate", "auth_failures"):
        if name in table:
            parse_rate(table[name], f"limits.{name}")
    storage = table.get("storage", "memory://")
    if not isinstance(storage, str) or not storage.startswith(("memory://", "redis://", "rediss://")):
        raise AuthConfigError('limits.storage must be "memory://" or a redis:// URL')
    return Limits(
        rate=table.get("rate"),
        concurrency=_positive(table["concurrency"], "limits.concurrency") if "concurrency" in table else None,
        execution_timeout=(
            float(_positive(table["execution_timeout"], "limits.execution_timeout", float))
            if "execution_timeout" in table
            else None
        ),
        auth_failures=table.get("auth_failures"),
        storage=storage,
    )


class _Window:
    """A moving-window limiter of the ``limits`` package on ``storage``."""

    def __init__(self, storage: str, prefix: str) -> None:
        from limits.aio.strategies import MovingWindowRateLimiter
        from limits.storage import storage_from_string

        options: dict[str, Any] = {}
        if storage.startswith(("redis://", "rediss://")):
            options["implementation"] = "redispy"
            options["key_prefix"] = prefix
        self.storage = storage_from_string("async+" + storage, **options)
        self.limiter = MovingWindowRateLimiter(self.storage)
        self.prefix = prefix

    async def hit(self, rate: Any, key: str) -> float | None:
        """Counts one hit; None when within ``rate``, else seconds until one frees."""
        if await self.limiter.hit(rate, self.prefix, key):
            return None
        stats = await self.limiter.get_window_stats(rate, self.prefix, key)
        return max(0.0, stats.reset_time - time.time())

    async def over(self, rate: Any, key: str) -> float | None:
        """Like :meth:`hit` without counting."""
        if await self.limiter.test(rate, self.prefix, key):
            return None
        stats = await self.limiter.get_window_stats(rate, self.prefix, key)
        return max(0.0, stats.reset_time - time.time())


def _peer_host(peer: str) -> str:
    """``ipv4:127.0.0.1:5555`` → ``127.0.0.1`` (``ipv6:[::1]:5555`` → ``::1``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rsplit(":", 1)[0].strip("[]")
    if kind == "ipv4":
        return rest.rsplit(":", 1)[0]
    return peer


class RequestLimits(CallInterceptor):
    """The limits slot: the principal's rate on every call, its concurrency
    on the calls that start an execution (``running(owner)`` counts its
    running executions). A principal's own limits (an API key's ``rate`` and
    ``concurrency``, in ``Principal.attributes``) replace the defaults.
    Raises :class:`RateLimited`; anonymous calls (no principal) are not limited."""

    def __init__(self, limits: Limits, running: Callable[[str], int]) -> None:
        self.limits = limits
        self.running = running
        self._window = _Window(limits.storage, "a2a-grpc-rate")
        self._rates: dict[str, Any] = {}

    def _rate(self, text: str) -> Any:
        rate = self._rates.get(text)
        if rate is None:
            rate = self._rates[text] = parse_rate(text, "rate")
        return rate

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        principal = call.principal
        if principal is None:
            return
        rate_text = principal.attributes.get("rate", self.limits.rate)
        if rate_text:
            wait = await self._window.hit(self._rate(rate_text), principal.owner)
            if wait is not None:
                raise RateLimited(
                    f"rate limit of {rate_text} exceeded for {principal.subject}; retry later",
                    wait,
                    limit="rate",
                )
        concurrency = principal.attributes.get("concurrency", self.limits.concurrency)
        if concurrency and call.rpc_name in STARTS_EXECUTION and self.running(principal.owner) >= concurrency:
            raise RateLimited(
                f"{principal.subject} already has {concurrency} task(s) working (the concurrency limit);"
                " retry when one ends",
                1.0,
                limit="concurrency",
            )


class AuthFailureLimits(CallInterceptor):
    """Ahead of authentication: a peer (host) that failed authentication
    ``auth_failures`` times in the window is refused with :class:`RateLimited`
    before its credential is checked; each UNAUTHENTICATED outcome counts."""

    def __init__(self, limits: Limits) -> None:
        assert limits.auth_failures
        self.text = limits.auth_failures
        self.rate = parse_rate(limits.auth_failures, "limits.auth_failures")
        self._window = _Window(limits.storage, "a2a-grpc-authfail")

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        wait = await self._window.over(self.rate, _peer_host(call.peer))
        if wait is not None:
            raise RateLimited(
                f"too many failed authentications from this address (limit {self.text}); retry later",
                wait,
                limit="authFailures",
            )

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        if isinstance(outcome, A2AError) and outcome.code is ErrorCode.UNAUTHENTICATED:
            await self._window.hit(self.rate, _peer_host(call.peer))


def limit_interceptors(
    limits: Limits, authentication: list[CallInterceptor], running_for: Callable[[str], int]
) -> tuple[list[CallInterceptor], list[CallInterceptor]]:
    """The authentication slot with :class:`AuthFailureLimits` ahead of it
    (when ``auth_failures`` is set) and the limits slot (:class:`RequestLimits`,
    counting a user's executions with ``running_for``: the executions'
    ``running_for``). The execution time limit is the executions' own
    (``Executions(time_limit=...)``, given by the composition root)."""
    ahead: list[CallInterceptor] = [AuthFailureLimits(limits)] if limits.auth_failures else []
    return [*ahead, *authentication], [RequestLimits(limits, running_for)]
