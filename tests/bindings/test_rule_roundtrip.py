"""expand (the client's side of an HTTP rule) and match (the gateway's) are one
reader: for every binding of every RPC of the proto, the HTTP request expanded
from a request message is matched back to that same binding, and the message
the gateway builds from its path, body and query equals the one sent."""

from __future__ import annotations

import random

import pytest
from google.protobuf import message_factory

from a2a_grpc.bindings._http.rest import build_request
from a2a_grpc.protocol import _httprule as httprule
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb
from tests.randmsg import fill

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
TABLE = httprule.compile_service(SERVICE)
#: Path values with what a path must escape: '/', ' ', a custom verb, '%', non-ASCII.
PATH_VALUES = {"tenant": "acme corp/1", "id": "t/1 x:cancel%", "task_id": "task:subscribe 世"}
SEEDS = range(25)


def _known_enums(msg: object) -> None:
    """Unknown enum numbers cannot be sent as query parameters; use known ones."""
    for fd, value in list(msg.ListFields()):  # type: ignore[attr-defined]
        if fd.enum_type is not None and not fd.is_repeated and value not in fd.enum_type.values_by_number:
            setattr(msg, fd.name, fd.enum_type.values[-1].number)


def _request(route: httprule.Route, seed: int) -> object:
    msg = message_factory.GetMessageClass(route.method.input_type)()
    fill(msg, random.Random(seed))
    if not route.body:
        _known_enums(msg)
    for name in ("tenant", "id", "task_id"):
        if name in msg.DESCRIPTOR.fields_by_name:
            setattr(msg, name, PATH_VALUES[name] if name in route.field_paths else "")
    return msg


@pytest.mark.parametrize("route", TABLE.routes, ids=str)
def test_expand_then_match_gives_the_same_binding_and_fields(route: httprule.Route) -> None:
    for seed in SEEDS:
        request = _request(route, seed)
        call = route.expand(request, protojson.to_dict)
        assert call is not None, (str(route), request)
        found = TABLE.match(call.route.http_method, call.path)
        assert found.route is route, (call.path, str(found.route))
        assert found.path_params == {p: PATH_VALUES[p] for p in route.field_paths}
        # A field the path carries is sent once: not in the body, not in the query.
        json_names = {request.DESCRIPTOR.fields_by_name[p].json_name for p in route.field_paths}
        assert not json_names & {k for k, _ in call.query}
        assert not (isinstance(call.body, dict) and json_names & call.body.keys())
        # What the ProtoJSON codec itself keeps (e.g. a -0.0 deep in a Struct
        # comes back as 0) is the codec tests' business: compare with its round trip.
        expected = protojson.parse(protojson.to_dict(request), type(request)())
        assert build_request(found, call.body, call.query) == expected, (str(route), seed)


def test_tenant_bindings_are_all_covered() -> None:
    tenant = [r for r in TABLE.routes if "tenant" in r.field_paths]
    assert len(tenant) == len(TABLE.routes) // 2
    assert {r.method.name for r in tenant} == {m.name for m in SERVICE.methods}
