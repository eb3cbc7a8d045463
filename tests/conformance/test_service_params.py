"""A2A-Version and A2A-Extensions on every binding (spec §3.2.6, §7.2, §7.3)."""

from __future__ import annotations

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.agents import OPTIONAL_EXTENSION
from tests.conformance.clients import collect
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")


async def test_versions(binding, transcript):
    t = transcript
    for version in ("1.0", "1.0.7"):  # patch ignored
        resp = await binding.call("SendMessage", send("echo v"), headers={"A2A-Version": version})
        t.add(f"version {version}", resp)
        assert resp.task.status.state == pb.TASK_STATE_COMPLETED
    with pytest.raises(A2AError) as missing:  # missing = 0.3 (spec §3.6.2); SendMessage is v1.0-only
        await binding.call("SendMessage", send("echo v"), headers={"A2A-Version": None})
    t.error("version None", missing.value)
    assert missing.value.code is ErrorCode.VERSION_NOT_SUPPORTED
    assert "A2A-Version: 1.0" in missing.value.message
    for version in ("0.3", "2.0", "one"):
        with pytest.raises(A2AError) as exc:
            await binding.call("ListTasks", pb.ListTasksRequest(), headers={"A2A-Version": version})
        t.error(f"version {version}", exc.value)
        assert exc.value.code is ErrorCode.VERSION_NOT_SUPPORTED
        assert exc.value.metadata.get("supportedVersions") == "1.0"
    t.check_parity()


async def test_extensions_requested_and_activated(binding, transcript):
    t = transcript
    header = {"A2A-Extensions": f"{OPTIONAL_EXTENSION}, https://example.com/unknown"}
    resp = t.add("send", await binding.call("SendMessage", send("ext"), headers=header))
    requested = resp.task.artifacts[0].parts[0].text
    assert requested == ",".join(sorted([OPTIONAL_EXTENSION, "https://example.com/unknown"]))
    # Only the extension the agent declares is activated and echoed back.
    assert binding.last_extensions == OPTIONAL_EXTENSION
    t.note("echoed", binding.last_extensions)

    await binding.call("SendMessage", send("ext"))
    assert binding.last_extensions is None
    events = await collect(binding, "SendStreamingMessage", send("ext"), headers=header)
    t.add("stream", events)
    assert binding.last_extensions == OPTIONAL_EXTENSION
    t.check_parity()


@pytest.mark.parametrize("where", ["jsonrpc", "rest"])
async def test_version_as_query_parameter(servers, where):
    """HTTP clients may send A2A-Version as a query parameter (spec §3.6.1)."""
    import aiohttp

    base = f"http://127.0.0.1:{servers.main.http_port}"
    async with aiohttp.ClientSession() as session:
        if where == "rest":
            async with session.get(base + "/tasks", params={"A2A-Version": "9.9"}) as resp:
                assert resp.status == 400
                body = await resp.json(content_type=None)
            assert body["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
            async with session.get(base + "/tasks", params={"A2A-Version": "1.0"}) as resp:
                assert resp.status == 200
        else:
            envelope = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
            async with session.post(base + "/?A2A-Version=9.9", json=envelope) as resp:
                body = await resp.json()
            assert body["error"]["code"] == -32009
