"""The official JS SDK client (``@a2a-js/sdk`` 1.x, the v1.0 API) run with the
machine's Node drives OUR server over JSON-RPC and REST (issue 4 item 5), and
over gRPC too (its Node-only transport on ``@grpc/grpc-js``).

``tests/interop/js/client.mjs`` runs once per binding and prints one JSON line
per step; the values are the SDK's own ProtoJSON (``Task.toJSON`` …), parsed
back into our ``pb`` messages with unknown fields rejected. ``@a2a-js/sdk`` and
the optional peers of its gRPC transport (``@grpc/grpc-js``,
``@bufbuild/protobuf``) are devDependencies in ``package.json`` (``make
install`` runs ``npm install``).
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_grpc.types import pb
from tests.interop.conftest import HERE, LiveServer, node_binary, run_json_lines, sample_parts
from tests.interop.test_sdk_client import ok, parse

JS_BINDINGS = ("jsonrpc", "rest", "grpc")
JS_PROTOCOL = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "grpc": "GRPC"}

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module", params=JS_BINDINGS)
def js_run(request: pytest.FixtureRequest, our_server: LiveServer) -> dict[str, Any]:
    node = node_binary()
    if node is None:
        pytest.fail("node or node_modules/@a2a-js/sdk is missing: run `make install` (npm install)")
    binding = request.param
    steps = run_json_lines([node, str(HERE / "js" / "client.mjs"), our_server.base_url, binding])
    steps["binding"] = {"value": binding}
    return steps


def test_public_card(js_run: dict[str, Any], our_server: LiveServer) -> None:
    card = parse(ok(js_run, "public_card"), pb.AgentCard())
    assert card.name == "Interop Agent"
    interfaces = {i.protocol_binding: i.url for i in card.supported_interfaces}
    assert interfaces["GRPC"] == our_server.grpc_target
    assert interfaces["JSONRPC"].rstrip("/") == interfaces["HTTP+JSON"] == our_server.base_url


def test_card(js_run: dict[str, Any]) -> None:
    """``Client.getAgentCard()`` is how a JS caller reads the card: when the
    card declares ``capabilities.extendedAgentCard: true`` the SDK calls
    GetExtendedAgentCard and fails on EXTENDED_AGENT_CARD_NOT_CONFIGURED. So
    our card must declare the capability only when ``A2AServer(extended_card=
    ...)`` is set (spec §3.1.11, digest §8.3) — the first version of the server
    declared it always and this test caught it."""
    card = parse(ok(js_run, "card"), pb.AgentCard())
    assert card.name == "Interop Agent"
    assert {i.protocol_binding for i in card.supported_interfaces} == {"GRPC", "JSONRPC", "HTTP+JSON"}


def test_transport(js_run: dict[str, Any]) -> None:
    # createFromUrl fetched the public card and picked the interface of the one binding allowed.
    assert ok(js_run, "transport")["protocol"] == JS_PROTOCOL[js_run["binding"]["value"]]


def test_blocking_send(js_run: dict[str, Any]) -> None:
    task = parse(ok(js_run, "send")["task"], pb.Task())
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert [a.name for a in task.artifacts] == ["echo"]
    assert [p.text for p in task.artifacts[0].parts] == ["hello js"]
    assert task.history[0].role == pb.ROLE_USER


def test_streaming_send(js_run: dict[str, Any]) -> None:
    events = [parse(e, pb.StreamResponse()) for e in ok(js_run, "stream")]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task", kinds
    assert set(kinds[1:]) <= {"status_update", "artifact_update"}, kinds
    texts = [
        p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts
    ]
    assert texts == ["hello js stream"]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert events[-1].status_update.task_id == events[0].task.id


def test_get_task(js_run: dict[str, Any]) -> None:
    sent = parse(ok(js_run, "send")["task"], pb.Task())
    assert parse(ok(js_run, "get"), pb.Task()) == sent


def test_list_tasks(js_run: dict[str, Any]) -> None:
    sent = parse(ok(js_run, "send")["task"], pb.Task())
    page = parse(ok(js_run, "list"), pb.ListTasksResponse())
    assert [t.id for t in page.tasks] == [sent.id]
    assert page.total_size == 1


def test_cancel_task(js_run: dict[str, Any]) -> None:
    submitted = parse(ok(js_run, "cancel_submit")["task"], pb.Task())
    assert submitted.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    canceled = parse(ok(js_run, "cancel"), pb.Task())
    assert canceled.id == submitted.id and canceled.status.state == pb.TASK_STATE_CANCELED
    assert parse(ok(js_run, "cancel_get"), pb.Task()).status.state == pb.TASK_STATE_CANCELED


def test_error_task_not_found(js_run: dict[str, Any]) -> None:
    record = js_run["error"]
    assert not record["ok"], record
    assert record["error"]["isTaskNotFound"], record["error"]  # instanceof TaskNotFoundError


def test_get_task_history_length_zero(js_run: dict[str, Any]) -> None:
    task = parse(ok(js_run, "get_history0"), pb.Task())
    assert len(task.history) == 0 and len(task.artifacts) == 1


def test_multi_turn_input_required(js_run: dict[str, Any]) -> None:
    turns = ok(js_run, "multi_turn")
    asked = [parse(e, pb.StreamResponse()) for e in turns["asked"]]
    task_id = asked[0].task.id
    assert asked[-1].status_update.status.state == pb.TASK_STATE_INPUT_REQUIRED
    answered = parse(turns["answered"]["task"], pb.Task())
    assert answered.id == task_id and answered.status.state == pb.TASK_STATE_COMPLETED
    assert [p.text for p in answered.artifacts[-1].parts] == ["the answer"]


def test_subscribe_then_cancel(js_run: dict[str, Any]) -> None:
    events = [parse(e, pb.StreamResponse()) for e in ok(js_run, "subscribe")]
    assert events[0].task.status.state == pb.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    assert events[-1].status_update.task_id == events[0].task.id


@pytest.mark.parametrize("step", ["stream_terminal", "subscribe_terminal"])
def test_stream_errors_on_terminal_task(js_run: dict[str, Any], step: str) -> None:
    """Errors raised before a stream opens reach the JS SDK as typed errors
    (design.md: a terminal task takes no messages and cannot be subscribed to)."""
    record = js_run[step]
    assert not record["ok"], record
    assert record["error"]["isUnsupportedOperation"], record["error"]


def test_all_part_kinds_round_trip(js_run: dict[str, Any]) -> None:
    """The JS SDK's encoding of every Part kind (``Buffer`` as base64, a JSON
    ``data`` value, metadata) is read by our server and echoed back unchanged."""
    task = parse(ok(js_run, "parts")["task"], pb.Task())
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert list(task.history[0].parts) == sample_parts()
    assert list(task.artifacts[0].parts) == sample_parts()
    assert dict(task.history[0].metadata) == {"origin": "a2a-js"}


def test_list_tasks_with_every_filter(js_run: dict[str, Any]) -> None:
    """status (enum), pageSize, historyLength 0, statusTimestampAfter and
    includeArtifacts: on REST these are query parameters (spec §11.5)."""
    sent = parse(ok(js_run, "send")["task"], pb.Task())
    page = parse(ok(js_run, "list_filtered"), pb.ListTasksResponse())
    assert [t.id for t in page.tasks] == [sent.id]
    assert page.page_size == 5
    assert len(page.tasks[0].history) == 0
    assert [p.text for p in page.tasks[0].artifacts[0].parts] == ["hello js"]


def test_direct_message_reply(js_run: dict[str, Any]) -> None:
    """An agent may answer with one Message and no task (spec §3.1.1)."""
    message = parse(ok(js_run, "reply")["message"], pb.Message())
    assert [p.text for p in message.parts] == ["a direct reply"] and not message.task_id
    events = [parse(e, pb.StreamResponse()) for e in ok(js_run, "reply_stream")]
    assert [e.WhichOneof("payload") for e in events] == ["message"]


def test_agent_failure_is_a_failed_task(js_run: dict[str, Any]) -> None:
    """An agent that raises: the blocking answer is the FAILED task (spec
    §3.2.2), the stream ends with the FAILED status."""
    assert parse(ok(js_run, "boom")["task"], pb.Task()).status.state == pb.TASK_STATE_FAILED
    events = [parse(e, pb.StreamResponse()) for e in ok(js_run, "boom_stream")]
    assert events[-1].status_update.status.state == pb.TASK_STATE_FAILED
