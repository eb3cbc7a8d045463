"""REST request building from the proto's google.api.http rules (digest §5.2-5.3)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from a2a_grpc.bindings._http.rest import RestBinding
from a2a_grpc.client._base import SERVICE, CallOptions, method
from a2a_grpc.client._rest import RestTransport, _candidates, routes_for
from a2a_grpc.protocol._httprule import compile_service
from a2a_grpc.types import pb


def test_every_rpc_has_a_route() -> None:
    assert all(routes_for(m) for m in SERVICE.methods)


def test_paths_without_tenant_percent_encode_variables() -> None:
    cands = _candidates(method("GetTask"), pb.GetTaskRequest(id="a/b c"))
    assert [(c.route.http_method, c.path) for c in cands] == [("GET", "/tasks/a%2Fb%20c")]


def test_tenant_requests_only_use_tenant_routes() -> None:
    cands = _candidates(method("GetTask"), pb.GetTaskRequest(id="t", tenant="acme"))
    assert [(c.route.http_method, c.path) for c in cands] == [("GET", "/acme/tasks/t")]


def test_subscribe_tries_post_then_get() -> None:
    cands = _candidates(method("SubscribeToTask"), pb.SubscribeToTaskRequest(id="t"))
    assert [(c.route.http_method, c.path) for c in cands] == [
        ("POST", "/tasks/t:subscribe"),
        ("GET", "/tasks/t:subscribe"),
    ]


def _verb_demo() -> Any:
    """A made-up service whose rule binds one path under GET (first) and POST."""
    fd = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="verbdemo/v1/verbdemo.proto", package="verbdemo.v1", syntax="proto3"
    )
    file.dependency.append("google/api/annotations.proto")
    req = file.message_type.add(name="Req")
    req.field.add(name="name", number=1, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL, json_name="name")
    rule = http_pb2.HttpRule(get="/v1/things/{name}:watch")
    rule.additional_bindings.add(post="/v1/things/{name}:watch", body="*")
    m = file.service.add(name="Verbs").method.add(
        name="Watch", input_type=".verbdemo.v1.Req", output_type=".verbdemo.v1.Req"
    )
    m.options.Extensions[annotations_pb2.http].CopyFrom(rule)
    pool = descriptor_pool.Default()
    try:
        return pool.FindServiceByName("verbdemo.v1.Verbs")
    except KeyError:
        pool.Add(file)
        return pool.FindServiceByName("verbdemo.v1.Verbs")


def test_the_verb_tried_first_comes_from_the_rules() -> None:
    """No table of method names: a route taking the whole request as body goes first, whatever the
    method is called, and the declared order is otherwise kept (the gateway's order is untouched)."""
    m = _verb_demo().methods_by_name["Watch"]
    assert [r.http_method for r in compile_service(m.containing_service).routes] == ["GET", "POST"]
    assert [str(r) for r in routes_for(m)] == [
        "POST /v1/things/{name}:watch -> Watch",
        "GET /v1/things/{name}:watch -> Watch",
    ]
    # The A2A methods keep the verbs they had: only SubscribeToTask has two, POST first.
    firsts = {m.name: routes_for(m)[0].http_method for m in SERVICE.methods}
    assert {name for name, verb in firsts.items() if verb == "POST"} == {
        "SendMessage",
        "SendStreamingMessage",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
    }
    assert {
        len({r.http_method for r in routes_for(m)}) for m in SERVICE.methods if m.name != "SubscribeToTask"
    } == {1}


def test_missing_path_value_gives_no_route() -> None:
    assert _candidates(method("GetTask"), pb.GetTaskRequest()) == []


# --- the client and the gateway read the same rules --------------------------
#
# A made-up service whose rules use what the A2A proto does not: a binding
# nested inside an additional binding, a multi-segment variable, and a body
# that is one field with a path variable inside it. The old client read only
# one level of additional_bindings, percent-encoded the '/' of multi-segment
# values and dropped the whole body field when a path variable sat inside it;
# the gateway served all three. Both now use a2a_grpc.protocol._httprule.


def _demo_service() -> Any:
    fd = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="ruledemo/v1/ruledemo.proto", package="ruledemo.v1", syntax="proto3"
    )
    file.dependency.append("google/api/annotations.proto")
    inner = file.message_type.add(name="Inner")
    inner.field.add(name="name", number=1, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL, json_name="name")
    inner.field.add(name="tags", number=2, type=fd.TYPE_STRING, label=fd.LABEL_REPEATED, json_name="tags")
    req = file.message_type.add(name="Req")
    req.field.add(name="name", number=1, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL, json_name="name")
    req.field.add(name="path", number=2, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL, json_name="path")
    req.field.add(
        name="inner",
        number=3,
        type=fd.TYPE_MESSAGE,
        type_name=".ruledemo.v1.Inner",
        label=fd.LABEL_OPTIONAL,
        json_name="inner",
    )
    req.field.add(name="limit", number=4, type=fd.TYPE_INT64, label=fd.LABEL_OPTIONAL, json_name="limit")
    nested = http_pb2.HttpRule(get="/v1/files/{path=**}")
    nested.additional_bindings.add(get="/v1/limits/{limit}")
    get = http_pb2.HttpRule(get="/v1/{name=things/*}")
    get.additional_bindings.append(nested)
    service = file.service.add(name="Demo")
    for name, rule in {
        "Put": http_pb2.HttpRule(put="/v1/{inner.name}/items:put", body="inner"),
        "Get": get,
    }.items():
        m = service.method.add(name=name, input_type=".ruledemo.v1.Req", output_type=".ruledemo.v1.Req")
        m.options.Extensions[annotations_pb2.http].CopyFrom(rule)
    pool = descriptor_pool.Default()  # where google/api/annotations.proto already is
    try:
        return pool.FindServiceByName("ruledemo.v1.Demo")
    except KeyError:
        pool.Add(file)
        return pool.FindServiceByName("ruledemo.v1.Demo")


