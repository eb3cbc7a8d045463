"""gRPC server reflection, both versions: ``grpc.reflection.v1`` and
``grpc.reflection.v1alpha``.

grpcio-reflection ships only the v1alpha service, while current grpcurl and
``buf curl`` ask for v1 first. The v1 proto is the v1alpha one with the
package renamed (every message and field identical, so the bytes on the wire
are the same): :func:`v1_file` builds its descriptor from v1alpha's, adds it
to the descriptor pool (so reflection can describe itself in both versions),
and :func:`enable_reflection` serves the one reflection servicer under both
service names.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection, reflection_pb2

__all__ = ["V1ALPHA_SERVICE_NAME", "V1_SERVICE_NAME", "enable_reflection", "v1_file"]

V1ALPHA_SERVICE_NAME = reflection.SERVICE_NAME
V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
_V1_FILE = "grpc/reflection/v1/reflection.proto"


def v1_file(pool: descriptor_pool.DescriptorPool | None = None) -> FileDescriptor:
    """The ``grpc/reflection/v1/reflection.proto`` descriptor in ``pool``
    (the default pool unless given), added on first use: v1alpha's file with
    the package ``grpc.reflection.v1`` (and its type references renamed)."""
    pool = pool or descriptor_pool.Default()
    try:
        return pool.FindFileByName(_V1_FILE)
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old, new = f".{proto.package}.", ".grpc.reflection.v1."
    proto.name, proto.package = _V1_FILE, "grpc.reflection.v1"
    proto.options.Clear()
    for message in proto.message_type:
        for fld in message.field:
            if fld.type_name.startswith(old):
                fld.type_name = new + fld.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    pool.AddSerializedFile(proto.SerializeToString())
    return pool.FindFileByName(_V1_FILE)


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serves reflection v1 and v1alpha on ``server`` for ``service_names``
    (both reflection services are added to the list). Requests and responses
    are parsed and written with the v1alpha classes: the two versions are
    wire-identical."""
    v1_file()
    names = (*service_names, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
    servicer = reflection.aio.ReflectionServicer(names)
    method = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for service in (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME):
        handlers = {"ServerReflectionInfo": method}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
