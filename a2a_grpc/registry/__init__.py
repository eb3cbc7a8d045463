"""An agent registry defined in proto (``proto/a2agrpc/registry/v1/registry.proto``).

Agents register by base URL; the registry fetches their Agent Cards from the
well-known path, validates them (:mod:`.fetch`, under the webhook SSRF
rules), keeps them in SQL (:mod:`.store`), finds agents by skill, tag, media
type, binding, health or free text (:mod:`.query`), checks their health
periodically (:mod:`.health`) and streams its changes (WatchAgents).
:class:`RegistryServer` serves it on gRPC, JSON-RPC and HTTP+JSON through
the gateway's bindings; :class:`RegistryClient` calls it over gRPC.
Not part of A2A.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RegistryClient", "RegistryConfig", "RegistryServer"]


def __getattr__(name: str) -> Any:
    if name in ("RegistryConfig", "RegistryServer"):
        from a2a_grpc.registry import _server as server

        return getattr(server, name)
    if name == "RegistryClient":
        from a2a_grpc.registry._client import RegistryClient

        return RegistryClient
    raise AttributeError(name)
