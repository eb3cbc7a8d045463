"""What every client binding implements.

A :class:`Transport` carries one A2A operation, named by its method descriptor
in ``lf.a2a.v1.A2AService``, with a request proto in and a response proto (or a
stream of ``StreamResponse``) out. The bindings differ only in how the bytes
travel; :class:`~a2a_grpc.client.A2AClient` holds all operation logic.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from google.protobuf import message_factory

from a2a_grpc.client._card import PROTOCOL_VERSION
from a2a_grpc.client._propagation import inject
from a2a_grpc.types import pb

if TYPE_CHECKING:
    from a2a_grpc.bindings.tls import ClientTLS

__all__ = ["SERVICE", "CallOptions", "Transport", "method", "response_class"]

#: The descriptor of ``lf.a2a.v1.A2AService``.
SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]

#: Header / metadata names of the A2A service parameters (digest §7).
VERSION_HEADER = "A2A-Version"
EXTENSIONS_HEADER = "A2A-Extensions"


def method(name: str) -> _descriptor.MethodDescriptor:
    """The method descriptor of an A2A RPC, e.g. ``method("GetTask")``."""
    return SERVICE.methods_by_name[name]


def response_class(m: _descriptor.MethodDescriptor) -> type[_message.Message]:
    """The generated class of a method's response message."""
    return message_factory.GetMessageClass(m.output_type)


@dataclass(frozen=True, slots=True)
class CallOptions:
    """What every call sends besides the request: extra headers (e.g.
    ``Authorization``), the requested extension URIs, and the A2A version.
    ``tls`` (:class:`~a2a_grpc.bindings.tls.ClientTLS`): the CA to trust and the client
    certificate for mTLS, on every binding (None: system roots, no client
    certificate, and gRPC over TLS only when the URL says so)."""

    headers: Mapping[str, str] = field(default_factory=dict)
    extensions: Sequence[str] = ()
    version: str = PROTOCOL_VERSION
    tls: ClientTLS | None = None

    def http_headers(self) -> dict[str, str]:
        """HTTP headers: the caller's, then ``A2A-Version``, when any
        extension is requested ``A2A-Extensions`` (comma-joined), and the
        current trace context (``traceparent``) when OpenTelemetry is in use."""
        out = dict(self.headers)
        out[VERSION_HEADER] = self.version
        if self.extensions:
            out[EXTENSIONS_HEADER] = ",".join(self.extensions)
        inject(out)
        return out

    def grpc_metadata(self) -> tuple[tuple[str, str], ...]:
        """The same as gRPC metadata (lower-case keys, digest §6)."""
        return tuple((k.lower(), v) for k, v in self.http_headers().items())


class Transport(abc.ABC):
    """One binding to one interface URL."""

    #: Short binding name: ``grpc``, ``jsonrpc`` or ``rest``.
    binding: str = ""

    def __init__(self, url: str, options: CallOptions) -> None:
        self.url = url
        self.options = options

    @abc.abstractmethod
    async def probe(self, timeout: float) -> None:
        """Checks that the endpoint accepts connections; raises
        ``A2AError(UNAVAILABLE)`` (or DEADLINE_EXCEEDED) when it does not."""

    @abc.abstractmethod
    async def unary(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> _message.Message:
        """Calls a unary RPC; returns its response proto or raises A2AError."""

    @abc.abstractmethod
    def stream(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        """Calls a server-streaming RPC; yields each StreamResponse; raises
        A2AError on failure (before or during the stream)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Releases the connection(s)."""
