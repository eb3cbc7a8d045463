"""The gRPC side services (issue 10, item 11): reflection v1 and v1alpha
both served, Health/List answered, a port in use is one line."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2

from a2a_grpc.bindings._reflection import V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import SERVICE_NAME
from tests.core.agents import ScriptedAgent
from tests.core.test_cli_and_buf import HAVE_BUF, buf_curl

HEALTH = "grpc.health.v1.Health"


def _v1_classes() -> tuple[type, type]:
    pool = descriptor_pool.Default()
    req = pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionRequest")
    res = pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionResponse")
    return message_factory.GetMessageClass(req), message_factory.GetMessageClass(res)


@pytest.fixture
async def grpc_server():
    srv = A2AServer(
        ScriptedAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=None, grace_seconds=0.5)
    )
    await srv.start()
    yield srv
    await srv.stop()


async def _reflect(port: int, service: str, req_cls: type, res_cls: type, request: object) -> object:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = ch.stream_stream(
            f"/{service}/ServerReflectionInfo",
            request_serializer=req_cls.SerializeToString,
            response_deserializer=res_cls.FromString,
        )

        async def one():
            yield request

        responses = [r async for r in call(one())]
    assert len(responses) == 1
    return responses[0]


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
async def test_reflection_lists_services_in_both_versions(grpc_server, version) -> None:
    if version == "v1":
        req_cls, res_cls = _v1_classes()
        service = V1_SERVICE_NAME
    else:
        req_cls, res_cls = reflection_pb2.ServerReflectionRequest, reflection_pb2.ServerReflectionResponse
        service = V1ALPHA_SERVICE_NAME
    res = await _reflect(grpc_server.grpc_port, service, req_cls, res_cls, req_cls(list_services=""))
    names = {s.name for s in res.list_services_response.service}
    assert names == {SERVICE_NAME, "a2a.v1.A2AService", HEALTH, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME}

    res = await _reflect(
        grpc_server.grpc_port, service, req_cls, res_cls, req_cls(file_containing_symbol=V1_SERVICE_NAME)
    )
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(b)
        for b in res.file_descriptor_response.file_descriptor_proto
    ]
    v1 = next(f for f in files if f.name == "grpc/reflection/v1/reflection.proto")
    assert v1.package == "grpc.reflection.v1"
    method = v1.service[0].method[0]
    assert (method.input_type, method.output_type) == (
        ".grpc.reflection.v1.ServerReflectionRequest",
        ".grpc.reflection.v1.ServerReflectionResponse",
    )
    # Every type the v1 file names is its own (nothing points back at v1alpha).
    refs = {f.type_name for m in v1.message_type for f in m.field if f.type_name}
    assert refs and all(r.startswith(".grpc.reflection.v1.") for r in refs)


@pytest.mark.skipif(not HAVE_BUF, reason="npx buf is not installed (npm install)")
@pytest.mark.parametrize("protocol", ["grpc-v1", "grpc-v1alpha"])
async def test_buf_curl_with_each_reflection_protocol(grpc_server, protocol) -> None:
    rc, out, err = await buf_curl(
        "--reflect-protocol", protocol, "--list-methods", f"http://127.0.0.1:{grpc_server.grpc_port}"
    )
    assert rc == 0, err
    assert f"{SERVICE_NAME}/SendMessage" in out.split()
    assert f"{HEALTH}/List" in out.split()


async def test_health_list_answers_without_a_traceback(grpc_server, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_server.grpc_port}") as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        res = await stub.List(health_pb2.HealthListRequest(), timeout=5)
        assert {k: v.status for k, v in res.statuses.items()} == {
            "": health_pb2.HealthCheckResponse.SERVING,
            SERVICE_NAME: health_pb2.HealthCheckResponse.SERVING,
            "a2a.v1.A2AService": health_pb2.HealthCheckResponse.SERVING,  # A2A v0.3
        }
        check = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5)
        assert check.status == health_pb2.HealthCheckResponse.SERVING
        await grpc_server._health.enter_graceful_shutdown()
        res = await stub.List(health_pb2.HealthListRequest(), timeout=5)
        assert set(v.status for v in res.statuses.values()) == {health_pb2.HealthCheckResponse.NOT_SERVING}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("which", ["grpc", "http"])
async def test_port_in_use_is_one_line(which) -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ports = ["--grpc-port", str(port), "--http-port", "0"]
        if which == "http":
            ports = ["--grpc-port", "0", "--http-port", str(port)]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "a2a_grpc.cli",
            "serve",
            "--agent",
            "echo",
            "--store",
            "memory",
            *ports,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _out, err = await asyncio.wait_for(proc.communicate(), 60)
    label = "gRPC" if which == "grpc" else "HTTP"
    assert proc.returncode == 1
    assert err.decode() == f"Error: cannot start: {label} port {port} on 127.0.0.1 is already in use\n"
