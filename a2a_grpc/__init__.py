"""a2a-grpc: a gRPC-first, protobuf-canonical implementation of A2A v1.0.

The public surface is re-exported lazily here; the generated messages live in
``a2a_grpc.types.pb`` (``a2a_grpc.gen.lf.a2a.v1.a2a_pb2``).
"""

from a2a_grpc.context import CallContext, Owner
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.executor import AgentExecutor, ExecutorContext, data_part, file_part, text_part
from a2a_grpc.interceptors import CallInterceptor
from a2a_grpc.types import pb

__all__ = [
    "A2AError",
    "AgentExecutor",
    "CallContext",
    "CallInterceptor",
    "ErrorCode",
    "ExecutorContext",
    "FieldViolation",
    "Owner",
    "data_part",
    "file_part",
    "pb",
    "text_part",
]
