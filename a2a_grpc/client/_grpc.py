"""The gRPC client binding (spec §10, digest §6).

Calls the generated ``A2AServiceStub`` on a ``grpc.aio`` channel. The card's
GRPC interface URL is a bare ``host:port`` (design.md); a URL with a scheme is
accepted too: ``grpc://`` and ``http://`` mean plaintext, ``grpcs://`` and
``https://`` mean TLS with the system roots; a bare target uses TLS on port
443 or when the client has TLS settings (``CallOptions.tls``: CA, client
certificate for mTLS). Service parameters travel as metadata ``a2a-version`` /
``a2a-extensions``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import urlsplit

import grpc
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from a2a_grpc.client._base import CallOptions, Transport
from a2a_grpc.client._errors import from_grpc_error
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import SERVICE_NAME, pb, pb_grpc

__all__ = ["GrpcTransport", "grpc_target"]


def grpc_target(url: str) -> tuple[str, bool]:
    """``(host:port, use_tls)`` from a card URL. Without a port, 443 is used
    for TLS and 80 for plaintext schemes. A bare ``host:port`` is plaintext
    unless the port is 443 (the spec's example ``grpc.example.com:443``)."""
    raw = url.strip()
    if "://" not in raw:
        target = raw.rstrip("/")
        return target, target.endswith(":443")
    parts = urlsplit(raw)
    tls = parts.scheme.lower() in ("https", "grpcs")
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port or (443 if tls else 80)
    return f"{host}:{port}", tls


class GrpcTransport(Transport):
    """A2A over gRPC. The channel is opened lazily on first use, inside the
    running event loop; ``max_message_bytes`` bounds received messages."""

    binding = "grpc"
    #: The service called, and its generated stub.
    service_name = SERVICE_NAME
    stub_class: Any = pb_grpc.A2AServiceStub

    def __init__(self, url: str, options: CallOptions, *, max_message_bytes: int = 16 * 1024 * 1024) -> None:
        super().__init__(url, options)
        self.target, self.tls = grpc_target(url)
        if options.tls is not None and "://" not in url:
            self.tls = True
        self._max = max_message_bytes
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None

    def _get_stub(self) -> Any:
        if self._stub is None:
            opts = [
                ("grpc.max_receive_message_length", self._max),
                ("grpc.max_send_message_length", self._max),
            ]
            if self.tls:
                tls = self.options.tls
                creds = tls.grpc_credentials() if tls is not None else grpc.ssl_channel_credentials()
                self._channel = grpc.aio.secure_channel(self.target, creds, options=opts)
            else:
                self._channel = grpc.aio.insecure_channel(self.target, options=opts)
            self._stub = self.stub_class(self._channel)
        return self._stub

    async def probe(self, timeout: float) -> None:
        """Waits until the channel is READY (``channel_ready``), at most
        ``timeout`` seconds; raises A2AError(UNAVAILABLE) otherwise."""
        self._get_stub()
        assert self._channel is not None
        try:
            await asyncio.wait_for(self._channel.channel_ready(), timeout)
        except TimeoutError:
            hint = "" if self.tls else " (if it serves TLS, use grpcs:// and --ca)"
            raise A2AError(
                ErrorCode.UNAVAILABLE, f"gRPC endpoint {self.target} not ready after {timeout:g}s{hint}"
            ) from None

    async def confirm_service(self, timeout: float) -> None:
        """Asks the server's reflection service whether it serves
        :attr:`service_name` (``lf.a2a.v1.A2AService``): used when there is no
        Agent Card to say so (a ``grpc://`` URL). A server without reflection
        is taken on trust.

        Raises A2AError(UNSUPPORTED_OPERATION) naming the services found when
        the A2A service is not among them; UNAVAILABLE when the server does
        not answer within ``timeout`` seconds."""
        names = await self.services(timeout)
        if names is not None and self.service_name not in names:
            raise A2AError(
                ErrorCode.UNSUPPORTED_OPERATION,
                f"gRPC endpoint {self.target} does not serve {self.service_name} "
                f"(it serves: {', '.join(names) or 'nothing'})",
            )

    async def services(self, timeout: float) -> list[str] | None:
        """The services the server's reflection lists (None when it has no
        reflection); UNAVAILABLE when it does not answer within ``timeout``."""
        self._get_stub()
        assert self._channel is not None
        stub = reflection_pb2_grpc.ServerReflectionStub(self._channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        try:
            async for response in stub.ServerReflectionInfo(iter((request,)), timeout=timeout):
                return sorted(s.name for s in response.list_services_response.service)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                return None
            raise A2AError(
                ErrorCode.UNAVAILABLE, f"gRPC endpoint {self.target}: {err.code().name}: {err.details()}"
            ) from None
        return None

    def _error(self, err: grpc.aio.AioRpcError) -> A2AError:
        """from_grpc_error, with a hint when the connection was closed during
        set-up: a TLS port spoken to in plaintext, or a refused certificate."""
        error = from_grpc_error(err)
        if error.code == ErrorCode.UNAVAILABLE and "Socket closed" in (err.details() or ""):
            hint = (
                "use grpcs:// or --ca for a TLS port"
                if not self.tls
                else "the server may require a client certificate it trusts: --cert/--key"
            )
            return A2AError(ErrorCode.UNAVAILABLE, f"{error.message} ({hint})")
        return error

    def _call_kwargs(self, timeout: float | None) -> dict[str, Any]:
        return {"timeout": timeout, "metadata": self.options.grpc_metadata()}

    async def unary(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> _message.Message:
        rpc = getattr(self._get_stub(), m.name)
        try:
            response: _message.Message = await rpc(request, **self._call_kwargs(timeout))
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        return response

    async def stream(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        call = getattr(self._get_stub(), m.name)(request, **self._call_kwargs(timeout))
        try:
            async for event in call:
                yield event
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        finally:
            call.cancel()

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
            self._stub = None
