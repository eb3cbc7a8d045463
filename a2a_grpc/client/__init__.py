"""The a2a-grpc Python client: one async API over gRPC, JSON-RPC and REST.

``await A2AClient.connect(base_url)`` fetches and validates the Agent Card,
picks the first interface (in the card's order) whose binding the caller
allows, falls back to the next one when it cannot connect, and sends
``A2A-Version: 1.0`` on every call. Requests and responses are the generated
protos in :mod:`a2a_grpc.types`; every failure is an
:class:`~a2a_grpc.errors.A2AError` with the same ``ErrorCode`` on every binding,
and a stream that stops before the task is terminal or interrupted raises
:class:`StreamTruncatedError`.
"""

from a2a_grpc.client._auth import Credentials
from a2a_grpc.client._base import CallOptions, Transport
from a2a_grpc.client._card import BINDINGS, fetch_card, matching_interfaces, parse_card
from a2a_grpc.client._client import DEFAULT_BINDINGS, A2AClient, make_transport
from a2a_grpc.client._errors import StreamTruncatedError
from a2a_grpc.errors import A2AError, ErrorCode  # noqa: F401  (importable here; public in a2a_grpc.errors)

__all__ = [
    "BINDINGS",
    "DEFAULT_BINDINGS",
    "A2AClient",
    "CallOptions",
    "Credentials",
    "StreamTruncatedError",
    "Transport",
    "fetch_card",
    "make_transport",
    "matching_interfaces",
    "parse_card",
]
