"""OUR client (``A2AClient`` and the CLI) drives an official **a2a-sdk 0.3.x**
server — an A2A v0.3 agent — with the same v1.0 API (issue 13 item 7).

``tests/interop/sdk03_server.py`` runs in the ``a2a-sdk==0.3.*`` virtualenv
(with its server extras) as a subprocess; its card is a pure v0.3 card
(``url`` / ``preferredTransport`` / ``additionalInterfaces``,
``protocolVersion: "0.3.0"``), so the client must find its endpoints there and
speak the v0.3 wire of the chosen binding. The SDK server validates every
request with its own v0.3 models, so a wrong ``kind``, state or shape fails.
"""

from __future__ import annotations

import asyncio
import json
import re
import select
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from a2a_grpc.cli import main
from a2a_grpc.client import A2AClient, A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.interop.conftest import HERE, ROOT, SDK03_REQUIREMENT, _child_env

pytestmark = pytest.mark.interop

#: The bindings our client speaks v0.3 over.
V03_BINDINGS = ("jsonrpc", "grpc", "rest")
CARD_BINDING = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
#: The same version as the client's venv (``a2a-sdk[grpc]==0.3.*``), with the server's extras too.
SERVER_EXTRAS = "a2a-sdk[http-server,grpc]" + SDK03_REQUIREMENT[SDK03_REQUIREMENT.index("==") :]


@dataclass(slots=True)
class Sdk03Server:
    base_url: str
    grpc_target: str


