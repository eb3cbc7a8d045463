"""Incoming media types are checked against the card's input modes before
the agent runs (issue 10, item 12; spec §3.3.2 ContentTypeNotSupportedError),
with the same error on every binding."""

from __future__ import annotations

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.clients import collect
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")

ACCEPTED = "text/plain, application/octet-stream, application/json"


async def test_a_part_outside_the_input_modes_is_refused_before_the_agent_runs(binding, transcript):
    t = transcript
    png = pb.Part(raw=b"\x89PNG\r\n", media_type="image/png", filename="x.png")
    for rpc in ("SendMessage", "SendStreamingMessage"):
        with pytest.raises(A2AError) as exc:
            if rpc == "SendMessage":
                await binding.call(rpc, send("echo x", png))
            else:
                await collect(binding, rpc, send("echo x", png))
        t.error(rpc, exc.value)
        assert exc.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
        assert "message.parts[1] has media type image/png" in exc.value.message
        assert f"accepted input modes: {ACCEPTED}" in exc.value.message
    t.check_parity()


async def test_parts_inside_the_input_modes_reach_the_agent(binding, transcript):
    data = pb.Part(media_type="application/json; charset=utf-8")
    data.data.string_value = "x"
    for part in (pb.Part(text="echo y", media_type="TEXT/Plain"), pb.Part(raw=b"\x00"), data):
        task = (await binding.call("SendMessage", send(part))).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
    transcript.check_parity()
