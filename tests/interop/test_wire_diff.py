"""Differential wire checks: the same raw HTTP request to OUR server and to the
``a2a-sdk`` server (``sdk_server.py``) must get the same A2A answer — status,
JSON-RPC code, ``ErrorInfo.reason`` and the shape of the result.

Messages, metadata and content types may differ (the spec leaves them free).
Known differences that are NOT asserted, because the spec leaves room:

- a JSON-RPC notification (no ``id``) or ``"id": null``: we reject it with
  -32600 (design.md A21); the SDK executes it and replies with ``id: null``
  (JSON-RPC 2.0 says a server MUST NOT reply to a notification) — digest §16 A21;
- a REST body that is not JSON: both answer 400 INVALID_ARGUMENT, with reason
  ``PARSE_ERROR`` (ours) vs ``INVALID_REQUEST`` (SDK): the spec names no
  reason for non-A2A errors (digest §4.4);
- a JSON-RPC parse error: the SDK sends no ``error.data`` (ErrorInfo is only a
  SHOULD in JSON-RPC, digest §4.5); we always send it;
- no ``A2A-Version`` header: the SDK treats it as 0.3 and answers
  VERSION_NOT_SUPPORTED (spec §3.6.2); we serve it as 1.0 unless strict mode
  is on (design.md, digest §16 A3). Both clients always send the header;
- ``A2A-Version: 1`` (no minor): the SDK reads it as 1.0, we answer
  VERSION_NOT_SUPPORTED (the header is ``Major.Minor``, spec §3.6.1);
- ListTasks ``pageSize`` outside 1..100: the SDK answers INVALID_PARAMS; we
  clamp 101+ to 100 ("the server may return fewer") and serve an explicit 0
  as unset (50) — the proto states the range but not what to do outside it;
- a message to a task that is still working: we answer UNSUPPORTED_OPERATION
  ("task is busy", design.md); the SDK starts a second execution of the same
  task (spec §3.3.3: agents MAY accept messages for non-terminal tasks).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.interop.conftest import LiveServer, SdkServer

HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}

pytestmark = pytest.mark.interop


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as session:
        yield session


@pytest.fixture
def targets(our_server: LiveServer, sdk_server: SdkServer) -> dict[str, dict[str, str]]:
    return {
        "ours": {"jsonrpc": our_server.base_url + "/", "rest": our_server.base_url},
        "sdk": {"jsonrpc": sdk_server.base_url + "/a2a/jsonrpc", "rest": sdk_server.base_url + "/a2a/rest"},
    }


async def call(http: aiohttp.ClientSession, method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = body if isinstance(body, str) or body is None else json.dumps(body)
    async with http.request(method, url, data=data, headers=HEADERS) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text else None


def reasons(details: list[dict[str, Any]]) -> list[str]:
    return [d["reason"] for d in details if d.get("@type", "").endswith("google.rpc.ErrorInfo")]


def violations(details: list[dict[str, Any]]) -> list[str]:
    return [
        v["field"]
        for d in details
        if d.get("@type", "").endswith("google.rpc.BadRequest")
        for v in d.get("fieldViolations", [])
    ]


JSONRPC_CASES = {
    "unknown task": ({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}, -32001),
    "missing message": ({"jsonrpc": "2.0", "id": "s", "method": "SendMessage", "params": {}}, -32602),
    "unknown method": ({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "x"}}, -32601),
    "batch": ([{"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "x"}}], -32600),
    "no jsonrpc member": ({"id": 4, "method": "GetTask", "params": {"id": "x"}}, -32600),
    "cancel unknown task": (
        {"jsonrpc": "2.0", "id": 5, "method": "CancelTask", "params": {"id": "nope"}},
        -32001,
    ),
}


@pytest.mark.parametrize("case", list(JSONRPC_CASES))
async def test_jsonrpc_errors_agree(
    http: aiohttp.ClientSession, targets: dict[str, dict[str, str]], case: str
) -> None:
    request, code = JSONRPC_CASES[case]
    answers = {name: await call(http, "POST", t["jsonrpc"], request) for name, t in targets.items()}
    for name, (status, body) in answers.items():
        assert status == 200, (name, status, body)  # digest §16 A11
        assert body["jsonrpc"] == "2.0" and "result" not in body, (name, body)
        assert body["error"]["code"] == code, (name, body)
        expected_id = None if isinstance(request, list) else request.get("id")
        assert body["id"] == expected_id, (name, body)
    ours, sdk = answers["ours"][1]["error"], answers["sdk"][1]["error"]
    if "data" in sdk:  # the SDK sends ErrorInfo except on some generic errors
        assert reasons(ours["data"]) == reasons(sdk["data"]), (ours, sdk)
        assert violations(ours["data"]) == violations(sdk["data"]), (ours, sdk)


REST_CASES = {
    "unknown task": ("GET", "/tasks/nope", None, 404, "TASK_NOT_FOUND"),
    "cancel unknown task": ("POST", "/tasks/nope:cancel", {}, 404, "TASK_NOT_FOUND"),
    "missing message": ("POST", "/message:send", {}, 400, "INVALID_PARAMS"),
    "subscribe unknown task": ("GET", "/tasks/nope:subscribe", None, 404, "TASK_NOT_FOUND"),
}


@pytest.mark.parametrize("case", list(REST_CASES))
async def test_rest_errors_agree(
    http: aiohttp.ClientSession, targets: dict[str, dict[str, str]], case: str
) -> None:
    method, path, body, status, reason = REST_CASES[case]
    answers = {name: await call(http, method, t["rest"] + path, body) for name, t in targets.items()}
    for name, (got_status, got) in answers.items():
        assert got_status == status, (name, got_status, got)
        error = got["error"]
        assert error["code"] == status, (name, got)
        assert reasons(error["details"]) == [reason], (name, got)
    assert violations(answers["ours"][1]["error"]["details"]) == violations(
        answers["sdk"][1]["error"]["details"]
    )


async def test_rest_empty_list_shape_agrees(
    http: aiohttp.ClientSession, targets: dict[str, dict[str, str]]
) -> None:
    """An empty page keeps every member (digest §16 A8) on both servers."""
    query = "/tasks?pageSize=1&contextId=nobody&status=TASK_STATE_COMPLETED"
    answers = {name: await call(http, "GET", t["rest"] + query) for name, t in targets.items()}
    assert (
        answers["ours"]
        == answers["sdk"]
        == (
            200,
            {"tasks": [], "nextPageToken": "", "pageSize": 1, "totalSize": 0},
        )
    )


async def test_rest_send_response_shape_agrees(
    http: aiohttp.ClientSession, targets: dict[str, dict[str, str]]
) -> None:
    """The same message to both echo agents: the same SendMessageResponse
    shape (a ``task`` wrapper, the same members), ids and timestamps aside."""
    message = {"message": {"messageId": "wire-1", "role": "ROLE_USER", "parts": [{"text": "same"}]}}
    shapes = {}
    for name, t in targets.items():
        status, body = await call(http, "POST", t["rest"] + "/message:send", message)
        assert status == 200, (name, body)
        task = body["task"]
        shapes[name] = {
            "keys": sorted(task),
            "state": task["status"]["state"],
            "artifact": [(a["name"], a["parts"]) for a in task["artifacts"]],
            "history": [(m["role"], m["parts"], m["messageId"]) for m in task["history"]],
        }
    assert shapes["ours"] == shapes["sdk"]


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON of each ``data:`` event of a complete SSE body."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if data:
            events.append(json.loads(data))
    return events


def stream_shape(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    shape = []
    for event in events:
        (kind, value), *_ = event.items()
        state = value.get("status", {}).get("state", "") if kind in ("task", "statusUpdate") else ""
        shape.append((kind, state))
    return shape


@pytest.mark.parametrize("binding", ["rest", "jsonrpc"])
async def test_stream_wire_agrees(
    http: aiohttp.ClientSession, targets: dict[str, dict[str, str]], binding: str
) -> None:
    """SendStreamingMessage over SSE: ``text/event-stream``, one ``data:``
    event per StreamResponse (wrapped in a JSON-RPC response with the
    request's id on JSON-RPC), the same kinds and states in the same order."""
    message = {"messageId": f"wire-{binding}", "role": "ROLE_USER", "parts": [{"text": "streamed"}]}
    shapes = {}
    for name, t in targets.items():
        if binding == "rest":
            url, body = t["rest"] + "/message:stream", {"message": message}
        else:
            url = t["jsonrpc"]
            body = {
                "jsonrpc": "2.0",
                "id": 42,
                "method": "SendStreamingMessage",
                "params": {"message": message},
            }
        async with http.post(url, data=json.dumps(body), headers=HEADERS) as resp:
            assert resp.status == 200, (name, await resp.text())
            assert resp.content_type == "text/event-stream", (name, resp.content_type)
            events = sse_events(await resp.text())
        if binding == "jsonrpc":
            assert all(e.get("jsonrpc") == "2.0" and e.get("id") == 42 for e in events), (name, events)
            events = [e["result"] for e in events]
        shapes[name] = stream_shape(events)
    assert (
        shapes["ours"]
        == shapes["sdk"]
        == [
            ("task", "TASK_STATE_SUBMITTED"),
            ("artifactUpdate", ""),
            ("statusUpdate", "TASK_STATE_COMPLETED"),
        ]
    )


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        ("1.0", "TASK_NOT_FOUND"),
        ("1.0.0", "TASK_NOT_FOUND"),
        ("0.3", "VERSION_NOT_SUPPORTED"),
        ("9.9", "VERSION_NOT_SUPPORTED"),
    ],
)
async def test_version_negotiation_agrees(
    http: aiohttp.ClientSession, targets: dict[str, dict[str, str]], version: str, reason: str
) -> None:
    """The same ``A2A-Version`` gets the same answer: a patch version is the
    same Major.Minor (spec §3.6.1); an unsupported one is VERSION_NOT_SUPPORTED
    (400 FAILED_PRECONDITION, spec §3.6.2) before anything else is looked at."""
    for name, t in targets.items():
        async with http.get(t["rest"] + "/tasks/nope", headers={"A2A-Version": version}) as resp:
            body = await resp.json(content_type=None)
        assert reasons(body["error"]["details"]) == [reason], (name, body)
        assert resp.status == (404 if reason == "TASK_NOT_FOUND" else 400), (name, resp.status)
