"""The gRPC server around the core: restart survival on SQLite, server
reflection, grpc.health.v1, graceful shutdown (issue 2 items 8, 11)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from a2a_grpc.context import Owner
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.types import SERVICE_NAME, pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, RecordingPush, connect, msg, read_all, state_of


async def test_restart_survival_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'a2a.db'}"

    def new_server() -> A2AServer:
        return A2AServer(
            ScriptedAgent(),
            SqlTaskStore(url),
            ServerConfig(grpc_port=0, http_port=None, grace_seconds=0.5),
            push=RecordingPush(),
        )

    first = new_server()
    await first.start()
    async with connect(first) as stub:
        done = (await stub.SendMessage(msg("chunks 2"), metadata=VERSION_MD)).task
        asked = (await stub.SendMessage(msg("ask", context_id="ctx-r"), metadata=VERSION_MD)).task
        running = (await stub.SendMessage(msg("slow 30", return_immediately=True), metadata=VERSION_MD)).task
        config = await stub.CreateTaskPushNotificationConfig(
            pb.TaskPushNotificationConfig(task_id=asked.id, url="https://hooks.example.com/r", token="tok"),
            metadata=VERSION_MD,
        )
        listed = await stub.ListTasks(pb.ListTasksRequest(include_artifacts=True), metadata=VERSION_MD)
        assert listed.total_size == 3
    await first.stop(0.2)  # the running task cannot finish: it becomes FAILED

    second = new_server()
    await second.start()
    try:
        async with connect(second) as stub:
            assert await stub.GetTask(pb.GetTaskRequest(id=done.id), metadata=VERSION_MD) == done
            assert await stub.GetTask(pb.GetTaskRequest(id=asked.id), metadata=VERSION_MD) == asked
            stopped = await stub.GetTask(pb.GetTaskRequest(id=running.id), metadata=VERSION_MD)
            assert stopped.status.state == pb.TASK_STATE_FAILED
            again = await stub.ListTasks(pb.ListTasksRequest(include_artifacts=True), metadata=VERSION_MD)
            assert again.total_size == 3
            assert {t.id for t in again.tasks} == {t.id for t in listed.tasks}
            configs = await stub.ListTaskPushNotificationConfigs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=asked.id), metadata=VERSION_MD
            )
            assert list(configs.configs) == [config]
            # The conversation goes on after the restart.
            follow = (await stub.SendMessage(msg("answer", task_id=asked.id), metadata=VERSION_MD)).task
            assert follow.status.state == pb.TASK_STATE_COMPLETED and follow.context_id == "ctx-r"
    finally:
        await second.stop(0.2)


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_reflection(server) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        call = stub.ServerReflectionInfo()
        await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        resp = await call.read()
        names = {s.name for s in resp.list_services_response.service}
        assert {SERVICE_NAME, "grpc.health.v1.Health"} <= names
        assert SERVICE_NAME == "lf.a2a.v1.A2AService"
        await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE_NAME))
        resp = await call.read()
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(b)
            for b in resp.file_descriptor_response.file_descriptor_proto
        ]
        a2a = next(f for f in files if f.package == "lf.a2a.v1")
        # The canonical name, as in proto/: what stubs generated from it register too.
        assert a2a.name == "lf/a2a/v1/a2a.proto"
        service = next(s for s in a2a.service if s.name == "A2AService")
        assert {m.name for m in service.method} == {
            m.name for m in pb.DESCRIPTOR.services_by_name["A2AService"].methods
        }
        assert len(service.method) == 11
        await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol="lf.a2a.v1.Task"))
        resp = await call.read()
        assert resp.WhichOneof("message_response") == "file_descriptor_response"
        await call.write(reflection_pb2.ServerReflectionRequest(file_by_filename="lf/a2a/v1/a2a.proto"))
        resp = await call.read()
        assert resp.WhichOneof("message_response") == "file_descriptor_response"
        await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol="no.such.Symbol"))
        resp = await call.read()
        assert resp.WhichOneof("message_response") == "error_response"
        await call.done_writing()


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_health_and_graceful_shutdown(make_server, agent: ScriptedAgent) -> None:
    """SERVING while up; NOT_SERVING as soon as stop begins; an in-flight
    blocking SendMessage still completes within the grace period."""
    srv = await make_server(agent)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in (SERVICE_NAME, ""):
            resp = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
        assert info.value.code() == grpc.StatusCode.NOT_FOUND

        watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        async with connect(srv) as stub:
            inflight = asyncio.ensure_future(stub.SendMessage(msg("gate drain"), metadata=VERSION_MD))
            await agent.started("drain").wait()
            stopping = asyncio.ensure_future(srv.stop(3.0))
            assert (
                await asyncio.wait_for(watch.read(), 2)
            ).status == health_pb2.HealthCheckResponse.NOT_SERVING
            watch.cancel()
            assert not inflight.done()
            agent.gate("drain").set()  # the work finishes during the grace period
            resp = await asyncio.wait_for(inflight, 3)
            assert resp.task.status.state == pb.TASK_STATE_COMPLETED
            t0 = time.monotonic()
            await asyncio.wait_for(stopping, 5)
            assert time.monotonic() - t0 < 2.5  # did not sit out the whole grace


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_running_stream_ends_within_grace(make_server, agent: ScriptedAgent) -> None:
    srv = await make_server(agent)
    async with connect(srv) as stub:
        call = stub.SendStreamingMessage(msg("slow 30"), metadata=VERSION_MD)
        first = await call.read()
        assert state_of(await call.read()) == pb.TASK_STATE_WORKING
        t0 = time.monotonic()
        stopping = asyncio.ensure_future(srv.stop(1.0))
        # The execution is stopped before gRPC would cut the call, so the
        # stream ends normally, with the task's final status.
        rest = await asyncio.wait_for(read_all(call), 5)
        assert state_of(rest[-1]) == pb.TASK_STATE_FAILED
        assert time.monotonic() - t0 < 3
        await asyncio.wait_for(stopping, 5)
    await srv.store.open()  # reopen what stop() closed, to look at the task
    try:
        stored = await srv.store.get(first.task.id, Owner())
    finally:
        await srv.store.close()
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_FAILED
    assert "server stopped" in stored.task.status.message.parts[0].text


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_blocking_call_outliving_grace_gets_failed_task(make_server, agent: ScriptedAgent) -> None:
    """A blocking SendMessage whose work does not finish within the grace
    period is answered with the task FAILED ("server stopped"), not cut."""
    srv = await make_server(agent)
    async with connect(srv) as stub:
        inflight = asyncio.ensure_future(stub.SendMessage(msg("gate never"), metadata=VERSION_MD))
        await agent.started("never").wait()
        await srv.stop(1.0)
        resp = await asyncio.wait_for(inflight, 3)
    assert resp.task.status.state == pb.TASK_STATE_FAILED
    assert "server stopped" in resp.task.status.message.parts[0].text
    assert resp.task.id in agent.cancelled


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_no_new_messages_while_stopping(make_server, agent: ScriptedAgent) -> None:
    srv = await make_server(agent)
    async with connect(srv) as stub:
        inflight = asyncio.ensure_future(stub.SendMessage(msg("gate late"), metadata=VERSION_MD))
        await agent.started("late").wait()
        stopping = asyncio.ensure_future(srv.stop(2.0))
        await asyncio.sleep(0.05)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.SendMessage(msg("echo late"), metadata=VERSION_MD)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE  # refused by the transport
        agent.gate("late").set()
        assert (await inflight).task.status.state == pb.TASK_STATE_COMPLETED
        await stopping
    assert len(agent.seen) == 1
