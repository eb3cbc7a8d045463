"""The HTTP layer over real sockets, against the in-test servicer."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from a2a_grpc.types import pb

A2A_JSON = "application/a2a+json"
JSON_HEADERS = {"Content-Type": "application/json"}


def _events(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.split("\n") if line.startswith("data: ")]


# --- REST ---------------------------------------------------------------------------------------


async def test_rest_get_with_path_query_and_headers(gw):
    url = f"{gw.base}/acme/tasks/t%201?historyLength=4&A2A-Version=1.0"
    async with gw.session.get(url, headers={"A2A-Extensions": "urn:a", "X-Other": "v"}) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"] == "application/a2a+json; charset=utf-8"
        assert resp.headers["A2A-Extensions"] == "urn:a,urn:b"
        assert await resp.json(content_type=None) == {"id": "t 1", "contextId": "acme"}
    name, request, md = gw.servicer.calls[-1]
    assert name == "GetTask"
    assert request == pb.GetTaskRequest(tenant="acme", id="t 1", history_length=4)
    assert md["a2a-version"] == "1.0"  # from the query parameter
    assert md["a2a-extensions"] == "urn:a"
    assert md["x-other"] == "v"


async def test_version_header_wins_over_query(gw):
    async with gw.session.get(f"{gw.base}/tasks/t?A2A-Version=0.3", headers={"A2A-Version": "1.0"}) as resp:
        assert resp.status == 200
    assert gw.servicer.calls[-1][2]["a2a-version"] == "1.0"


async def test_rest_post_body_and_path(gw):
    body = {"metadata": {"why": "because"}, "id": "ignored", "unknownField": 1}
    async with gw.session.post(f"{gw.base}/tasks/t9:cancel", json=body) as resp:
        assert resp.status == 200
        out = await resp.json(content_type=None)
    assert out == {"id": "t9", "metadata": {"why": "because"}}


async def test_rest_accepts_a2a_json_and_empty_bodies(gw):
    async with gw.session.post(
        f"{gw.base}/tasks/t9:cancel",
        data=b"{}",
        headers={"Content-Type": "application/a2a+json; charset=UTF-8"},
    ) as resp:
        assert resp.status == 200
    async with gw.session.post(f"{gw.base}/tasks/t9:cancel") as resp:  # no body, no content type
        assert resp.status == 200


async def test_rest_delete_answers_empty_object(gw):
    async with gw.session.delete(f"{gw.base}/tasks/t1/pushNotificationConfigs/c1") as resp:
        assert resp.status == 200
        assert await resp.json(content_type=None) == {}
    assert gw.servicer.calls[-1][1] == pb.DeleteTaskPushNotificationConfigRequest(task_id="t1", id="c1")


async def test_rest_list_always_present_fields(gw):
    async with gw.session.get(f"{gw.base}/tasks?pageSize=7") as resp:
        assert await resp.json(content_type=None) == {
            "tasks": [],
            "nextPageToken": "",
            "pageSize": 7,
            "totalSize": 0,
        }


async def test_rest_bad_query_value(gw):
    async with gw.session.get(f"{gw.base}/tasks?pageSize=lots") as resp:
        assert resp.status == 400
        body = await resp.json(content_type=None)
    assert body["error"]["status"] == "INVALID_ARGUMENT"
    assert body["error"]["details"][0]["reason"] == "INVALID_PARAMS"
    assert body["error"]["details"][1]["fieldViolations"][0]["field"] == "page_size"
    assert gw.servicer.calls == []


async def test_rest_unknown_path_and_wrong_verb(gw):
    async with gw.session.get(f"{gw.base}/nothing/here/at/all") as resp:
        assert resp.status == 404
        assert resp.headers["Content-Type"].startswith(A2A_JSON)
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"
    async with gw.session.put(f"{gw.base}/tasks/t1:subscribe", json={}) as resp:
        assert resp.status == 405
        assert resp.headers["Allow"] == "GET, POST"
        body = await resp.json(content_type=None)
    assert body["error"]["code"] == 405


async def test_rest_content_type_checked_before_the_body(gw):
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"):
        async with gw.session.post(
            f"{gw.base}/message:send", data=b"{not even json", headers={"Content-Type": ctype}
        ) as resp:
            assert resp.status == 400
            body = await resp.json(content_type=None)
        assert body["error"]["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED", ctype
    # A body without any content type is refused too.
    async with gw.session.post(
        f"{gw.base}/message:send", data=b"{}", skip_auto_headers=["Content-Type"]
    ) as resp:
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    assert gw.servicer.calls == []


async def test_rest_malformed_json_and_wrong_shapes(gw):
    async with gw.session.post(f"{gw.base}/message:send", data=b'{"message": ', headers=JSON_HEADERS) as resp:
        assert resp.status == 400
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "PARSE_ERROR"
    async with gw.session.post(f"{gw.base}/message:send", data=b"[1,2]", headers=JSON_HEADERS) as resp:
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "INVALID_PARAMS"
    bad = {"message": {"messageId": "m", "parts": [{"text": 5}]}}
    async with gw.session.post(f"{gw.base}/message:send", json=bad) as resp:
        body = await resp.json(content_type=None)
    assert body["error"]["details"][1]["fieldViolations"][0]["field"] == "message.parts.text"


async def test_rest_body_too_large(gw):
    big = json.dumps({"message": {"messageId": "m", "parts": [{"text": "x" * 100_000}]}})
    async with gw.session.post(f"{gw.base}/message:send", data=big, headers=JSON_HEADERS) as resp:
        assert resp.status == 413
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "PAYLOAD_TOO_LARGE"
    assert body["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert "65536 bytes" in body["error"]["message"]


async def test_rest_unicode_roundtrip(gw):
    text = "中文 😀 \u2028 \u2029 é"
    msg = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}
    async with gw.session.post(f"{gw.base}/message:send", json=msg) as resp:
        raw = await resp.read()
    assert "中文 😀".encode() in raw  # raw UTF-8, not \\u escapes
    assert b"\\u2028" in raw
    assert json.loads(raw)["message"]["parts"][0]["text"] == text


# --- SSE ----------------------------------------------------------------------------------------


def _stream_body(text: str) -> dict:
    return {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}


async def test_rest_stream_events_in_order_then_end(gw):
    async with gw.session.post(f"{gw.base}/message:stream", json=_stream_body("hi \u2028")) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.headers["A2A-Extensions"] == "urn:s"
        text = await resp.text()
    events = [json.loads(e) for e in _events(text)]
    assert [e["message"]["messageId"] for e in events] == ["m0", "m1", "m2"]
    assert events[0]["message"]["parts"][0]["text"] == "hi \u2028"
    assert "\u2028" not in text  # escaped on the wire


async def test_stream_error_before_first_event_keeps_its_status(gw):
    async with gw.session.post(f"{gw.base}/message:stream", json=_stream_body("fail-first")) as resp:
        assert resp.status == 400
        assert resp.headers["Content-Type"].startswith(A2A_JSON)
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"
    envelope = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "SendStreamingMessage",
        "params": _stream_body("fail-first"),
    }
    async with gw.session.post(gw.base + "/", json=envelope) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("application/json")
        body = await resp.json()
    assert body["id"] == 3 and body["error"]["code"] == -32004


async def test_stream_error_mid_stream_is_one_final_event(gw):
    async with gw.session.post(f"{gw.base}/message:stream", json=_stream_body("fail-mid")) as resp:
        events = [json.loads(e) for e in _events(await resp.text())]
    assert len(events) == 4
    assert events[-1]["error"]["code"] == 404
    assert events[-1]["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    envelope = {
        "jsonrpc": "2.0",
        "id": "s1",
        "method": "SendStreamingMessage",
        "params": _stream_body("crash-mid"),
    }
    async with gw.session.post(gw.base + "/", json=envelope) as resp:
        events = [json.loads(e) for e in _events(await resp.text())]
    assert [e["id"] for e in events] == ["s1"] * 4
    assert all("result" in e for e in events[:3])
    assert events[-1]["error"]["code"] == -32603 and "secret" not in str(events[-1])


async def test_stream_keepalive_comments(gw):
    async with gw.session.post(f"{gw.base}/message:stream", json=_stream_body("slow")) as resp:
        text = await resp.text()
    assert ": keep-alive\n\n" in text  # keepalive_seconds=0.2, agent idle 0.7 s
    assert [json.loads(e)["message"]["messageId"] for e in _events(text)] == ["m0", "m1", "m2", "late"]


async def test_client_disconnect_closes_the_generator(gw):
    resp = await gw.session.post(f"{gw.base}/message:stream", json=_stream_body("hang"))
    assert resp.status == 200
    await resp.content.readuntil(b"\n\n")
    resp.close()  # drop the connection mid-stream
    await asyncio.wait_for(gw.servicer.stream_closed.wait(), 5)


async def test_subscribe_get_post_and_empty_stream(gw):
    async with gw.session.get(f"{gw.base}/tasks/t1:subscribe") as resp:
        events = [json.loads(e) for e in _events(await resp.text())]
    assert events == [{"task": {"id": "t1"}}]
    async with gw.session.post(f"{gw.base}/acme/tasks/t2:subscribe", json={}) as resp:
        events = [json.loads(e) for e in _events(await resp.text())]
    assert events == [{"task": {"id": "t2"}}]
    assert gw.servicer.calls[-1][1] == pb.SubscribeToTaskRequest(tenant="acme", id="t2")
    async with gw.session.get(f"{gw.base}/tasks/empty:subscribe") as resp:
        assert resp.status == 200
        assert await resp.text() == ""


# --- JSON-RPC -----------------------------------------------------------------------------------


async def _rpc(gw, payload, *, raw: bytes | None = None, headers=None) -> tuple[int, dict]:
    data = raw if raw is not None else json.dumps(payload).encode()
    async with gw.session.post(gw.base + "/", data=data, headers=headers or JSON_HEADERS) as resp:
        return resp.status, await resp.json(content_type=None)


async def test_jsonrpc_result_and_ids_echoed_exactly(gw):
    for rid in (1, "abc", 0, -5, 1.5, "😀", 2**53 + 1):
        status, body = await _rpc(
            gw, {"jsonrpc": "2.0", "id": rid, "method": "GetTask", "params": {"id": "t"}}
        )
        assert status == 200
        assert body == {"jsonrpc": "2.0", "id": rid, "result": {"id": "t", "contextId": "ctx"}}


async def test_jsonrpc_params_may_be_omitted(gw):
    _, body = await _rpc(gw, {"jsonrpc": "2.0", "id": 1, "method": "ListTasks"})
    assert body["result"] == {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}


async def test_jsonrpc_delete_result_is_empty_object(gw):
    params = {"taskId": "t", "id": "c"}
    _, body = await _rpc(
        gw, {"jsonrpc": "2.0", "id": 1, "method": "DeleteTaskPushNotificationConfig", "params": params}
    )
    assert body["result"] == {}


async def test_jsonrpc_envelope_errors(gw):
    cases = [
        (b"{oops", None, -32700),
        (b"", None, -32700),
        (b"[]", None, -32600),
        (json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]).encode(), None, -32600),
        (b'"just a string"', None, -32600),
        (json.dumps({"jsonrpc": "1.0", "id": 4, "method": "GetTask"}).encode(), 4, -32600),
        (json.dumps({"id": 4, "method": "GetTask"}).encode(), 4, -32600),
        (json.dumps({"jsonrpc": "2.0", "method": "GetTask"}).encode(), None, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": None, "method": "GetTask"}).encode(), None, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": True, "method": "GetTask"}).encode(), None, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "GetTask"}).encode(), None, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 5, "method": 7}).encode(), 5, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tasks/list"}).encode(), 6, -32601),
        (json.dumps({"jsonrpc": "2.0", "id": 6, "method": "getTask"}).encode(), 6, -32601),
        (json.dumps({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": [1]}).encode(), 7, -32602),
        (
            json.dumps(
                {"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"historyLength": "x"}}
            ).encode(),
            8,
            -32602,
        ),
    ]
    for raw, rid, code in cases:
        status, body = await _rpc(gw, None, raw=raw)
        assert status == 200, raw
        assert body["jsonrpc"] == "2.0"
        assert body["id"] == rid, raw
        assert body["error"]["code"] == code, raw
        assert body["error"]["data"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert gw.servicer.calls == []


async def test_jsonrpc_invalid_params_carries_bad_request(gw):
    payload = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"parts": [{"text": []}]}},
    }
    _, body = await _rpc(gw, payload)
    assert body["error"]["code"] == -32602
    assert body["error"]["data"][1]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert body["error"]["data"][1]["fieldViolations"][0]["field"] == "message.parts.text"


async def test_jsonrpc_content_type(gw):
    good = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}).encode()
    for ctype in ("text/plain", "application/xml"):
        status, body = await _rpc(gw, None, raw=good, headers={"Content-Type": ctype})
        assert status == 200
        assert body["error"]["code"] == -32005
    status, body = await _rpc(gw, None, raw=good, headers={"Content-Type": "application/a2a+json"})
    assert body["result"]["id"] == "t"


async def test_jsonrpc_headers_flow_into_metadata_and_back(gw):
    payload = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t", "tenant": "acme"}}
    async with gw.session.post(
        gw.base + "/", json=payload, headers={"A2A-Version": "1.0", "A2A-Extensions": "urn:x, urn:y"}
    ) as resp:
        assert resp.headers["A2A-Extensions"] == "urn:a,urn:b"
        body = await resp.json()
    assert body["result"] == {"id": "t", "contextId": "acme"}
    md = gw.servicer.calls[-1][2]
    assert (md["a2a-version"], md["a2a-extensions"]) == ("1.0", "urn:x, urn:y")


async def test_jsonrpc_stream_envelopes(gw):
    payload = {"jsonrpc": "2.0", "id": "st", "method": "SendStreamingMessage", "params": _stream_body("x")}
    async with gw.session.post(gw.base + "/", json=payload) as resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        events = [json.loads(e) for e in _events(await resp.text())]
    assert [e["result"]["message"]["messageId"] for e in events] == ["m0", "m1", "m2"]
    assert all(e["jsonrpc"] == "2.0" and e["id"] == "st" for e in events)


async def test_jsonrpc_url_only_takes_post(gw):
    async with gw.session.get(gw.base + "/") as resp:
        assert resp.status == 405
        assert resp.headers["Allow"] == "POST"
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"


# --- Agent card ---------------------------------------------------------------------------------


async def test_agent_card_and_caching(gw):
    async with gw.session.get(gw.base + "/.well-known/agent-card.json") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("application/json")
        assert resp.headers["Cache-Control"] == "public, max-age=60"
        etag = resp.headers["ETag"]
        last_modified = resp.headers["Last-Modified"]
        card = await resp.json()
    assert card["name"] == "Fake"
    assert card["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"
    assert card["skills"] == []  # REQUIRED, always present
    async with gw.session.get(gw.base + "/.well-known/agent.json") as resp:
        assert resp.headers["ETag"] != etag  # the v0.1 card: the same card plus the v0.1 fields
        assert (await resp.json())["authentication"] == {"schemes": []}
    for inm in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        async with gw.session.get(
            gw.base + "/.well-known/agent-card.json", headers={"If-None-Match": inm}
        ) as resp:
            assert resp.status == 304, inm
            assert resp.headers["ETag"] == etag
            assert await resp.read() == b""
    async with gw.session.get(
        gw.base + "/.well-known/agent-card.json", headers={"If-None-Match": '"nope"'}
    ) as resp:
        assert resp.status == 200
    async with gw.session.get(
        gw.base + "/.well-known/agent-card.json", headers={"If-Modified-Since": last_modified}
    ) as resp:
        assert resp.status == 304
    # A changed card gets a new ETag.
    changed = pb.AgentCard()
    changed.CopyFrom(gw.card[0])
    changed.version = "2"
    gw.card[0] = changed
    async with gw.session.get(
        gw.base + "/.well-known/agent-card.json", headers={"If-None-Match": etag}
    ) as resp:
        assert resp.status == 200
        assert resp.headers["ETag"] != etag
        assert (await resp.json())["version"] == "2"


async def test_shutdown_ends_open_streams():
    from aiohttp import web

    from a2a_grpc.bindings._http.app import create_app
    from tests.bindings.conftest import CARD, FakeServicer

    servicer = FakeServicer()
    app = create_app(servicer, lambda: CARD, keepalive_seconds=5)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    async with aiohttp.ClientSession() as session:
        resp = await session.post(f"http://127.0.0.1:{port}/message:stream", json=_stream_body("hang"))
        await resp.content.readuntil(b"\n\n")
        loop = asyncio.get_running_loop()
        started = loop.time()
        await runner.cleanup()
        assert servicer.stream_closed.is_set()
        assert loop.time() - started < 4  # did not wait for the shutdown timeout
        resp.close()


async def test_paths_outside_a_rest_prefix_are_answered_in_json():
    """Under a REST prefix no catch-all takes every path: the last route
    answers 404, or 405 where another route takes the path, in JSON."""
    from aiohttp import web

    from a2a_grpc.bindings._http.app import create_app
    from tests.bindings.conftest import CARD, FakeServicer

    app = create_app(FakeServicer(), lambda: CARD, jsonrpc_path="/rpc", rest_prefix="/rest")
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        async with aiohttp.ClientSession() as session:
            for method, path, status in (
                ("GET", "/nowhere", 404),
                ("POST", "/.well-known/agent-card.json", 405),
                ("GET", "/rpc", 405),
            ):
                async with session.request(method, base + path) as resp:
                    assert resp.status == status, (method, path)
                    assert resp.content_type == "application/a2a+json"
                    body = await resp.json()
                    assert body["error"]["code"] == status
                    assert body["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"
            async with session.post(base + "/rest/message:send", json=_stream_body("hi")) as resp:
                assert resp.status == 200
    finally:
        await runner.cleanup()
