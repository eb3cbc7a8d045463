"""The REST route table compiled from the proto's google.api.http rules."""

from __future__ import annotations

import pytest
from google.api import annotations_pb2

from a2a_grpc.protocol._httprule import (
    MethodNotAllowed,
    RouteNotFound,
    TemplateError,
    compile_service,
    parse_template,
)
from a2a_grpc.types import pb

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
TABLE = compile_service(SERVICE)


def _rule_count(rule) -> int:
    return 1 + sum(_rule_count(r) for r in rule.additional_bindings)


def test_every_http_rule_of_the_proto_becomes_a_route_in_declaration_order():
    expected = []
    for method in SERVICE.methods:
        rule = method.GetOptions().Extensions[annotations_pb2.http]
        expected.extend([method.name] * _rule_count(rule))
    assert [r.method.name for r in TABLE.routes] == expected
    # Every RPC is reachable over REST, each also under /{tenant}.
    assert {r.method.name for r in TABLE.routes} == {m.name for m in SERVICE.methods}
    for method in SERVICE.methods:
        sources = [r.template.source for r in TABLE.routes if r.method is method]
        assert any(s.startswith("/{tenant}/") for s in sources), method.name


@pytest.mark.parametrize(
    ("verb", "path", "rpc", "params"),
    [
        ("POST", "/message:send", "SendMessage", {}),
        ("POST", "/acme/message:send", "SendMessage", {"tenant": "acme"}),
        ("POST", "/message:stream", "SendStreamingMessage", {}),
        ("GET", "/tasks/t1", "GetTask", {"id": "t1"}),
        ("GET", "/acme/tasks/t1", "GetTask", {"tenant": "acme", "id": "t1"}),
        ("GET", "/tasks", "ListTasks", {}),
        ("GET", "/acme/tasks", "ListTasks", {"tenant": "acme"}),
        ("POST", "/tasks/t1:cancel", "CancelTask", {"id": "t1"}),
        ("POST", "/acme/tasks/t1:cancel", "CancelTask", {"tenant": "acme", "id": "t1"}),
        ("GET", "/tasks/t1:subscribe", "SubscribeToTask", {"id": "t1"}),
        ("POST", "/tasks/t1:subscribe", "SubscribeToTask", {"id": "t1"}),
        ("POST", "/acme/tasks/t1:subscribe", "SubscribeToTask", {"tenant": "acme", "id": "t1"}),
        ("POST", "/tasks/t1/pushNotificationConfigs", "CreateTaskPushNotificationConfig", {"task_id": "t1"}),
        ("GET", "/tasks/t1/pushNotificationConfigs", "ListTaskPushNotificationConfigs", {"task_id": "t1"}),
        (
            "GET",
            "/tasks/t1/pushNotificationConfigs/c1",
            "GetTaskPushNotificationConfig",
            {"task_id": "t1", "id": "c1"},
        ),
        (
            "DELETE",
            "/acme/tasks/t1/pushNotificationConfigs/c1",
            "DeleteTaskPushNotificationConfig",
            {"tenant": "acme", "task_id": "t1", "id": "c1"},
        ),
        ("GET", "/extendedAgentCard", "GetExtendedAgentCard", {}),
        ("GET", "/acme/extendedAgentCard", "GetExtendedAgentCard", {"tenant": "acme"}),
    ],
)
def test_match(verb, path, rpc, params):
    found = TABLE.match(verb, path)
    assert found.route.method.name == rpc
    assert found.path_params == params


def test_ambiguous_paths_first_declared_wins():
    # GET /tasks/tasks fits GetTask(id) and ListTasks(tenant): GetTask is declared first.
    found = TABLE.match("GET", "/tasks/tasks")
    assert (found.route.method.name, found.path_params) == ("GetTask", {"id": "tasks"})
    # GET /t1/tasks only fits ListTasks under tenant t1.
    found = TABLE.match("GET", "/t1/tasks")
    assert (found.route.method.name, found.path_params) == ("ListTasks", {"tenant": "t1"})
    # A tenant literally named "tasks" with a task id: GetTask under that tenant.
    found = TABLE.match("GET", "/tasks/tasks/x")
    assert (found.route.method.name, found.path_params) == ("GetTask", {"tenant": "tasks", "id": "x"})
    # A tenant named "message" still reaches the tenant form of SendMessage.
    found = TABLE.match("POST", "/message/message:send")
    assert (found.route.method.name, found.path_params) == ("SendMessage", {"tenant": "message"})


def test_verb_is_its_own_token():
    # The verb is peeled off the last segment: GetTask (no verb) never swallows ":cancel".
    assert TABLE.match("POST", "/tasks/abc:cancel").route.method.name == "CancelTask"
    with pytest.raises(MethodNotAllowed) as exc:
        TABLE.match("GET", "/tasks/abc:cancel")
    assert exc.value.allowed == ("POST",)
    # A colon that is no known verb stays part of the id.
    found = TABLE.match("GET", "/tasks/a:b")
    assert (found.route.method.name, found.path_params) == ("GetTask", {"id": "a:b"})
    # Unknown verb on a POST path: nothing matches.
    with pytest.raises(RouteNotFound):
        TABLE.match("POST", "/message:shout")


def test_percent_decoding_of_path_variables():
    found = TABLE.match("GET", "/tasks/a%2Fb%20c%E4%B8%96")
    assert found.path_params == {"id": "a/b c世"}
    with pytest.raises(UnicodeDecodeError):
        TABLE.match("GET", "/tasks/%FF")


@pytest.mark.parametrize("path", ["/", "/nope", "/tasks/", "/tasks/a/b/c/d", "//tasks", "/tasks/t1/x", "x"])
def test_unknown_path_is_not_found(path):
    with pytest.raises(RouteNotFound):
        TABLE.match("GET", path)


@pytest.mark.parametrize(
    ("verb", "path", "allowed"),
    [
        ("DELETE", "/tasks", ("GET",)),
        ("GET", "/message:send", ("POST",)),
        ("PUT", "/tasks/t1:subscribe", ("GET", "POST")),
        ("POST", "/tasks/t1/pushNotificationConfigs/c1", ("DELETE", "GET")),
        ("PATCH", "/tasks/t1/pushNotificationConfigs", ("GET", "POST")),
    ],
)
def test_known_path_with_wrong_verb_is_not_allowed(verb, path, allowed):
    with pytest.raises(MethodNotAllowed) as exc:
        TABLE.match(verb, path)
    assert exc.value.allowed == allowed


def test_template_grammar():
    t = parse_template("/v1/{name=projects/*/tasks/*}:get")
    assert t.verb == "get"
    assert t.match(["v1", "projects", "p", "tasks", "t"]) == {"name": "projects/p/tasks/t"}
    assert t.match(["v1", "projects", "p", "other", "t"]) is None
    deep = parse_template("/files/{path=**}")
    assert deep.match(["files", "a", "b", "c"]) == {"path": "a/b/c"}
    assert parse_template("/a/{x}").match(["a", "1"]) == {"x": "1"}
    assert parse_template("/a/*/b").match(["a", "z", "b"]) == {}
    for bad in ("tasks", "/a/{x", "/a/**/b", "/a:", "/{=*}", "/a/b=c"):
        with pytest.raises(TemplateError):
            parse_template(bad)


def test_body_mapping_comes_from_the_rule():
    bodies = {(r.http_method, r.template.source): r.body for r in TABLE.routes}
    assert bodies[("POST", "/message:send")] == "*"
    assert bodies[("GET", "/tasks/{id=*}")] == ""
    assert bodies[("POST", "/tasks/{id=*}:subscribe")] == "*"
