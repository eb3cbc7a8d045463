"""The servicer's view of an HTTP request: :class:`GatewayContext`.

It implements :class:`a2a_grpc.context.RpcContext` — the subset of
``grpc.aio.ServicerContext`` the servicer uses — so JSON-RPC and HTTP+JSON
calls run through exactly the same servicer code as gRPC calls:

* metadata in: the request headers, lower-cased, plus ``a2a-version`` from the
  ``A2A-Version`` query parameter when given (spec §3.6.1, §7.2);
* metadata out: initial and trailing metadata are collected; ``a2a-*`` keys
  become response headers (``a2a-extensions`` → ``A2A-Extensions``, spec §7.3);
* ``abort`` raises :class:`~a2a_grpc.bindings._http.errors.GatewayAbort` carrying the rich
  ``google.rpc.Status`` from the ``grpc-status-details-bin`` trailer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import grpc
from aiohttp import web
from google.protobuf.message import DecodeError
from google.rpc import status_pb2

from a2a_grpc.bindings._http.errors import GatewayAbort
from a2a_grpc.context import VERSION_KEY
from a2a_grpc.errors import A2AError, ErrorCode

__all__ = ["GatewayAbort", "GatewayContext", "split_details"]

_DETAILS_KEY = "grpc-status-details-bin"


def split_details(
    trailing: Iterable[tuple[str, str | bytes]] | None,
) -> tuple[status_pb2.Status | None, list[tuple[str, str | bytes]]]:
    """(the ``google.rpc.Status`` of an abort's ``grpc-status-details-bin``
    trailer, None when absent or undecodable; the other trailers, in order)."""
    status: status_pb2.Status | None = None
    rest: list[tuple[str, str | bytes]] = []
    for key, value in trailing or ():
        if key.lower() == _DETAILS_KEY and isinstance(value, bytes):
            try:
                status = status_pb2.Status.FromString(value)
            except DecodeError:
                status = None
        else:
            rest.append((key, value))
    return status, rest


_VERSION_QUERY = "a2a-version"
_CHALLENGE_KEY = "www-authenticate"


def _code_number(code: Any) -> int:
    if isinstance(code, grpc.StatusCode):
        return int(code.value[0])
    return int(code)


def _text(value: str) -> str:
    """A header value as text: bytes that are not UTF-8 (aiohttp keeps them
    as lone surrogates, which no error could quote) become U+FFFD."""
    if value.isascii():
        return value
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _peer(transport: Any) -> str:
    """A transport's remote address in gRPC form."""
    peername = transport.get_extra_info("peername") if transport is not None else None
    if isinstance(peername, tuple) and len(peername) >= 2:
        host, port = peername[0], peername[1]
        return f"ipv6:[{host}]:{port}" if ":" in str(host) else f"ipv4:{host}:{port}"
    return f"unix:{peername}" if peername else "unknown"