class _Echo:
    async def Put(self, request: Any, context: Any) -> Any:
        return request

    async def Get(self, request: Any, context: Any) -> Any:
        return request


@pytest.fixture
async def demo() -> AsyncIterator[tuple[Any, RestTransport]]:
    service = _demo_service()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", RestBinding(_Echo(), compile_service(service)).handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    transport = RestTransport(f"http://127.0.0.1:{runner.addresses[0][1]}", CallOptions())
    try:
        yield service, transport
    finally:
        await transport.close()
        await runner.cleanup()


def test_client_and_gateway_read_the_same_bindings() -> None:
    service = _demo_service()
    table = compile_service(service)
    for m in service.methods:
        assert routes_for(m) == tuple(r for r in table.routes if r.method is m)
    assert [str(r) for r in routes_for(service.methods_by_name["Get"])] == [
        "GET /v1/{name=things/*} -> Get",
        "GET /v1/files/{path=**} -> Get",
        "GET /v1/limits/{limit} -> Get",
    ]


async def test_a_nested_binding_is_used(demo: tuple[Any, RestTransport]) -> None:
    service, transport = demo
    m = service.methods_by_name["Get"]
    req = message_factory.GetMessageClass(m.input_type)
    # Only the binding nested two levels deep can carry a request with just a limit.
    assert await transport.unary(m, req(limit=7), 5) == req(limit=7)


async def test_a_multi_segment_variable_keeps_its_slashes(demo: tuple[Any, RestTransport]) -> None:
    service, transport = demo
    m = service.methods_by_name["Get"]
    req = message_factory.GetMessageClass(m.input_type)
    assert await transport.unary(m, req(name="things/a b"), 5) == req(name="things/a b")
    assert await transport.unary(m, req(path="a/b c/d.txt"), 5) == req(path="a/b c/d.txt")
    # A value that does not fit the pattern makes that binding unusable.
    assert [c.path for c in _candidates(m, req(name="other/x"))] == []


async def test_a_body_field_keeps_what_the_path_does_not_carry(demo: tuple[Any, RestTransport]) -> None:
    service, transport = demo
    m = service.methods_by_name["Put"]
    req = message_factory.GetMessageClass(m.input_type)
    sent = req(inner={"name": "n1", "tags": ["a", "b"]}, limit=3)
    (call,) = _candidates(m, sent)
    assert (call.route.http_method, call.path, call.body, call.query) == (
        "PUT",
        "/v1/n1/items:put",
        {"tags": ["a", "b"]},
        (("limit", "3"),),
    )
    assert await transport.unary(m, sent, 5) == sent