@pytest.fixture(scope="session")
def sdk03_server_python(sdk03_python: str) -> str:
    """The 0.3 SDK's virtualenv, with what its servers need (FastAPI, gRPC, uvicorn)."""
    probe = [sdk03_python, "-c", "import a2a.server.apps, a2a.grpc.a2a_pb2_grpc, fastapi, uvicorn"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        install = [sdk03_python, "-m", "pip", "install", "-q", SERVER_EXTRAS, "uvicorn"]
        proc = subprocess.run(install, capture_output=True, text=True, check=False, timeout=600)
        if proc.returncode != 0:
            pytest.fail(f"pip install {SERVER_EXTRAS} uvicorn failed:\n{proc.stderr[-3000:]}")
    return sdk03_python


@pytest.fixture(scope="module")
def sdk03_server(sdk03_server_python: str) -> Iterator[Sdk03Server]:
    proc = subprocess.Popen(
        [sdk03_server_python, str(HERE / "sdk03_server.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=_child_env(),
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        match = re.match(r"READY grpc=(\d+) http=(\d+)", line)
        if not match:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"sdk03_server.py did not start: {line!r}\n{err}")
        grpc_port, http_port = match.groups()
        yield Sdk03Server(f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(params=V03_BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def client(sdk03_server: Sdk03Server, binding: str) -> AsyncIterator[A2AClient]:
    async with await A2AClient.connect(sdk03_server.base_url, bindings=[binding], timeout=15.0) as c:
        yield c


async def test_the_v03_card_gives_the_interfaces(
    client: A2AClient, binding: str, sdk03_server: Sdk03Server
) -> None:
    assert client.card is not None and client.card.name == "SDK 0.3 Echo"
    ifaces = [(i.protocol_binding, i.url, i.protocol_version) for i in client.card.supported_interfaces]
    base = sdk03_server.base_url
    assert ifaces == [  # url + preferredTransport first, then additionalInterfaces without repeats (C10)
        ("JSONRPC", base + "/jsonrpc", "0.3"),
        ("GRPC", sdk03_server.grpc_target, "0.3"),
        ("HTTP+JSON", base + "/rest", "0.3"),
    ]
    assert client.card.capabilities.extended_agent_card  # supportsAuthenticatedExtendedCard (S15)
    assert client.binding == binding
    assert client.interface.protocol_binding == CARD_BINDING[binding]
    assert client.interface.protocol_version == "0.3"


async def test_blocking_send_returns_the_v10_task(client: A2AClient) -> None:
    task = (await client.send_message("hello 0.3")).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert [a.name for a in task.artifacts] == ["echo"]
    assert [p.text for p in task.artifacts[0].parts] == ["hello 0.3"]
    assert task.history[0].role == pb.ROLE_USER


async def test_parts_round_trip(client: A2AClient, binding: str) -> None:
    data = pb.Part()
    data.data.struct_value.update({"n": 1.5, "list": [1, "x"]})
    # the 0.3 SDK server reads FilePart bytes as UTF-8 text on its proto path
    content = b"\xfb\xff\x00" if binding == "jsonrpc" else "héllo".encode()
    raw = pb.Part(raw=content, media_type="application/octet-stream", filename="b.bin")
    url = pb.Part(url="https://example.com/f.txt", media_type="text/plain", filename="f.txt")
    text = pb.Part(text="t")
    text.metadata.update({"k": "v"})
    parts = (await client.send_message([text, data, raw, url])).task.artifacts[0].parts
    assert [p.WhichOneof("content") for p in parts] == ["text", "data", "raw", "url"]
    assert parts[1].data.struct_value["n"] == 1.5
    assert (parts[2].raw, parts[2].media_type) == (content, "application/octet-stream")
    assert (parts[3].url, parts[3].media_type) == ("https://example.com/f.txt", "text/plain")
    if binding == "jsonrpc":  # the v0.3 JSON has slots for these; the v0.3 proto does not (C5)
        assert (parts[2].filename, dict(parts[0].metadata)) == ("b.bin", {"k": "v"})
    else:
        assert (parts[2].filename, dict(parts[0].metadata)) == ("", {})


async def test_direct_reply_is_a_message(client: A2AClient) -> None:
    response = await client.send_message("reply")
    assert response.WhichOneof("payload") == "message"
    assert response.message.role == pb.ROLE_AGENT
    assert response.message.parts[0].text == "a direct reply"


async def test_stream_ends_completed_without_final(client: A2AClient) -> None:
    events = [e async for e in client.send_streaming_message("hello stream")]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task" and "artifact_update" in kinds, kinds
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED


async def test_get_trims_history_as_asked(client: A2AClient) -> None:
    task = (await client.send_message("keep me")).task
    assert len((await client.get_task(task.id)).history) >= 1
    # v0.3 reads historyLength 0 as "all" (C7): the client asks for all and trims
    assert len((await client.get_task(task.id, history_length=0)).history) == 0


async def test_cancel_a_working_task(client: A2AClient) -> None:
    config = pb.SendMessageConfiguration(return_immediately=True)  # blocking: false (C6)
    task = (await client.send_message("slow 30", configuration=config)).task
    assert task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    canceled = await client.cancel_task(task.id)
    assert canceled.status.state == pb.TASK_STATE_CANCELED


async def test_resubscribe_follows_to_the_end(client: A2AClient) -> None:
    config = pb.SendMessageConfiguration(return_immediately=True)
    task = (await client.send_message("slow 1", configuration=config)).task
    states = [
        e.status_update.status.state
        async for e in client.subscribe_to_task(task.id)
        if e.HasField("status_update")
    ]
    assert states[-1] == pb.TASK_STATE_COMPLETED


async def test_push_configs(client: A2AClient, binding: str) -> None:
    task = (await client.send_message("hello push")).task
    config = pb.TaskPushNotificationConfig(
        task_id=task.id, id="hook-1", url="https://example.com/hook", token="tok"
    )
    config.authentication.scheme = "Bearer"
    config.authentication.credentials = "secret"
    created = await client.create_task_push_notification_config(config)
    assert (created.task_id, created.id, created.url) == (task.id, "hook-1", "https://example.com/hook")
    got = await client.get_task_push_notification_config(task.id, "hook-1")
    assert got.authentication.scheme == "Bearer"  # schemes[0] (C1)
    assert got.token == "tok"
    if binding != "jsonrpc":  # the 0.3 SDK serves List / Delete on JSON-RPC only
        with pytest.raises(A2AError, match=r"not implemented|unknown exception"):
            await client.list_task_push_notification_configs(task.id)
        return
    listed = await client.list_task_push_notification_configs(task.id)
    assert [c.id for c in listed.configs] == ["hook-1"]
    await client.delete_task_push_notification_config(task.id, "hook-1")
    assert not (await client.list_task_push_notification_configs(task.id)).configs


async def test_unknown_task_is_task_not_found(client: A2AClient) -> None:
    with pytest.raises(A2AError) as info:
        await client.get_task("no-such-task")
    assert info.value.code is ErrorCode.TASK_NOT_FOUND


async def test_list_tasks_has_no_v03_method(client: A2AClient) -> None:
    with pytest.raises(A2AError) as info:
        await client.list_tasks()
    assert info.value.code is ErrorCode.UNSUPPORTED_OPERATION
    assert "0.3" in info.value.message


async def test_unknown_state_is_an_invalid_agent_response(client: A2AClient) -> None:
    with pytest.raises(A2AError) as info:  # C9: no v1.0 state, the outcome is indeterminate
        await client.send_message("unknown")
    assert info.value.code is ErrorCode.INVALID_AGENT_RESPONSE
    assert "unknown" in info.value.message


async def test_zone_less_timestamps_are_read_as_utc(client: A2AClient, binding: str) -> None:
    if binding != "jsonrpc":
        pytest.skip(
            "only v0.3 JSON carries timestamp strings (the SDK server drops a zone-less one on its proto path)"
        )
    task = (await client.send_message("naive")).task  # C20
    assert task.status.timestamp.ToDatetime(UTC) == datetime(2025, 7, 31, 10, 0, 1, 500000, tzinfo=UTC)


async def test_extended_card(client: A2AClient, binding: str) -> None:
    card = await client.get_extended_agent_card()
    # the 0.3 SDK's GrpcHandler answers GetAgentCard with the public card
    assert card.name == ("SDK 0.3 Echo" if binding == "grpc" else "SDK 0.3 Echo (extended)")
    assert card.supported_interfaces[0].protocol_version == "0.3"


async def test_grpc_url_without_a_card_finds_the_v03_service(sdk03_server: Sdk03Server) -> None:
    async with await A2AClient.connect("grpc://" + sdk03_server.grpc_target) as client:
        assert client.interface.protocol_version == "0.3"  # reflection lists only a2a.v1.A2AService
        task = (await client.send_message("over grpc://")).task
        assert task.status.state == pb.TASK_STATE_COMPLETED


async def test_cli_against_the_v03_agent(sdk03_server: Sdk03Server) -> None:
    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, list(args))
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        return result.stdout

    card = await asyncio.to_thread(cli, "card", sdk03_server.base_url)
    assert "SDK 0.3 Echo" in card and "0.3" in card
    out = await asyncio.to_thread(cli, "send", sdk03_server.base_url, "hello cli", "--json")
    task = json.loads(out)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    shown = await asyncio.to_thread(cli, "task", "get", sdk03_server.base_url, task["id"])
    assert "COMPLETED" in shown and "hello cli" in shown
