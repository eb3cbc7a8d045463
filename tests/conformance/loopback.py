"""``rest-loopback``: the gateway in front of a real gRPC channel.

:class:`GrpcForwarder` has the servicer's method names and forwards each call
over a ``grpc.aio`` channel to the server's gRPC port — service parameters as
metadata, the rich status of an error back through ``context.abort`` — the way
grpc-gateway's endpoint mode or Envoy's transcoder sit in front of a gRPC
server (design.md). Serving it with ``a2a_grpc.bindings._http.app.create_app`` proves that the
in-process gateway and one going over the wire behave the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from a2a_grpc.types import pb, pb_grpc

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
#: HTTP headers that are service parameters or credentials, forwarded as metadata.
_FORWARDED = ("a2a-", "authorization", "x-")


def _metadata(context: Any) -> tuple[tuple[str, str], ...]:
    return tuple(
        (k, v)
        for k, v in context.invocation_metadata() or ()
        if isinstance(v, str) and k.startswith(_FORWARDED) and not k.endswith("-bin")
    )


async def _abort(context: Any, exc: grpc.aio.AioRpcError) -> None:
    await context.abort(exc.code(), exc.details() or "", trailing_metadata=exc.trailing_metadata() or ())


def _unary(name: str) -> Callable[..., Any]:
    async def rpc(self: GrpcForwarder, request: Any, context: Any) -> Any:
        call = getattr(self.stub, name)(request, metadata=_metadata(context))
        try:
            response = await call
        except grpc.aio.AioRpcError as exc:
            await _abort(context, exc)
            raise
        await context.send_initial_metadata(tuple(await call.initial_metadata() or ()))
        return response

    rpc.__name__ = name
    return rpc


def _streaming(name: str) -> Callable[..., AsyncIterator[Any]]:
    async def rpc(self: GrpcForwarder, request: Any, context: Any) -> AsyncIterator[Any]:
        call = getattr(self.stub, name)(request, metadata=_metadata(context))
        try:
            first = True
            async for event in call:
                if first:
                    await context.send_initial_metadata(tuple(await call.initial_metadata() or ()))
                    first = False
                yield event
        except grpc.aio.AioRpcError as exc:
            await _abort(context, exc)
            raise
        finally:
            call.cancel()

    rpc.__name__ = name
    return rpc


class GrpcForwarder:
    """Quacks like A2AServicer; every RPC goes to ``channel``."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.stub = pb_grpc.A2AServiceStub(channel)


for _method in SERVICE.methods:
    setattr(
        GrpcForwarder,
        _method.name,
        _streaming(_method.name) if _method.server_streaming else _unary(_method.name),
    )
