"""GetExtendedAgentCard (spec §3.1.11, §3.3.4) and every ErrorCode as it
leaves the gRPC binding (spec §10.6: rich status with ErrorInfo)."""

from __future__ import annotations

import grpc
import pytest

from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, connect, msg, raises, read_all

pytestmark = pytest.mark.parametrize("store_kind", ["memory"])


async def test_extended_card_not_configured(server, stub) -> None:
    """No extended card: the card does not declare ``extendedAgentCard``
    (absent), so the RPC is UNSUPPORTED_OPERATION (spec §3.3.4, §13.3)."""
    assert not server.card.capabilities.HasField("extended_agent_card")
    with raises(ErrorCode.UNSUPPORTED_OPERATION):
        await stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(), metadata=VERSION_MD)


async def test_extended_card_configured(make_server) -> None:
    extended = pb.AgentCard()
    extended.CopyFrom(ScriptedAgent.card)
    extended.name = "Scripted (extended)"
    extended.skills.add(id="secret", name="Secret", description="Only for callers who ask.", tags=["x"])
    srv = await make_server(extended_card=extended)
    assert srv.card.capabilities.extended_agent_card
    async with connect(srv) as stub:
        got = await stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(), metadata=VERSION_MD)
    assert got == extended


async def test_extended_card_declared_false(make_server) -> None:
    card = pb.AgentCard()
    card.CopyFrom(ScriptedAgent.card)
    card.capabilities.extended_agent_card = False
    srv = await make_server(ScriptedAgent(card))
    async with connect(srv) as stub:
        with raises(ErrorCode.UNSUPPORTED_OPERATION):
            await stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(), metadata=VERSION_MD)


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
async def test_every_error_code_over_grpc(stub, code: ErrorCode) -> None:
    """An A2AError raised below the servicer leaves with the table's gRPC code,
    its message, and ErrorInfo{reason, domain}; on unary and streaming RPCs."""
    with raises(code) as r:
        await stub.SendMessage(msg(f"raise {code.name}"), metadata=VERSION_MD)
    assert r.details == f"agent raised {code.name}"
    with raises(code):
        await read_all(stub.SendStreamingMessage(msg(f"raise {code.name}"), metadata=VERSION_MD))
    assert (await stub.ListTasks(pb.ListTasksRequest(), metadata=VERSION_MD)).total_size == 0


async def test_natural_triggers(server, stub, agent: ScriptedAgent) -> None:
    """Each A2A error the gRPC binding produces on its own, with its trigger.
    (INVALID_AGENT_RESPONSE, RESOURCE_EXHAUSTED, the push and extension errors
    are triggered in their own test modules.)"""
    done = (await stub.SendMessage(msg("echo done"), metadata=VERSION_MD)).task
    with raises(ErrorCode.TASK_NOT_FOUND):
        await stub.GetTask(pb.GetTaskRequest(id="missing"), metadata=VERSION_MD)
    with raises(ErrorCode.TASK_NOT_CANCELABLE):
        await stub.CancelTask(pb.CancelTaskRequest(id=done.id), metadata=VERSION_MD)
    with raises(ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED):
        await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=done.id), metadata=VERSION_MD
        )
    with raises(ErrorCode.UNSUPPORTED_OPERATION):
        await stub.SendMessage(msg("again", task_id=done.id), metadata=VERSION_MD)
    with raises(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED):
        await stub.SendMessage(msg("refuse"), metadata=VERSION_MD)
    with raises(ErrorCode.INVALID_AGENT_RESPONSE):
        await stub.SendMessage(msg("empty"), metadata=VERSION_MD)
    with raises(ErrorCode.UNSUPPORTED_OPERATION):  # no extended card (claimed but missing: test_interceptors)
        await stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(), metadata=VERSION_MD)
    with raises(ErrorCode.VERSION_NOT_SUPPORTED):
        await stub.GetTask(pb.GetTaskRequest(id=done.id), metadata=(("a2a-version", "9.9"),))
    with raises(ErrorCode.INVALID_PARAMS):
        await stub.GetTask(pb.GetTaskRequest(), metadata=VERSION_MD)
    with raises(ErrorCode.INTERNAL):
        await stub.SendMessage(msg("boom-first"), metadata=VERSION_MD)
    # METHOD_NOT_FOUND is gRPC's own UNIMPLEMENTED (no ErrorInfo: the call
    # never reaches the servicer).
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await channel.unary_unary("/lf.a2a.v1.A2AService/Nope")(b"")
        assert info.value.code() == ErrorCode.METHOD_NOT_FOUND.grpc_code
