"""a2a-grpc: a gRPC-first, protobuf-canonical implementation of A2A v1.0.

The public surface is re-exported here; the server and client names
(``A2AServer``, ``ServerConfig``, ``serve``, ``A2AClient``) load on first use,
so ``import a2a_grpc`` does not start up grpc.aio or aiohttp. The generated
messages live in ``a2a_grpc.types.pb`` (``a2a_grpc.gen.lf.a2a.v1.a2a_pb2``).

Serve an agent from Python::

    from a2a_grpc import AgentExecutor, ServerConfig, serve
    serve(MyAgent(), config=ServerConfig(grpc_port=50051, http_port=8080))
"""

from typing import TYPE_CHECKING, Any

from a2a_grpc.context import CallContext, Owner
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext, data_part, file_part, text_part
from a2a_grpc.core._interceptors import CallInterceptor
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.types import pb

if TYPE_CHECKING:
    from a2a_grpc.client import A2AClient
    from a2a_grpc.server import A2AServer, ServerConfig, serve

#: Names loaded on first use, and their modules.
_LAZY = {
    "A2AServer": "a2a_grpc.server",
    "ServerConfig": "a2a_grpc.server",
    "serve": "a2a_grpc.server",
    "A2AClient": "a2a_grpc.client",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'a2a_grpc' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "A2AClient",
    "A2AError",
    "A2AServer",
    "AgentExecutor",
    "CallContext",
    "CallInterceptor",
    "ErrorCode",
    "ExecutorContext",
    "FieldViolation",
    "Owner",
    "ServerConfig",
    "data_part",
    "file_part",
    "pb",
    "serve",
    "text_part",
]
