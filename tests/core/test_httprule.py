"""a2a_grpc.protocol._httprule without a transport: templates expanded from values and
matched back, and requests split into path, body and query."""

from __future__ import annotations

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import _httprule as httprule
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]


@pytest.mark.parametrize(
    ("template", "values", "path"),
    [
        ("/tasks/{id=*}", {"id": "a/b c:d%"}, "/tasks/a%2Fb%20c%3Ad%25"),
        ("/tasks/{id}:cancel", {"id": "x"}, "/tasks/x:cancel"),
        ("/{tenant}/message:send", {"tenant": "acme"}, "/acme/message:send"),
        (
            "/v1/{name=projects/*/tasks/*}:get",
            {"name": "projects/p 1/tasks/t"},
            "/v1/projects/p%201/tasks/t:get",
        ),
        ("/files/{path=**}", {"path": "a/b c/d"}, "/files/a/b%20c/d"),
        ("/files/{path=docs/**}", {"path": "docs"}, "/files/docs"),
        ("/files/{path=docs/**}", {"path": "docs/x/y"}, "/files/docs/x/y"),
    ],
)
def test_expand_and_match_back(template: str, values: dict[str, str], path: str) -> None:
    compiled = httprule.parse_template(template)
    assert compiled.expand(values) == path
    components = path[1:].split("/")
    if compiled.verb:
        components[-1] = components[-1].removesuffix(":" + compiled.verb)
    assert compiled.match(components) == values


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("/tasks/{id}", {}),  # no value
        ("/tasks/{id}", {"id": ""}),  # empty value
        ("/v1/{name=projects/*}", {"name": "projects"}),  # too few segments
        ("/v1/{name=projects/*}", {"name": "projects/a/b"}),  # too many
        ("/v1/{name=projects/*}", {"name": "other/a"}),  # literal differs
        ("/v1/{name=projects/*}", {"name": "projects/"}),  # '*' needs a segment
        ("/v1/{name=things/**}", {"name": "stuff/x"}),
        ("/v1/*/{id}", {"id": "x"}),  # a wildcard outside a variable has no value
    ],
)
def test_values_that_do_not_fit_give_no_path(template: str, values: dict[str, str]) -> None:
    assert httprule.parse_template(template).expand(values) is None


def test_nested_bindings_are_read_depth_first_in_declaration_order() -> None:
    get_task = SERVICE.methods_by_name["GetTask"]
    assert [str(r) for r in httprule.routes(get_task)] == [
        "GET /tasks/{id=*} -> GetTask",
        "GET /{tenant}/tasks/{id=*} -> GetTask",
    ]
    subscribe = SERVICE.methods_by_name["SubscribeToTask"]
    assert [(r.http_method, r.template.source, r.body) for r in httprule.routes(subscribe)] == [
        ("GET", "/tasks/{id=*}:subscribe", ""),
        ("GET", "/{tenant}/tasks/{id=*}:subscribe", ""),
        ("POST", "/tasks/{id=*}:subscribe", "*"),
        ("POST", "/{tenant}/tasks/{id=*}:subscribe", "*"),
    ]


def _route(rpc: str, template: str) -> httprule.Route:
    return next(r for r in httprule.routes(SERVICE.methods_by_name[rpc]) if r.template.source == template)


def test_expand_splits_path_body_and_query() -> None:
    send = _route("SendMessage", "/{tenant}/message:send")
    msg = pb.SendMessageRequest(tenant="acme", message=pb.Message(message_id="m1", role=pb.ROLE_USER))
    call = send.expand(msg, protojson.to_dict)
    assert call is not None
    assert (call.path, call.body, call.query) == (
        "/acme/message:send",
        {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": []}},
        (),
    )
    assert send.expand(pb.SendMessageRequest(), protojson.to_dict) is None  # no tenant for /{tenant}

    listing = _route("ListTasks", "/tasks")
    req = pb.ListTasksRequest(status=pb.TASK_STATE_WORKING, page_size=5, include_artifacts=True)
    call = listing.expand(req, protojson.to_dict)
    assert call is not None and call.body is None
    assert call.query == (("status", "TASK_STATE_WORKING"), ("pageSize", "5"), ("includeArtifacts", "true"))

    get = _route("GetTask", "/tasks/{id=*}")
    call = get.expand(pb.GetTaskRequest(id="t1", history_length=0), protojson.to_dict)
    assert call is not None and (call.path, call.query) == ("/tasks/t1", (("historyLength", "0"),))


def test_query_forms() -> None:
    assert httprule.query_pairs(
        {"status": "TASK_STATE_WORKING", "pageSize": 5, "includeArtifacts": False, "x": ["a", "b"]}
    ) == (
        ("status", "TASK_STATE_WORKING"),
        ("pageSize", "5"),
        ("includeArtifacts", "false"),
        ("x", "a"),
        ("x", "b"),
    )
    with pytest.raises(A2AError) as info:
        httprule.query_pairs({"metadata": {"a": 1}})
    assert info.value.code is ErrorCode.INVALID_PARAMS
