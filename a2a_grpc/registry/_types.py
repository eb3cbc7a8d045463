"""The registry's generated proto modules under short names.

``rpb`` is ``a2agrpc.registry.v1`` (registry.proto's messages), ``rpb_grpc``
its gRPC stubs, ``SERVICE`` the AgentRegistryService descriptor and
``SERVICE_NAME`` its full name (gRPC method paths and health checks).
"""

from __future__ import annotations

from a2a_grpc.gen.a2agrpc.registry.v1 import registry_pb2 as rpb
from a2a_grpc.gen.a2agrpc.registry.v1 import registry_pb2_grpc as rpb_grpc

__all__ = ["SERVICE", "SERVICE_NAME", "rpb", "rpb_grpc"]

SERVICE = rpb.DESCRIPTOR.services_by_name["AgentRegistryService"]
SERVICE_NAME = SERVICE.full_name
