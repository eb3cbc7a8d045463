"""Who is calling, how, and with which A2A service parameters.

A :class:`CallContext` is built once per call by the servicer from whatever
implements :class:`RpcContext` — a real ``grpc.aio.ServicerContext`` or the
gateway's stand-in for HTTP requests — so every binding fills it the same way
(spec §3.2.6 service parameters, §7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, runtime_checkable

if TYPE_CHECKING:
    from a2a_grpc.principal import PeerIdentity, Principal

__all__ = [
    "EXTENSIONS_KEY",
    "VERSION_KEY",
    "CallContext",
    "Owner",
    "RpcContext",
    "parse_extensions",
]

#: Service parameter names as gRPC metadata keys (lower case, spec §10.2).
VERSION_KEY = "a2a-version"
EXTENSIONS_KEY = "a2a-extensions"


@runtime_checkable
class RpcContext(Protocol):
    """The part of ``grpc.aio.ServicerContext`` the servicer may use.

    The gateway's context implements exactly this, so the gRPC server and the
    HTTP gateway drive literally the same servicer code.
    """

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]] | None: ...

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> NoReturn: ...

    def set_trailing_metadata(self, trailing_metadata: Sequence[tuple[str, str | bytes]]) -> None: ...

    async def send_initial_metadata(self, initial_metadata: Sequence[tuple[str, str | bytes]]) -> None: ...

    def peer(self) -> str: ...

    def time_remaining(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Owner:
    """The scope a task belongs to: the tenant and the authenticated caller.

    Another owner's task reads as TASK_NOT_FOUND (spec §13.1). ``user`` is ""
    when the server runs without authentication.
    """

    tenant: str = ""
    user: str = ""


_NO_EXTENSIONS: frozenset[str] = frozenset()
#: The owner of every task of a server without tenants or authentication.
_NOBODY = Owner()


def parse_extensions(values: Sequence[str]) -> frozenset[str]:
    """Extension URIs from one or more comma-separated ``A2A-Extensions``
    values, whitespace-tolerant (spec §7.3)."""
    return frozenset(u.strip() for v in values for u in v.split(",") if u.strip())


@dataclass(slots=True)
class CallContext:
    """One call, seen the same way on every binding.

    ``method`` is the full gRPC method name (``/lf.a2a.v1.A2AService/GetTask``)
    whatever binding carried the call. ``protocol_version`` is the
    ``A2A-Version`` service parameter ("" when absent). ``requested_extensions``
    come from ``A2A-Extensions``; the handler adds the ones it activates to
    ``activated_extensions``, which the binding echoes back. ``binding`` is
    the binding that carried the call: ``grpc``, ``jsonrpc`` or ``rest``;
    ``dialect`` the A2A version the caller speaks (``1.0``, or ``0.3`` when a
    legacy adapter converted the call: push configs record it, so their
    webhooks get bodies in it). ``principal`` is
    the authenticated caller (None without an auth configuration); the
    authentication step sets it and makes ``user`` its owner id.
    ``client_task_ids``: a message naming an unknown task id creates the task
    under that id instead of TASK_NOT_FOUND — set only by the v0.1 / tutorial
    adapters (:mod:`a2a_grpc.dialects`, legacy digest C3), never from a header.
    """

    method: str
    tenant: str = ""
    user: str = ""
    protocol_version: str = ""
    requested_extensions: frozenset[str] = frozenset()
    activated_extensions: set[str] = field(default_factory=set)
    metadata: dict[str, list[str]] = field(default_factory=dict)
    peer: str = ""
    deadline: float | None = None
    peer_identity: PeerIdentity | None = None
    binding: str = "grpc"
    principal: Principal | None = None
    client_task_ids: bool = False
    dialect: str = "1.0"

    @property
    def owner(self) -> Owner:
        """The task scope of this caller."""
        if not self.tenant and not self.user:
            return _NOBODY  # (a frozen dataclass is slow to build: the common case is shared)
        return Owner(self.tenant, self.user)

    @property
    def rpc_name(self) -> str:
        """The bare RPC name, e.g. ``GetTask``."""
        return self.method.rsplit("/", 1)[-1]

    def header(self, name: str) -> str | None:
        """The first value of a metadata key or header (case-insensitive)."""
        values = self.metadata.get(name.lower())
        return values[0] if values else None

    @classmethod
    def from_metadata(
        cls,
        method: str,
        metadata: Sequence[tuple[str, str | bytes]] | None,
        *,
        tenant: str = "",
        peer: str = "",
        deadline: float | None = None,
        binding: str = "grpc",
        dialect: str = "1.0",
    ) -> CallContext:
        """Builds the context from gRPC metadata or HTTP headers given as
        (key, value) pairs; keys are compared case-insensitively."""
        md: dict[str, list[str]] = {}
        for key, value in metadata or ():
            k = key.lower()
            if k.endswith("-bin"):
                continue
            text = value.decode() if isinstance(value, bytes) else value
            values = md.get(k)
            if values is None:
                md[k] = [text]
            else:
                values.append(text)
        versions = md.get(VERSION_KEY)
        extensions = md.get(EXTENSIONS_KEY)
        return cls(
            method=method,
            tenant=tenant,
            protocol_version=versions[0].strip() if versions else "",
            requested_extensions=parse_extensions(extensions) if extensions else _NO_EXTENSIONS,
            metadata=md,
            peer=peer,
            deadline=deadline,
            binding=binding,
            dialect=dialect,
        )