class GatewayContext:
    """A ``grpc.aio.ServicerContext`` stand-in built from one aiohttp request."""

    def __init__(self, request: web.Request, binding: str = "rest") -> None:
        self._request = request
        #: The binding carrying the call (``jsonrpc`` or ``rest``): CallContext.binding.
        self.binding = binding
        headers = request.headers
        md: list[tuple[str, str | bytes]] = [
            (k.lower(), v if v.isascii() else _text(v)) for k, v in headers.items()
        ]
        if VERSION_KEY not in headers:  # case-insensitive
            for key, value in request.query.items():
                if key.lower() == _VERSION_QUERY:
                    md.append((VERSION_KEY, value))
                    break
        self._metadata = tuple(md)
        self.initial_metadata: list[tuple[str, str | bytes]] = []
        self.trailing_metadata: list[tuple[str, str | bytes]] = []
        self._cancelled = False

    # --- RpcContext -------------------------------------------------------

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]]:
        """The request headers as (lower-case key, value) pairs."""
        return self._metadata

    def peer(self) -> str:
        """The caller's address in gRPC form (``ipv4:127.0.0.1:5555``),
        read once per connection where the connection can keep it
        (``grpc_peer`` of :mod:`a2a_grpc.bindings._http.connections`' handler)."""
        protocol = self._request.protocol
        peer = getattr(protocol, "grpc_peer", None)
        if type(peer) is not str:
            peer = _peer(self._request.transport)
            if hasattr(protocol, "grpc_peer"):
                protocol.grpc_peer = peer
        return peer

    def peer_certificate(self) -> bytes | None:
        """The DER client certificate of the TLS connection, verified by the
        server's client CA (None over plaintext or without a certificate)."""
        transport = self._request.transport
        tls = transport.get_extra_info("ssl_object") if transport is not None else None
        return tls.getpeercert(binary_form=True) if tls is not None else None

    def time_remaining(self) -> float | None:
        """HTTP requests carry no deadline: None."""
        return None

    async def send_initial_metadata(self, initial_metadata: Sequence[tuple[str, str | bytes]]) -> None:
        """Collects metadata that becomes response headers."""
        self.initial_metadata.extend(initial_metadata)

    def set_trailing_metadata(self, trailing_metadata: Sequence[tuple[str, str | bytes]]) -> None:
        """Collects trailing metadata (headers of a unary response)."""
        self.trailing_metadata = list(trailing_metadata)

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> NoReturn:
        """Ends the call: raises GatewayAbort with the status from the
        ``grpc-status-details-bin`` entry of ``trailing_metadata``, or one built
        from ``code`` and ``details`` (with the ErrorInfo of the table row for
        that code) when there is none."""
        raise GatewayAbort(self._status(code, details, trailing_metadata or ()))

    async def abort_with_status(self, status: Any) -> NoReturn:
        """``grpc.aio`` compatible: aborts with a ``grpc.Status`` object."""
        await self.abort(status.code, status.details, status.trailing_metadata)

    def cancelled(self) -> bool:
        """True once the client went away (streams only)."""
        return self._cancelled

    def done(self) -> bool:
        return self._cancelled

    # --- gateway side -----------------------------------------------------

    def _status(
        self, code: Any, details: str, trailing: Iterable[tuple[str, str | bytes]]
    ) -> status_pb2.Status:
        status, rest = split_details(trailing)
        self.trailing_metadata.extend(rest)
        number = _code_number(code)
        if status is not None and (status.code == number or not number):
            return status
        grpc_code = next((c for c in grpc.StatusCode if c.value[0] == number), grpc.StatusCode.UNKNOWN)
        fallback = A2AError(ErrorCode.from_grpc_code(grpc_code), details or None).to_status()
        fallback.code = number
        return fallback

    def mark_cancelled(self) -> None:
        self._cancelled = True

    def response_headers(self) -> dict[str, str]:
        """``a2a-*`` response metadata as HTTP headers (``A2A-Extensions``),
        ``www-authenticate`` as ``WWW-Authenticate`` (the challenge of an
        UNAUTHENTICATED error) and ``retry-after`` as ``Retry-After``; repeated keys are comma-joined."""
        out: dict[str, list[str]] = {}
        if not self.initial_metadata and not self.trailing_metadata:
            return {}
        for key, value in (*self.initial_metadata, *self.trailing_metadata):
            k = key.lower()
            if k == _CHALLENGE_KEY:
                out.setdefault("WWW-Authenticate", []).append(str(value))
                continue
            if k == "retry-after":  # a RESOURCE_EXHAUSTED of a limit (a2a_grpc.auth._limits)
                out["Retry-After"] = [str(value)]
                continue
            if not k.startswith("a2a-") or k.endswith("-bin"):
                continue
            text = value.decode() if isinstance(value, bytes) else str(value)
            out.setdefault("A2A-" + "-".join(p.capitalize() for p in k[4:].split("-")), []).append(text)
        return {k: ", ".join(v) for k, v in out.items()}
