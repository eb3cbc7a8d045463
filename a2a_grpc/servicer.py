"""A2AServicer: the gRPC face of the RequestHandler.

One servicer method per RPC of ``lf.a2a.v1.A2AService``, generated from the
service descriptor: ``SendMessage`` calls ``handler.send_message`` and so on
(the RPC name in snake_case). Adding an RPC to the proto and a coroutine of
that name to the handler is all it takes; there is no dispatch table.

The servicer only touches the :class:`~a2a_grpc.context.RpcContext` subset of
``grpc.aio.ServicerContext``, so the HTTP gateway drives this very object with
its own context. Errors leave as rich gRPC status: the code from the ErrorCode
table and a ``google.rpc.Status`` with ErrorInfo (and BadRequest) in the
``grpc-status-details-bin`` trailer (spec §10.6). Activated extensions are
echoed as initial metadata ``a2a-extensions`` (spec §7.3).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn

from google.protobuf import descriptor
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.context import EXTENSIONS_KEY, CallContext, RpcContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.handler import RequestHandler
from a2a_grpc.types import pb, pb_grpc

__all__ = ["SERVICE", "A2AServicer", "handler_name", "method_path"]

log = logging.getLogger("a2a_grpc.servicer")

#: The service descriptor everything is derived from.
SERVICE: descriptor.ServiceDescriptor = pb.DESCRIPTOR.services_by_name["A2AService"]
STATUS_DETAILS_KEY = "grpc-status-details-bin"


def handler_name(method: descriptor.MethodDescriptor) -> str:
    """The RequestHandler coroutine for an RPC: ``GetTask`` → ``get_task``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", method.name).lower()


def method_path(method: descriptor.MethodDescriptor) -> str:
    """The full gRPC method name, e.g. ``/lf.a2a.v1.A2AService/GetTask``."""
    return f"/{SERVICE.full_name}/{method.name}"


async def abort(context: RpcContext, err: A2AError) -> NoReturn:
    """Ends the call with ``err`` as a rich status (code, message, details)."""
    await context.abort(
        err.code.grpc_code,
        err.message,
        trailing_metadata=((STATUS_DETAILS_KEY, err.to_status().SerializeToString()),),
    )
    raise AssertionError("abort returned")  # pragma: no cover - abort always raises


def _call_context(context: RpcContext, path: str, request: ProtoMessage) -> CallContext:
    return CallContext.from_metadata(
        path,
        context.invocation_metadata(),
        tenant=getattr(request, "tenant", ""),
        peer=context.peer(),
        deadline=context.time_remaining(),
    )


async def _echo_extensions(context: RpcContext, call: CallContext) -> None:
    if call.activated_extensions:
        await context.send_initial_metadata(((EXTENSIONS_KEY, ",".join(sorted(call.activated_extensions))),))


def _internal(path: str) -> A2AError:
    log.exception("unhandled error in %s", path)
    return A2AError(ErrorCode.INTERNAL, "internal error")


def _unary(method: descriptor.MethodDescriptor) -> Callable[..., Awaitable[ProtoMessage]]:
    name, path = handler_name(method), method_path(method)

    async def rpc(self: A2AServicer, request: ProtoMessage, context: RpcContext) -> ProtoMessage:
        call = _call_context(context, path, request)
        try:
            response = await getattr(self.handler, name)(request, call)
        except A2AError as err:
            error = err
        except Exception:
            error = _internal(path)
        else:
            await _echo_extensions(context, call)
            return response
        await abort(context, error)

    rpc.__name__ = rpc.__qualname__ = method.name
    rpc.__doc__ = f"{method.name}: calls RequestHandler.{name} (unary)."
    return rpc


def _streaming(method: descriptor.MethodDescriptor) -> Callable[..., AsyncIterator[ProtoMessage]]:
    name, path = handler_name(method), method_path(method)

    async def rpc(
        self: A2AServicer, request: ProtoMessage, context: RpcContext
    ) -> AsyncIterator[ProtoMessage]:
        call = _call_context(context, path, request)
        events = getattr(self.handler, name)(request, call)
        error: A2AError | None = None
        first = True
        try:
            async for event in events:
                if first:
                    await _echo_extensions(context, call)
                    first = False
                yield event
        except A2AError as err:
            error = err
        except Exception:
            error = _internal(path)
        finally:
            await events.aclose()
        if error is not None:
            await abort(context, error)

    rpc.__name__ = rpc.__qualname__ = method.name
    rpc.__doc__ = f"{method.name}: streams RequestHandler.{name}."
    return rpc


class A2AServicer(pb_grpc.A2AServiceServicer):
    """Implements every RPC of ``lf.a2a.v1.A2AService`` on a RequestHandler.

    Unary RPCs take ``(request, context)`` and return the response message;
    server-streaming RPCs are async generators of ``pb.StreamResponse``.
    """

    def __init__(self, handler: RequestHandler) -> None:
        self.handler = handler


def _install() -> None:
    for method in SERVICE.methods:
        if method.client_streaming:
            raise TypeError(f"{method.name}: client streaming is not supported")
        if not hasattr(RequestHandler, handler_name(method)):
            raise TypeError(f"RequestHandler has no {handler_name(method)} for RPC {method.name}")
        impl: Any = _streaming(method) if method.server_streaming else _unary(method)
        setattr(A2AServicer, method.name, impl)


_install()
