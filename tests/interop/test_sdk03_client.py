"""The official Python SDK **0.3.x** client (``a2a-sdk[grpc]==0.3.*``) drives OUR
server over each v0.3 binding (issue 13 items 1 and 2): JSON-RPC at the v1.0
JSON-RPC URL, HTTP+JSON under ``/v1/...`` and gRPC (``a2a.v1.A2AService``),
each chosen by the SDK's ``ClientFactory`` from the card.

``tests/interop/sdk03_client.py`` runs in its own virtualenv (made once by the
``sdk03_python`` fixture from PyPI) and prints one JSON line per step; the
SDK validates every answer with its own v0.3 pydantic models, so a wrong
``kind``, state string or missing required field fails the step.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.conftest import HERE, LiveServer, run_json_lines

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module", params=["jsonrpc", "rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def steps(sdk03_python: str, our_server: LiveServer, transport: str) -> dict[str, Any]:
    assert our_server.webhook is not None
    script = str(HERE / "sdk03_client.py")
    argv = [sdk03_python, script, our_server.base_url, our_server.webhook.base_url, transport]
    return run_json_lines(argv, timeout=120)


def ok(steps: dict[str, Any], name: str) -> Any:
    assert name in steps, f"step {name!r} did not run: {sorted(steps)}"
    record = steps[name]
    assert record["ok"], f"step {name!r} failed: {record['error']}"
    return record["value"]


def test_card_is_read_by_the_03_resolver(steps: dict[str, Any], our_server: LiveServer) -> None:
    card = ok(steps, "card")
    assert card["name"] == "Interop Agent"
    assert card["url"] == our_server.base_url + "/"
    assert card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"] == "0.3.0"


def test_send_returns_a_completed_v03_task(steps: dict[str, Any]) -> None:
    task, update = ok(steps, "send")
    assert update is None
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    echo = task["artifacts"][0]
    assert echo["parts"] == [{"kind": "text", "text": "hello 0.3"}]
    assert task["history"][0]["role"] == "user"


def test_stream_ends_with_a_final_status_update(steps: dict[str, Any]) -> None:
    events = ok(steps, "stream")
    updates = [e[1] for e in events if e[1] is not None]
    assert updates, events
    finals = [u for u in updates if u.get("kind") == "status-update" and u["final"]]
    assert len(finals) == 1 and updates[-1] is not None and updates[-1]["final"]
    assert updates[-1]["status"]["state"] == "completed"
    assert any(u["kind"] == "artifact-update" for u in updates)
    assert events[-1][0]["status"]["state"] == "completed"  # the SDK's merged task


def test_get_and_history_length(steps: dict[str, Any]) -> None:
    task = ok(steps, "get")
    assert task["status"]["state"] == "completed"
    assert len(task["history"]) == 1


def test_cancel_of_a_running_task(steps: dict[str, Any]) -> None:
    assert ok(steps, "cancel")["status"]["state"] == "canceled"


def test_resubscribe_follows_to_the_cancel(steps: dict[str, Any]) -> None:
    events = ok(steps, "resubscribe")
    assert events[0][0]["kind"] == "task"
    last_task, last_update = events[-1]
    assert last_task["status"]["state"] == "canceled"
    assert last_update is not None and last_update["final"] is True


def test_resubscribe_on_a_finished_task_sends_it_and_ends(steps: dict[str, Any], transport: str) -> None:
    events = ok(steps, "resubscribe_done")  # C8: the Task, then (not on gRPC) a final status-update
    assert events[0][0]["status"]["state"] == "completed"
    if transport == "grpc":
        assert events == [[events[0][0], None]]
    else:
        assert events[-1][1]["final"] is True


def test_push_config_crud(steps: dict[str, Any], our_server: LiveServer) -> None:
    created = ok(steps, "push_set")
    assert created["pushNotificationConfig"]["id"] == "hook-1"
    assert created["pushNotificationConfig"]["url"].endswith("/v03")
    got = ok(steps, "push_get")
    assert got["taskId"] == created["taskId"] and got["pushNotificationConfig"]["token"] == "tok-03"
    listed, deleted = ok(steps, "push_list"), ok(steps, "push_delete")
    task = created["taskId"]
    if "result" in listed:  # JSON-RPC: a bare array of v0.3 JSON-RPC configs
        assert [c["pushNotificationConfig"]["id"] for c in listed["result"]] == ["hook-1"]
        assert deleted == {"jsonrpc": "2.0", "id": 7, "result": None}
        return
    # REST and gRPC: the v0.3 proto's ListTaskPushNotificationConfigResponse (L-A8)
    assert [c["name"] for c in listed["configs"]] == [f"tasks/{task}/pushNotificationConfigs/hook-1"]
    assert deleted in ({}, {"status": 200, "body": {}})


def test_parts_round_trip(steps: dict[str, Any], transport: str) -> None:
    task, _ = ok(steps, "parts")
    parts = task["artifacts"][0]["parts"]
    if transport == "jsonrpc":
        assert parts[0] == {"kind": "text", "text": "parts", "metadata": {"k": "v"}}
        assert parts[1] == {
            "kind": "file",
            "file": {"bytes": "+/8=", "mimeType": "application/octet-stream", "name": "b.bin"},
        }
    else:  # C5: the v0.3 proto has no part metadata and no file name
        assert parts[0] == {"kind": "text", "text": "parts"}
        assert parts[1] == {"kind": "file", "file": {"bytes": "+/8=", "mimeType": "application/octet-stream"}}
    assert parts[2] == {
        "kind": "file",
        "file": {"uri": "https://example.com/f.txt", "mimeType": "text/plain"},
    }
    assert parts[3] == {"kind": "data", "data": {"a": [1, 2]}}


def test_multi_turn_continues_the_task(steps: dict[str, Any]) -> None:
    first, follow = ok(steps, "multi_turn")
    assert first["status"]["state"] == "input-required"
    assert follow[0]["id"] == first["id"] and follow[0]["status"]["state"] == "completed"


def test_error_has_the_v03_form(steps: dict[str, Any], transport: str) -> None:
    error = ok(steps, "error")
    if transport == "jsonrpc":
        assert error["code"] == -32001
        assert error["data"]["reason"] == "TASK_NOT_FOUND"
    elif transport == "rest":
        assert error["status"] == 404
    else:  # C14: a plain status named by the v0.3 error type
        assert error["code"] == "NOT_FOUND" and error["details"].startswith("TaskNotFoundError: ")


def test_the_sdk_chose_the_transport(steps: dict[str, Any], transport: str, our_server: LiveServer) -> None:
    card = ok(steps, "card")
    urls = {i["transport"]: i["url"] for i in card["additionalInterfaces"]}
    expected = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "grpc": "GRPC"}[transport]
    assert expected in urls
    assert urls["GRPC"] == our_server.grpc_target and urls["HTTP+JSON"] == our_server.base_url
