"""The legacy dialects as one Feature of the server (:class:`Dialects`).

What they add to a server that serves A2A v1.0 (docs/dialects.md):

* on the HTTP gateway (:meth:`Dialects.http_mounts`): the v0.1 and v0.3
  JSON-RPC methods at the v1.0 JSON-RPC URL (:mod:`a2a_grpc.dialects._v01calls`,
  :mod:`a2a_grpc.dialects._jsonrpc`), the tutorial's ``/tasks/send`` routes
  (:mod:`a2a_grpc.dialects._tutorial`), the v0.3 HTTP+JSON routes under
  ``prefix + "/v1/"`` (:mod:`a2a_grpc.dialects._v03rest`; a ``/v1/...``
  request with ``A2A-Version: 1.0`` is v1.0 with the tenant ``v1``), and the
  card in the caller's dialect at both card paths (the v0.3 hybrid card by
  ``A2A-Version``; the v0.1 fields at ``/.well-known/agent.json``);
* on gRPC (:meth:`Dialects.grpc_services`): ``a2a.v1.A2AService``, the v0.3
  service (:mod:`a2a_grpc.dialects._v03grpc`);
* to push delivery (:meth:`Dialects.push_bodies`): the v0.3 and v0.1 bodies
  (:mod:`a2a_grpc.dialects._push`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a_grpc.core.features import Feature, GrpcService, PushBody
from a2a_grpc.types import pb

__all__ = ["Dialects"]


class Dialects(Feature):
    """The v0.3, v0.1 and tutorial dialects (see the module docstring)."""

    def push_bodies(self) -> Mapping[str, PushBody]:
        from a2a_grpc.dialects._push import PUSH_BODIES

        return PUSH_BODIES

    def http_mounts(self) -> Sequence[Callable[[Any], None]]:
        return (mount,)

    def grpc_services(self, servicer: Any, card: Callable[[], pb.AgentCard]) -> Sequence[GrpcService]:
        from a2a_grpc.dialects._v03grpc import SERVICE, V03Servicer, abort_v03
        from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc

        return (
            GrpcService(
                V03Servicer(servicer, card), a2a_pb2_grpc.add_A2AServiceServicer_to_server, SERVICE, abort_v03
            ),
        )


def mount(gateway: Any) -> None:
    """Adds the dialects to ``gateway`` (an
    :class:`a2a_grpc.bindings._http.app.Gateway`): JSON-RPC methods, card
    renderings, the tutorial's routes (sharing ``GET /tasks/{id}`` with the
    v1.0 binding when there is no REST prefix), then the ``/v1/`` routes."""
    from a2a_grpc.bindings._http.app import CARD_PATHS
    from a2a_grpc.bindings._http.fallback import UNROUTED_PATH
    from a2a_grpc.dialects._jsonrpc import JsonRpcDialect
    from a2a_grpc.dialects._tutorial import TutorialRoutes
    from a2a_grpc.dialects._v01calls import V01JsonRpc
    from a2a_grpc.dialects._v03rest import V03RestBinding

    servicer, rest, keepalive, stopping = gateway.servicer, gateway.rest, gateway.keepalive, gateway.stopping
    v03 = JsonRpcDialect(servicer, keepalive=keepalive, stopping=stopping)
    gateway.add_jsonrpc_methods(V01JsonRpc(servicer, v03, keepalive=keepalive, stopping=stopping))
    gateway.render_card(CARD_PATHS[0], _card_json)
    gateway.render_card(CARD_PATHS[1], _v01_card_json(gateway.jsonrpc_path))
    tutorial = TutorialRoutes(
        servicer, None if gateway.prefix else rest.handle, keepalive=keepalive, stopping=stopping
    )
    for route in tutorial.routes():  # ahead of the v1.0 catch-all: GET /tasks/{id} is shared
        gateway.add_route(*route)
    v03rest = V03RestBinding(
        servicer, rest, gateway.card, prefix=gateway.prefix, keepalive=keepalive, stopping=stopping
    )
    gateway.add_route("*", gateway.prefix + "/v1" + UNROUTED_PATH, v03rest.handle)  # v0.3, else tenant "v1"


def _version(request: Any) -> str:
    return str(request.headers.get("A2A-Version") or request.query.get("A2A-Version", ""))


def _card_json(card: pb.AgentCard, request: Any) -> str:
    """The card in the dialect of the caller's ``A2A-Version`` (header or query)."""
    from a2a_grpc.dialects._v03 import card_json

    return card_json(card, _version(request))


def _v01_card_json(jsonrpc_path: str) -> Callable[[pb.AgentCard, Any], str]:
    """The card at ``/.well-known/agent.json``: the pure v1.0 card for
    ``A2A-Version: 1.x``, else the v0.3 hybrid card plus the v0.1 fields."""
    from a2a_grpc.dialects import _v01 as v01
    from a2a_grpc.protocol import protojson

    def render(card: pb.AgentCard, request: Any) -> str:
        if _version(request).strip().startswith("1."):
            return protojson.to_json(card)
        url = str(request.url.with_path(jsonrpc_path).with_query(None))
        return protojson.dumps(v01.card(protojson.to_dict(card), url))

    return render
