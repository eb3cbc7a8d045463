"""The official JS SDK **0.3.x** client (``@a2a-js/sdk`` 0.3) drives OUR server
over v0.3 JSON-RPC and v0.3 HTTP+JSON (issue 13): card, send, stream, get,
cancel, resubscribe, push config, parts, multi-turn and one error.

``tests/interop/js03/client.mjs`` runs with the machine's Node from
``tests/interop/js03/node_modules`` — its own ``package.json`` and lock file,
apart from the 1.x SDK in the repository root, installed from npm by the
``js03_node`` fixture on first use — and prints one JSON line per step with the
SDK's own v0.3 objects.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from tests.interop.conftest import HERE, LiveServer, run_json_lines

pytestmark = pytest.mark.interop

JS03 = HERE / "js03"
#: The v0.3 bindings the JS 0.3 client has transports for (it has no gRPC one in 0.3).
JS03_BINDINGS = ("jsonrpc", "rest")


def _installed_version() -> str | None:
    manifest = JS03 / "node_modules" / "@a2a-js" / "sdk" / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text())["version"])


@pytest.fixture(scope="session")
def js03_node() -> str:
    """The machine's ``node``, with ``@a2a-js/sdk`` 0.3.x installed into
    ``tests/interop/js03/node_modules`` (``npm ci`` from the lock file when missing)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed for the JS 0.3 interop test")
    if not (_installed_version() or "").startswith("0.3."):
        cmd = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
        proc = subprocess.run(cmd, cwd=JS03, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            pytest.fail(f"npm ci in {JS03} failed:\n{proc.stderr[-3000:]}")
    assert (_installed_version() or "").startswith("0.3."), _installed_version()
    return node


@pytest.fixture(scope="module", params=JS03_BINDINGS)
def steps(request: pytest.FixtureRequest, js03_node: str, our_server: LiveServer) -> dict[str, Any]:
    assert our_server.webhook is not None
    argv = [
        js03_node,
        str(JS03 / "client.mjs"),
        our_server.base_url,
        request.param,
        our_server.webhook.base_url,
    ]
    return {**run_json_lines(argv, timeout=120), "binding": request.param}


def ok(steps: dict[str, Any], name: str) -> Any:
    assert name in steps, f"step {name!r} did not run: {sorted(steps)}"
    record = steps[name]
    assert record["ok"], f"step {name!r} failed: {record['error']}"
    return record["value"]


def test_card_is_the_v03_card(steps: dict[str, Any], our_server: LiveServer) -> None:
    card = ok(steps, "card")
    assert card["name"] == "Interop Agent"
    assert card["url"] == our_server.base_url + "/" and card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"] == "0.3.0"
    transport = ok(steps, "transport")  # the card's interface of the one transport given
    assert transport == {b: b == steps["binding"] for b in ("jsonrpc", "rest")}


def test_send_returns_a_completed_v03_task(steps: dict[str, Any]) -> None:
    task = ok(steps, "send")
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "hello js 0.3"}]
    assert task["history"][0]["role"] == "user" and task["history"][0]["kind"] == "message"


def test_stream_is_v03_events_ending_with_one_final(steps: dict[str, Any]) -> None:
    events = ok(steps, "stream")
    assert events[0]["kind"] == "task"
    kinds = [e["kind"] for e in events[1:]]
    assert set(kinds) <= {"status-update", "artifact-update"} and "artifact-update" in kinds, kinds
    updates = [e for e in events if e["kind"] == "status-update"]
    assert [u["final"] for u in updates] == [False] * (len(updates) - 1) + [True]
    assert updates[-1]["status"]["state"] == "completed" and updates[-1]["taskId"] == events[0]["id"]
    texts = [p["text"] for e in events if e["kind"] == "artifact-update" for p in e["artifact"]["parts"]]
    assert texts == ["stream js 0.3"]


def test_get_with_history_length(steps: dict[str, Any]) -> None:
    task = ok(steps, "get")
    assert task["status"]["state"] == "completed" and len(task["history"]) == 1


def test_cancel_of_a_running_task(steps: dict[str, Any]) -> None:
    task = ok(steps, "cancel")
    assert task["kind"] == "task" and task["status"]["state"] == "canceled"


def test_resubscribe_follows_to_the_cancel(steps: dict[str, Any]) -> None:
    events = ok(steps, "resubscribe")
    assert events[0]["kind"] == "task" and events[0]["status"]["state"] == "working"
    assert events[-1]["kind"] == "status-update" and events[-1]["final"] is True
    assert events[-1]["status"]["state"] == "canceled"


def test_resubscribe_on_a_finished_task_sends_it_and_ends(steps: dict[str, Any]) -> None:
    events = ok(steps, "resubscribe_done")  # C8
    assert [e["kind"] for e in events] == ["task", "status-update"]
    assert events[0]["status"]["state"] == "completed" and events[1]["final"] is True


def test_push_config_crud(steps: dict[str, Any]) -> None:
    made = ok(steps, "push_set")
    config = made["pushNotificationConfig"]
    assert config["id"] == "hook-js03" and config["url"].endswith("/js03") and config["token"] == "tok-js03"
    got = ok(steps, "push_get")
    assert got["taskId"] == made["taskId"] and got["pushNotificationConfig"] == config
    listed = ok(steps, "push_list")
    assert [c["pushNotificationConfig"]["id"] for c in listed] == ["hook-js03"]
    assert ok(steps, "push_delete") == []


def test_every_part_kind_round_trips(steps: dict[str, Any]) -> None:
    parts = ok(steps, "parts")["artifacts"][0]["parts"]
    text: dict[str, Any] = {"kind": "text", "text": "parts", "metadata": {"k": "v"}}
    raw: dict[str, Any] = {"bytes": "+/8=", "mimeType": "application/octet-stream", "name": "b.bin"}
    if steps["binding"] == "rest":  # C5: the v0.3 proto has no Part metadata and no file name
        del text["metadata"], raw["name"]
    assert parts == [
        text,
        {"kind": "file", "file": raw},
        {"kind": "file", "file": {"uri": "https://example.com/f.txt", "mimeType": "text/plain"}},
        {"kind": "data", "data": {"a": [1, 2]}},
    ]


def test_multi_turn_continues_the_task(steps: dict[str, Any]) -> None:
    first, follow = ok(steps, "multi_turn")
    assert first["status"]["state"] == "input-required"
    assert follow["id"] == first["id"] and follow["status"]["state"] == "completed"


def test_unknown_task_is_the_sdks_task_not_found_error(steps: dict[str, Any]) -> None:
    record = steps["error"]
    assert not record["ok"], record
    assert record["error"]["isTaskNotFound"], record["error"]  # instanceof TaskNotFoundError
    if steps["binding"] == "jsonrpc":  # the SDK keeps the JSON-RPC error object
        error = record["error"]["response"]["error"]
        assert error["code"] == -32001 and error["data"]["reason"] == "TASK_NOT_FOUND"
    else:  # REST: the SDK's error carries our message
        assert record["error"]["message"] == "task no-such-task not found"
