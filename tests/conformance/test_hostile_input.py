"""Inputs that once made the JSON bindings answer HTTP 500 (issue 10), each
now a clear A2A error in the binding's own form on every binding where it can
be sent; and tasks holding numbers JSON cannot write stay readable."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from google.protobuf import struct_pb2

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol._validation import MAX_JSON_DEPTH
from a2a_grpc.types import pb
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")

HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
SEND = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "echo hi"}]}


async def _raw(b: Any, rpc: str, params_json: str, *, rpc_id: str = '"r1"') -> tuple[int, str, dict]:
    """Posts hand-written JSON text (``params_json``) as ``rpc`` on an HTTP
    binding: (HTTP status, content type, parsed body)."""
    if b.name == "jsonrpc":
        url = b.url
        text = f'{{"jsonrpc": "2.0", "id": {rpc_id}, "method": "{rpc}", "params": {params_json}}}'
    else:
        url = b.base + {"SendMessage": "/message:send", "SendStreamingMessage": "/message:stream"}[rpc]
        text = params_json
    async with b.session.post(url, data=text.encode(), headers=HEADERS) as resp:
        raw = await resp.read()
        return resp.status, resp.content_type, json.loads(raw)


def _error(b: Any, status: int, body: dict) -> A2AError:
    if b.name == "jsonrpc":
        assert status == 200
        return b._error(body)
    assert status >= 400
    return b._error_obj(body, status)


@pytest.mark.parametrize(
    "where, params, rpc_id",
    [
        ("id", json.dumps({"message": SEND}), '"\\udfff"'),
        ("enum", '{"message": {"messageId": "m1", "role": "\\ud800", "parts": [{"text": "x"}]}}', '"r1"'),
        (
            "key",
            '{"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "x"}],'
            ' "metadata": {"\\udbff": 1}}}',
            '"r1"',
        ),
        (
            "text",
            '{"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "a\\udc00b"}]}}',
            '"r1"',
        ),
    ],
)
@pytest.mark.parametrize("rpc", ["SendMessage", "SendStreamingMessage"])
async def test_lone_surrogates_are_parse_errors(http_binding, where, params, rpc_id, rpc):
    if where == "id" and http_binding.name == "rest":
        pytest.skip("REST has no id")
    status, ctype, body = await _raw(http_binding, rpc, params, rpc_id=rpc_id)
    assert ctype in ("application/json", "application/a2a+json")
    err = _error(http_binding, status, body)
    assert err.code is ErrorCode.PARSE_ERROR and "surrogate" in err.message
    if http_binding.name == "jsonrpc":
        assert body["id"] is None  # the request could not be read


async def test_lone_surrogate_in_the_method_name(servers):
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{servers.main.http_port}/"
        text = b'{"jsonrpc": "2.0", "id": 1, "method": "\\ud800", "params": {}}'
        async with session.post(url, data=text, headers=HEADERS) as resp:
            assert resp.status == 200
            body = await resp.json()
    assert body["error"]["code"] == -32700 and body["id"] is None


@pytest.mark.parametrize(
    "field, params",
    [
        ("message.metadata", {"message": {**SEND, "metadata": {"n": "BIG"}}}),
        ("message.parts.data", {"message": {**SEND, "parts": [{"data": {"a": ["BIG"]}}]}}),
        ("metadata", {"message": SEND, "metadata": {"n": "-BIG"}}),
    ],
)
async def test_integers_beyond_the_double_range(http_binding, field, params):
    text = json.dumps(params).replace('"BIG"', "1" + "0" * 400).replace('"-BIG"', "-1" + "0" * 320)
    status, _, body = await _raw(http_binding, "SendMessage", text)
    err = _error(http_binding, status, body)
    assert err.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in err.field_violations] == [field]


async def test_integer_beyond_the_double_range_in_cancel_metadata(http_binding):
    big = "9" * 330
    if http_binding.name == "jsonrpc":
        status, _, body = await _raw_rpc(
            http_binding, "CancelTask", f'{{"id": "t", "metadata": {{"x": {big}}}}}'
        )
    else:
        url = http_binding.base + "/tasks/t:cancel"
        async with http_binding.session.post(
            url, data=f'{{"metadata": {{"x": {big}}}}}', headers=HEADERS
        ) as r:
            status, body = r.status, await r.json(content_type=None)
    err = _error(http_binding, status, body)
    assert err.code is ErrorCode.INVALID_PARAMS and err.field_violations[0].field == "metadata"


async def _raw_rpc(b: Any, rpc: str, params_json: str) -> tuple[int, str, dict]:
    text = f'{{"jsonrpc": "2.0", "id": 5, "method": "{rpc}", "params": {params_json}}}'
    async with b.session.post(b.url, data=text.encode(), headers=HEADERS) as resp:
        return resp.status, resp.content_type, await resp.json()


def _nan_request(number: float) -> pb.SendMessageRequest:
    data = pb.Part()
    data.data.struct_value.fields["x"].number_value = number
    return send(data)


@pytest.mark.parametrize("number", ["nan", "inf", "-inf"])
async def test_non_finite_numbers_are_refused_on_every_binding(binding, number):
    if binding.name == "grpc":  # binary protobuf carries them
        with pytest.raises(A2AError) as info:
            await binding.call("SendMessage", _nan_request(float(number)))
        err = info.value
    else:  # JSON has no form for them: 1e400 reads as infinity, NaN is no JSON
        literal = {"nan": "NaN", "inf": "1e400", "-inf": "-1e999"}[number]
        text = json.dumps({"message": {**SEND, "parts": [{"data": {"x": "N"}}]}}).replace('"N"', literal)
        status, _, body = await _raw(binding, "SendMessage", text)
        err = _error(binding, status, body)
        if literal == "NaN":
            assert err.code is ErrorCode.PARSE_ERROR
            return
    assert err.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in err.field_violations] == ["message.parts[0].data"]
    assert "finite" in err.message


async def test_tasks_with_non_finite_numbers_stay_readable(binding):
    """An agent's artifact (or a task an older version stored) with NaN and
    infinities: every binding answers it; JSON writes them as null."""
    task = (await binding.call("SendMessage", send("nonfinite"))).task
    got = await binding.call("GetTask", pb.GetTaskRequest(id=task.id))
    listed = await binding.call(
        "ListTasks", pb.ListTasksRequest(context_id=task.context_id, include_artifacts=True)
    )
    for t in (task, got, listed.tasks[0]):
        values = t.artifacts[0].parts[0].data.list_value.values
        if binding.name == "grpc":
            kinds = [v.number_value for v in values]
            assert kinds[0] != kinds[0] and kinds[1:] == [float("inf"), float("-inf"), 1.5]
        else:
            assert [v.WhichOneof("kind") for v in values] == ["null_value"] * 3 + ["number_value"]


def _deep_struct(levels: int) -> struct_pb2.Struct:
    root = struct_pb2.Struct()
    node = root
    for _ in range(levels - 1):
        node = node.fields["d"].struct_value
    node.fields["leaf"].number_value = 1
    return root


@pytest.mark.parametrize("levels, ok", [(MAX_JSON_DEPTH, True), (MAX_JSON_DEPTH + 1, False)])
async def test_nesting_is_bounded_on_every_binding(binding, levels, ok):
    req = send("echo deep")
    req.message.metadata.CopyFrom(_deep_struct(levels))
    if ok:
        resp = await binding.call("SendMessage", req)
        assert resp.task.status.state == pb.TASK_STATE_COMPLETED
        return
    with pytest.raises(A2AError) as info:
        await binding.call("SendMessage", req)
    assert info.value.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in info.value.field_violations] == ["message.metadata"]


@pytest.mark.parametrize("tenant", ["tasks", "message", "extendedAgentCard", "pushNotificationConfigs"])
async def test_tenants_that_are_path_words_are_refused(binding, tenant):
    with pytest.raises(A2AError) as info:
        await binding.call("SendMessage", send("echo x", tenant=tenant))
    assert info.value.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in info.value.field_violations] == ["tenant"]
    ok = await binding.call("SendMessage", send("echo x", tenant="tasks-2"))
    listed = await binding.call("ListTasks", pb.ListTasksRequest(tenant="tasks-2"))
    assert ok.task.id in {t.id for t in listed.tasks}


async def test_paths_starting_with_a_word_are_not_tenant_routes(servers):
    base = f"http://127.0.0.1:{servers.main.http_port}"
    async with aiohttp.ClientSession(headers={"A2A-Version": "1.0"}) as session:
        for path, rpc_words in [
            ("/tasks/tasks", "task tasks not found"),  # GetTask, not ListTasks of tenant "tasks"
            ("/tasks/tasks/pushNotificationConfigs", "tasks"),  # the configs of task "tasks"
        ]:
            async with session.get(base + path) as resp:
                body = await resp.json(content_type=None)
                assert resp.status == 404, (path, body)
            assert body["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
            assert rpc_words in body["error"]["message"]


@pytest.mark.parametrize("path", ["/tasks/a%0Ab", "/tasks/a%0D%0Ab:cancel", "/x%0A/tasks", "/%0A"])
async def test_control_characters_in_paths_get_the_json_error_body(servers, path):
    base = f"http://127.0.0.1:{servers.main.http_port}"
    async with aiohttp.ClientSession(headers={"A2A-Version": "1.0"}) as session:
        method = "POST" if path.endswith(":cancel") else "GET"
        async with session.request(method, base + path) as resp:
            assert resp.content_type == "application/a2a+json", await resp.text()
            body = await resp.json(content_type=None)
            assert 400 <= resp.status < 500
    assert body["error"]["details"][0]["reason"] in ("INVALID_PARAMS", "METHOD_NOT_FOUND")


async def _raw_http(port: int, request: bytes) -> tuple[int, bytes, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), head, body


@pytest.mark.parametrize("version", [b"1.\xff", b"\xed\xa0\x80", b"1.0\xc3"])
@pytest.mark.parametrize("path", [b"/", b"/tasks/x"])
async def test_header_bytes_that_are_not_utf8(servers, version, path):
    """aiohttp keeps such bytes as lone surrogates; the error quoting the
    version used to fail to encode (-32603 / HTTP 500)."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}'
    method = b"POST" if path == b"/" else b"GET"
    request = (
        method
        + b" "
        + path
        + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
        b"A2A-Version: " + version + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    status, _, raw = await _raw_http(servers.main.http_port, request)
    doc = json.loads(raw)
    if path == b"/":
        assert status == 200 and doc["error"]["code"] == -32009, doc
    else:
        assert status == 400 and doc["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED", doc
    assert "\ufffd" in json.dumps(doc, ensure_ascii=False)
