"""The REST machinery knows nothing A2A-specific: a made-up service with other
rules (a ``body: "field"`` mapping, nested path fields, ``**``, custom verbs)
is compiled and served the same way."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web
from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from a2a_grpc.bindings._http.rest import RestBinding
from a2a_grpc.protocol._httprule import compile_service

_FD = descriptor_pb2.FieldDescriptorProto


def _service() -> Any:
    file = descriptor_pb2.FileDescriptorProto(name="demo/v1/demo.proto", package="demo.v1", syntax="proto3")
    file.dependency.append("google/api/annotations.proto")
    inner = file.message_type.add(name="Inner")
    inner.field.add(name="name", number=1, type=_FD.TYPE_STRING, label=_FD.LABEL_OPTIONAL, json_name="name")
    inner.field.add(name="tags", number=2, type=_FD.TYPE_STRING, label=_FD.LABEL_REPEATED, json_name="tags")
    req = file.message_type.add(name="Req")
    req.field.add(name="path", number=1, type=_FD.TYPE_STRING, label=_FD.LABEL_OPTIONAL, json_name="path")
    req.field.add(
        name="inner",
        number=2,
        type=_FD.TYPE_MESSAGE,
        type_name=".demo.v1.Inner",
        label=_FD.LABEL_OPTIONAL,
        json_name="inner",
    )
    req.field.add(name="limit", number=3, type=_FD.TYPE_INT64, label=_FD.LABEL_OPTIONAL, json_name="limit")
    service = file.service.add(name="Demo")
    for name, rule in {
        "Put": http_pb2.HttpRule(put="/v1/{inner.name}/items:put", body="inner"),
        "Files": http_pb2.HttpRule(get="/v1/files/{path=**}"),
    }.items():
        method = service.method.add(name=name, input_type=".demo.v1.Req", output_type=".demo.v1.Req")
        method.options.Extensions[annotations_pb2.http].CopyFrom(rule)
    pool = descriptor_pool.Default()  # where google/api/annotations.proto already is
    try:
        return pool.FindServiceByName("demo.v1.Demo")
    except KeyError:
        pool.Add(file)
        return pool.FindServiceByName("demo.v1.Demo")


class Echo:
    async def Put(self, request: Any, context: Any) -> Any:
        return request

    async def Files(self, request: Any, context: Any) -> Any:
        return request


async def test_another_service_is_compiled_and_served():
    service = _service()
    table = compile_service(service)
    assert [str(r) for r in table.routes] == [
        "PUT /v1/{inner.name}/items:put -> Put",
        "GET /v1/files/{path=**} -> Files",
    ]
    assert message_factory.GetMessageClass(service.methods_by_name["Put"].input_type)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", RestBinding(Echo(), table).handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        async with aiohttp.ClientSession() as session:
            async with session.put(
                f"{base}/v1/n1/items:put?limit=3", json={"name": "ignored", "tags": ["a"]}
            ) as resp:
                assert resp.status == 200
                # body "inner" fills Inner; the path var overrides inner.name; the query fills limit.
                assert await resp.json(content_type=None) == {
                    "inner": {"name": "n1", "tags": ["a"]},
                    "limit": "3",
                }
            async with session.get(f"{base}/v1/files/a/b%20c/d.txt?inner.tags=x,y") as resp:
                assert await resp.json(content_type=None) == {
                    "path": "a/b c/d.txt",
                    "inner": {"tags": ["x", "y"]},
                }
            async with session.get(f"{base}/v1/n1/items:put") as resp:
                assert resp.status == 405 and resp.headers["Allow"] == "PUT"
    finally:
        await runner.cleanup()
