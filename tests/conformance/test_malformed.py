"""Malformed JSON, envelopes and content types on the HTTP bindings, and the
lenient parts of ProtoJSON input (spec §5.7, §9.5, §11.6)."""

from __future__ import annotations

import json

import pytest

from a2a_grpc.errors import A2AError, ErrorCode

pytestmark = pytest.mark.asyncio(loop_scope="package")

A2A = {"A2A-Version": "1.0"}


async def _post(b, payload: bytes, *, content_type: str = "application/json") -> A2AError | dict:
    """Posts raw bytes as a SendMessage on either binding; the error or the result."""
    headers = {**A2A, "Content-Type": content_type}
    if b.name == "jsonrpc":
        async with b.session.post(b.url, data=payload, headers=headers) as resp:
            assert resp.status == 200
            body = await resp.json()
        return b._error(body) if "error" in body else body
    async with b.session.post(b.base + "/message:send", data=payload, headers=headers) as resp:
        if resp.status != 200:
            return await b._error(resp)
        return await resp.json(content_type=None)


def _wrap(b, params: object) -> bytes:
    """``params`` as the binding's request body."""
    if b.name == "jsonrpc":
        return json.dumps({"jsonrpc": "2.0", "id": "m", "method": "SendMessage", "params": params}).encode()
    return json.dumps(params).encode()


MESSAGE = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "echo ok"}]}}


@pytest.mark.parametrize(
    "raw",
    [b"{", b'{"message": }', b"not json", b"\xff\xfe", b'{"a": NaN}', b"[" * 5000 + b"]" * 5000],
    ids=["open", "missing-value", "words", "bad-utf8", "nan", "deep"],
)
async def test_malformed_json_is_parse_error(http_binding, raw):
    err = await _post(http_binding, raw)
    assert isinstance(err, A2AError) and err.code is ErrorCode.PARSE_ERROR


@pytest.mark.parametrize(
    "ctype",
    ["text/plain", "application/xml", "multipart/form-data; boundary=x", "application/json; charset=utf-16"],
)
async def test_non_json_content_type(http_binding, ctype):
    err = await _post(http_binding, _wrap(http_binding, MESSAGE), content_type=ctype)
    assert isinstance(err, A2AError) and err.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED


@pytest.mark.parametrize(
    "ctype", ["application/json", "application/a2a+json", "application/json; charset=utf-8"]
)
async def test_json_content_types_accepted(http_binding, ctype):
    out = await _post(http_binding, _wrap(http_binding, MESSAGE), content_type=ctype)
    assert isinstance(out, dict), out


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"message": "hello"}, "message"),
        ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": "x"}}, "message.parts"),
        ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": 1}]}}, "message.parts.text"),
        ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"raw": 5}]}}, "message.parts.raw"),
        ({"configuration": {"historyLength": "ten"}, **MESSAGE}, "configuration.history_length"),
        ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}, "message.parts"),
    ],
)
async def test_wrong_shapes_are_invalid_params_with_the_field(http_binding, params, field):
    err = await _post(http_binding, _wrap(http_binding, params))
    assert isinstance(err, A2AError) and err.code is ErrorCode.INVALID_PARAMS
    assert field in [v.field for v in err.field_violations]


async def test_unknown_fields_ignored_and_proto_names_accepted(http_binding):
    params = {
        "message": {"message_id": "m9", "role": "ROLE_USER", "parts": [{"text": "echo x", "futurePart": 1}]},
        "someFutureField": {"a": [1]},
    }
    out = await _post(http_binding, _wrap(http_binding, params))
    assert isinstance(out, dict), out
    task = out["result"]["task"] if http_binding.name == "jsonrpc" else out["task"]
    assert task["history"][0]["messageId"] == "m9"
    assert (
        task["status"]["timestamp"].endswith("Z") and len(task["status"]["timestamp"]) == 24
    )  # ms precision


async def test_enums_by_number_are_accepted(http_binding):
    params = {"message": {"messageId": "m", "role": 1, "parts": [{"text": "echo n"}]}}
    out = await _post(http_binding, _wrap(http_binding, params))
    assert isinstance(out, dict), out


async def test_jsonrpc_envelopes(servers):
    import aiohttp

    url = f"http://127.0.0.1:{servers.main.http_port}/"
    cases = [
        ([], None, -32600),
        ([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}], None, -32600),
        ({"jsonrpc": "2.0", "id": 1}, 1, -32600),
        ({"id": 2, "method": "GetTask"}, 2, -32600),
        ({"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}, None, -32600),
        ({"jsonrpc": "2.0", "id": [1], "method": "GetTask"}, None, -32600),
        ({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "x"}}, 3, -32601),
        ({"jsonrpc": "2.0", "id": "s", "method": "GetTask", "params": ["x"]}, "s", -32602),
        ({"jsonrpc": "2.0", "id": 4.5, "method": "GetTask", "params": {"id": "x"}}, 4.5, -32001),
    ]
    async with aiohttp.ClientSession() as session:
        for payload, rid, code in cases:
            async with session.post(url, json=payload, headers=A2A) as resp:
                assert resp.status == 200
                body = await resp.json()
            assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", rid, code), payload
            assert body["error"]["data"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
