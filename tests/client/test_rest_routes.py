"""REST request building from the proto's google.api.http rules (digest §5.2-5.3)."""

from __future__ import annotations

import pytest

from a2a_grpc.client.base import SERVICE, method
from a2a_grpc.client.rest import _candidates, _query, routes_for
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb


def test_every_rpc_has_a_route() -> None:
    assert all(routes_for(m) for m in SERVICE.methods)


def test_paths_without_tenant_percent_encode_variables() -> None:
    cands = _candidates(method("GetTask"), pb.GetTaskRequest(id="a/b c"))
    assert [(r.verb, p) for r, p in cands] == [("GET", "/tasks/a%2Fb%20c")]


def test_tenant_requests_only_use_tenant_routes() -> None:
    cands = _candidates(method("GetTask"), pb.GetTaskRequest(id="t", tenant="acme"))
    assert [(r.verb, p) for r, p in cands] == [("GET", "/acme/tasks/t")]


def test_subscribe_tries_post_then_get() -> None:
    cands = _candidates(method("SubscribeToTask"), pb.SubscribeToTaskRequest(id="t"))
    assert [(r.verb, p) for r, p in cands] == [("POST", "/tasks/t:subscribe"), ("GET", "/tasks/t:subscribe")]


def test_missing_path_value_gives_no_route() -> None:
    assert _candidates(method("GetTask"), pb.GetTaskRequest()) == []


def test_query_forms() -> None:
    assert _query(
        {"status": "TASK_STATE_WORKING", "pageSize": 5, "includeArtifacts": False, "x": ["a", "b"]}
    ) == [
        ("status", "TASK_STATE_WORKING"),
        ("pageSize", "5"),
        ("includeArtifacts", "false"),
        ("x", "a"),
        ("x", "b"),
    ]
    with pytest.raises(A2AError) as info:
        _query({"metadata": {"a": 1}})
    assert info.value.code is ErrorCode.INVALID_PARAMS
