"""Legacy A2A dialects in front of the one v1.0 servicer (issue 13).

A dialect is an adapter, never a second handler: it converts a legacy
request into the v1.0 request message, calls the SAME
:class:`~a2a_grpc.bindings._servicer.A2AServicer` method (so the same interceptor chain
runs), and converts the answer back. The conversion is table-driven
(:mod:`a2a_grpc.dialects._mapping` is the engine, :mod:`a2a_grpc.dialects._v03` the
declarative table of A2A v0.3); :mod:`a2a_grpc.dialects._jsonrpc` serves the v0.3
JSON-RPC methods at the v1.0 JSON-RPC URL. The choices made for every lossy
mapping are listed in docs/dialects.md.

The server serves them as one :class:`~a2a_grpc.core.features.Feature`,
:class:`a2a_grpc.dialects._feature.Dialects`: its HTTP mounts, the v0.3 gRPC
service and the legacy push bodies (the bindings and push delivery import
no dialect).
"""
