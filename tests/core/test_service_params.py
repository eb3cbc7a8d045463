"""Service parameters over gRPC metadata: A2A-Version and A2A-Extensions
(spec §3.2.6, §10.2; digest §7.2, §7.3; design.md A3)."""

from __future__ import annotations

import pytest

from a2a_grpc.core._handler import HandlerConfig
from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import connect, msg, raises, read_all

pytestmark = pytest.mark.parametrize("store_kind", ["memory"])

REQUIRED = "https://example.com/ext/required/v1"
OPTIONAL = "https://example.com/ext/optional/v1"


@pytest.mark.parametrize("version", ["1.0", "1.0.3", " 1.0 "])
async def test_supported_versions(stub, version: str) -> None:
    resp = await stub.SendMessage(msg("echo v"), metadata=(("a2a-version", version),))
    assert resp.task.status.state == pb.TASK_STATE_COMPLETED


@pytest.mark.parametrize("version", ["2.0", "0.3", "1.1", "1", "banana"])
async def test_unsupported_versions(stub, version: str) -> None:
    md = (("a2a-version", version),)
    with raises(ErrorCode.VERSION_NOT_SUPPORTED) as r:
        await stub.SendMessage(msg("echo v"), metadata=md)
    assert r.error is not None and r.error.metadata["supportedVersions"] == "1.0"
    with raises(ErrorCode.VERSION_NOT_SUPPORTED):
        await stub.GetTask(pb.GetTaskRequest(id="x"), metadata=md)
    with raises(ErrorCode.VERSION_NOT_SUPPORTED):
        await read_all(stub.SendStreamingMessage(msg("echo v"), metadata=md))
    with raises(ErrorCode.VERSION_NOT_SUPPORTED):
        await read_all(stub.SubscribeToTask(pb.SubscribeToTaskRequest(id="x"), metadata=md))
    assert (await stub.ListTasks(pb.ListTasksRequest(), metadata=(("a2a-version", "1.0"),))).total_size == 0


async def test_missing_version_served_as_1_0_when_lenient(make_server) -> None:
    srv = await make_server(handler=HandlerConfig(strict_version=False))  # --lenient-version
    async with connect(srv) as stub:
        resp = await stub.SendMessage(msg("echo v"))
        assert resp.task.status.state == pb.TASK_STATE_COMPLETED
        got = await stub.GetTask(pb.GetTaskRequest(id=resp.task.id), metadata=(("a2a-version", ""),))
        assert got.id == resp.task.id


async def test_missing_version_is_refused_by_default(stub) -> None:
    with raises(ErrorCode.VERSION_NOT_SUPPORTED) as r:
        await stub.SendMessage(msg("echo v"))
    assert "send the header A2A-Version: 1.0" in r.details and "SendMessage" in r.details


async def test_missing_version_strict(make_server) -> None:
    srv = await make_server(handler=HandlerConfig(strict_version=True))
    async with connect(srv) as stub:
        with raises(ErrorCode.VERSION_NOT_SUPPORTED) as r:
            await stub.SendMessage(msg("echo v"))
        assert "0.3" in r.details
        ok = await stub.SendMessage(msg("echo v"), metadata=(("a2a-version", "1.0"),))
        assert ok.task.status.state == pb.TASK_STATE_COMPLETED
        assert (
            await stub.ListTasks(pb.ListTasksRequest(), metadata=(("a2a-version", "1.0"),))
        ).total_size == 1


def _card_with_extensions() -> pb.AgentCard:
    card = pb.AgentCard()
    card.CopyFrom(ScriptedAgent.card)
    card.capabilities.extensions.add(uri=REQUIRED, description="must be used", required=True)
    card.capabilities.extensions.add(uri=OPTIONAL, description="may be used")
    return card


async def test_required_extension(make_server) -> None:
    agent = ScriptedAgent(_card_with_extensions())
    srv = await make_server(agent)
    async with connect(srv) as stub:
        for md in ((("a2a-version", "1.0"),), (("a2a-version", "1.0"), ("a2a-extensions", OPTIONAL))):
            with raises(ErrorCode.EXTENSION_SUPPORT_REQUIRED) as r:
                await stub.SendMessage(msg("echo e"), metadata=md)
            assert r.error is not None and r.error.metadata["requiredExtensions"] == REQUIRED
        assert agent.seen == []
        ok = stub.SendMessage(
            msg("echo e"), metadata=(("a2a-version", "1.0"), ("a2a-extensions", f" {REQUIRED} ,urn:unknown"))
        )
        resp = await ok
        assert resp.task.status.state == pb.TASK_STATE_COMPLETED
        assert dict(await ok.initial_metadata())["a2a-extensions"] == REQUIRED
        assert agent.seen[-1].call.requested_extensions == frozenset({REQUIRED, "urn:unknown"})
        assert agent.seen[-1].call.activated_extensions == {REQUIRED}


async def test_extensions_echoed(make_server) -> None:
    agent = ScriptedAgent(_card_with_extensions())
    srv = await make_server(agent)
    md = (("a2a-version", "1.0"), ("a2a-extensions", REQUIRED), ("a2a-extensions", f"{OPTIONAL}, urn:nope"))
    async with connect(srv) as stub:
        call = stub.SendMessage(msg("echo e"), metadata=md)
        task = (await call).task
        echoed = dict(await call.initial_metadata())["a2a-extensions"]
        assert sorted(echoed.split(",")) == sorted([REQUIRED, OPTIONAL])
        stream = stub.SendStreamingMessage(msg("echo s"), metadata=md)
        events = await read_all(stream)
        assert events[0].task.id
        assert sorted(dict(await stream.initial_metadata())["a2a-extensions"].split(",")) == sorted(
            [REQUIRED, OPTIONAL]
        )
        unary = stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=md)
        await unary
        assert "a2a-extensions" in dict(await unary.initial_metadata())


async def test_no_echo_without_activation(stub) -> None:
    call = stub.SendMessage(
        msg("echo e"), metadata=(("a2a-version", "1.0"), ("a2a-extensions", "urn:unknown"))
    )
    await call
    assert "a2a-extensions" not in dict(await call.initial_metadata())
