"""The official Python SDK client (``a2a-sdk``) drives OUR server over gRPC,
JSON-RPC and REST (issue 4 item 5).

``tests/interop/sdk_client.py`` runs in a subprocess per binding (the SDK's
protos cannot share our process) and prints one JSON line per step; every
value it prints is parsed back into our own ``pb`` messages with
``json_format.ParseDict`` (unknown fields are an error), so a schema drift
between the SDK's ``lf.a2a.v1`` and ours fails here too.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from google.protobuf import json_format

from a2a_grpc.types import pb
from tests.interop.conftest import BINDINGS, HERE, LiveServer, run_json_lines, sample_parts

SDK_TRANSPORTS = {"grpc": "GrpcTransport", "jsonrpc": "JsonRpcTransport", "rest": "RestTransport"}

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module", params=BINDINGS)
def sdk_run(request: pytest.FixtureRequest, our_server: LiveServer) -> dict[str, Any]:
    """All the SDK client's steps over one binding, keyed by step name."""
    binding = request.param
    assert our_server.webhook is not None
    argv = [sys.executable, str(HERE / "sdk_client.py"), our_server.base_url, binding]
    steps = run_json_lines([*argv, "--webhook", our_server.webhook.base_url])
    steps["binding"] = {"value": binding}
    return steps


def ok(steps: dict[str, Any], name: str) -> Any:
    assert name in steps, f"step {name!r} did not run: {sorted(steps)}"
    record = steps[name]
    assert record["ok"], f"step {name!r} failed over {steps['binding']['value']}: {record['error']}"
    return record["value"]


def parse(value: dict[str, Any], message: Any) -> Any:
    return json_format.ParseDict(value, message)


def test_card(sdk_run: dict[str, Any], our_server: LiveServer) -> None:
    card = parse(ok(sdk_run, "card"), pb.AgentCard())
    assert card.name == "Interop Agent"
    assert card.capabilities.streaming
    bindings = {i.protocol_binding: i for i in card.supported_interfaces}
    assert set(bindings) == {"GRPC", "JSONRPC", "HTTP+JSON"}
    assert all(i.protocol_version == "1.0" for i in card.supported_interfaces)
    assert bindings["GRPC"].url == our_server.grpc_target
    # The SDK's ClientFactory picked the interface of the binding it was allowed.
    assert ok(sdk_run, "transport") == SDK_TRANSPORTS[sdk_run["binding"]["value"]]


def test_blocking_send(sdk_run: dict[str, Any]) -> None:
    events = [parse(e, pb.StreamResponse()) for e in ok(sdk_run, "send")]
    assert len(events) == 1 and events[0].WhichOneof("payload") == "task"
    task = events[0].task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert [a.name for a in task.artifacts] == ["echo"]
    assert [p.text for p in task.artifacts[0].parts] == ["hello interop"]
    assert task.history[0].role == pb.ROLE_USER
    assert task.history[0].parts[0].text == "hello interop"
    assert task.history[0].task_id == task.id and task.history[0].context_id == task.context_id


def test_streaming_send(sdk_run: dict[str, Any]) -> None:
    events = [parse(e, pb.StreamResponse()) for e in ok(sdk_run, "stream")]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task", kinds
    task_id = events[0].task.id
    assert events[0].task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    assert set(kinds[1:]) <= {"status_update", "artifact_update"}, kinds
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [p.text for a in artifacts for p in a.artifact.parts] == ["hello stream"]
    statuses = [e.status_update for e in events if e.HasField("status_update")]
    assert statuses and statuses[-1].status.state == pb.TASK_STATE_COMPLETED
    assert kinds[-1] == "status_update"  # the stream ends at the terminal status
    assert all(u.task_id == task_id for u in [*artifacts, *statuses])


def test_get_task(sdk_run: dict[str, Any]) -> None:
    sent = parse(ok(sdk_run, "send")[0], pb.StreamResponse()).task
    got = parse(ok(sdk_run, "get"), pb.Task())
    assert got == sent


def test_list_tasks(sdk_run: dict[str, Any]) -> None:
    sent = parse(ok(sdk_run, "send")[0], pb.StreamResponse()).task
    page = parse(ok(sdk_run, "list"), pb.ListTasksResponse())
    assert [t.id for t in page.tasks] == [sent.id]  # filtered by the send's contextId
    assert page.total_size == 1
    assert page.next_page_token == ""
    assert page.tasks[0].status.state == pb.TASK_STATE_COMPLETED
    assert not page.tasks[0].artifacts  # includeArtifacts defaults to false (spec §3.1.4)


def test_cancel_task(sdk_run: dict[str, Any]) -> None:
    submitted = parse(ok(sdk_run, "cancel_submit")[0], pb.StreamResponse()).task
    assert submitted.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    canceled = parse(ok(sdk_run, "cancel"), pb.Task())
    assert canceled.id == submitted.id
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    after = parse(ok(sdk_run, "cancel_get"), pb.Task())
    assert after.status.state == pb.TASK_STATE_CANCELED


def test_error_task_not_found(sdk_run: dict[str, Any]) -> None:
    record = sdk_run["error"]
    assert not record["ok"], f"GetTask on an unknown id succeeded: {record}"
    assert record["error"]["module"] == "a2a.utils.errors"
    assert record["error"]["type"] == "TaskNotFoundError", record["error"]


def err(steps: dict[str, Any], name: str) -> dict[str, Any]:
    assert name in steps, f"step {name!r} did not run: {sorted(steps)}"
    record = steps[name]
    assert not record["ok"], f"step {name!r} succeeded but should fail: {record['value']}"
    assert record["error"]["module"] == "a2a.utils.errors", record["error"]
    return dict(record["error"])


def test_get_task_history_length_zero(sdk_run: dict[str, Any]) -> None:
    task = parse(ok(sdk_run, "get_history0"), pb.Task())
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert len(task.history) == 0  # historyLength 0: none (spec §3.1.3, design.md)
    assert len(task.artifacts) == 1


def test_list_tasks_pages(sdk_run: dict[str, Any]) -> None:
    first, second = (parse(p, pb.ListTasksResponse()) for p in ok(sdk_run, "list_pages"))
    assert len(first.tasks) == 1 and len(second.tasks) == 1
    assert first.next_page_token and not second.next_page_token
    assert first.total_size == second.total_size == 2
    texts = {t.history[0].parts[0].text for t in (*first.tasks, *second.tasks)}
    assert texts == {"page one", "page two"}


def test_error_send_to_terminal_task(sdk_run: dict[str, Any]) -> None:
    assert err(sdk_run, "send_terminal")["type"] == "UnsupportedOperationError"


def test_subscribe_then_cancel(sdk_run: dict[str, Any]) -> None:
    events = [parse(e, pb.StreamResponse()) for e in ok(sdk_run, "subscribe")]
    assert events[0].WhichOneof("payload") == "task"  # the snapshot first (spec §3.1.6)
    assert events[0].task.status.state == pb.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    assert events[-1].status_update.task_id == events[0].task.id


def test_error_subscribe_terminal_task(sdk_run: dict[str, Any]) -> None:
    assert err(sdk_run, "subscribe_terminal")["type"] == "UnsupportedOperationError"


def test_multi_turn_input_required(sdk_run: dict[str, Any]) -> None:
    """The stream of ``ask`` ends at INPUT_REQUIRED (design.md A2: interrupted
    ends SendStreamingMessage); the follow-up on the same task completes it."""
    turns = ok(sdk_run, "multi_turn")
    asked = [parse(e, pb.StreamResponse()) for e in turns["asked"]]
    assert asked[0].WhichOneof("payload") == "task"
    task_id = asked[0].task.id
    assert asked[-1].status_update.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert asked[-1].status_update.status.message.parts[0].text == "what should I echo?"
    answered = parse(turns["answered"][0], pb.StreamResponse()).task
    assert answered.id == task_id
    assert answered.status.state == pb.TASK_STATE_COMPLETED
    assert [p.text for p in answered.artifacts[-1].parts] == ["the answer"]
    assert [m.role for m in answered.history][:3] == [pb.ROLE_USER, pb.ROLE_AGENT, pb.ROLE_USER]


def test_all_part_kinds_round_trip(sdk_run: dict[str, Any]) -> None:
    """Text with metadata, raw bytes (base64 with ``+`` and ``/``), a JSON data
    value, a URL, media types and file names survive the SDK's encoding and
    ours unchanged, in the stored history and in the echoed artifact."""
    task = parse(ok(sdk_run, "parts")[0], pb.StreamResponse()).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert list(task.history[0].parts) == sample_parts()
    assert list(task.artifacts[0].parts) == sample_parts()
    assert dict(task.history[0].metadata) == {"origin": "a2a-sdk"}


def test_extended_card(sdk_run: dict[str, Any]) -> None:
    """``Client.get_extended_agent_card`` calls GetExtendedAgentCard only when
    the card declares ``extendedAgentCard``; our server has none configured, so
    it must not declare it and the SDK returns the public card (spec §3.1.11,
    digest §8.3)."""
    card = parse(ok(sdk_run, "extended_card"), pb.AgentCard())
    assert card.name == "Interop Agent"
    assert not card.capabilities.extended_agent_card


def test_tenant_scoping(sdk_run: dict[str, Any]) -> None:
    """An interface with ``tenant: acme`` makes the SDK send the tenant (REST
    ``/acme/...`` path, JSON-RPC and gRPC request field); our server keeps the
    task in that tenant: readable and listed there, TaskNotFound without it
    (spec §8.3.2, design.md "Data and identity")."""
    created = parse(ok(sdk_run, "tenant_send")[0], pb.StreamResponse()).task
    assert created.status.state == pb.TASK_STATE_COMPLETED
    assert parse(ok(sdk_run, "tenant_get"), pb.Task()).id == created.id
    assert [t.id for t in parse(ok(sdk_run, "tenant_list"), pb.ListTasksResponse()).tasks] == [created.id]
    assert err(sdk_run, "tenant_get_elsewhere")["type"] == "TaskNotFoundError"


def test_list_tasks_with_every_filter(sdk_run: dict[str, Any]) -> None:
    """status, pageSize, historyLength 0, statusTimestampAfter and
    includeArtifacts (query parameters on REST, spec §11.5)."""
    page = parse(ok(sdk_run, "list_filtered"), pb.ListTasksResponse())
    assert page.total_size == 2 and page.page_size == 5
    assert {t.artifacts[0].parts[0].text for t in page.tasks} == {"page one", "page two"}
    assert all(len(t.history) == 0 for t in page.tasks)


def test_push_config_in_send_is_delivered(sdk_run: dict[str, Any], our_server: LiveServer) -> None:
    """A push config inside SendMessageConfiguration (as the SDK sends it) is
    registered for the new task and its updates reach the webhook as
    StreamResponse JSON with the config's token (spec §3.1.1, §4.3)."""
    task = parse(ok(sdk_run, "push_send")[0], pb.StreamResponse()).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert our_server.webhook is not None
    path = f"/{sdk_run['binding']['value']}/send"

    def completed(bodies: list[Any]) -> bool:
        states = [parse(b, pb.StreamResponse()) for b in bodies]
        return any(
            e.status_update.status.state == pb.TASK_STATE_COMPLETED
            or e.task.status.state == pb.TASK_STATE_COMPLETED
            for e in states
        )

    hits = our_server.webhook.wait_for(path, completed)
    for headers, body in hits:
        event = parse(body, pb.StreamResponse())
        kind = event.WhichOneof("payload")
        task_id = event.task.id if kind == "task" else getattr(event, kind).task_id
        assert task_id == task.id
        assert headers.get("X-A2A-Notification-Token") == "tok-send", headers


def test_push_config_crud(sdk_run: dict[str, Any]) -> None:
    """Create / get / list / delete through the SDK (spec §3.1.7-§3.1.10); the
    SDK accepts our Delete answer on every binding (digest §16 A10)."""
    crud = ok(sdk_run, "push_crud")
    created = parse(crud["created"], pb.TaskPushNotificationConfig())
    assert created.id and created.url.endswith("/crud") and created.token == "tok-crud"
    assert parse(crud["got"], pb.TaskPushNotificationConfig()) == created
    assert [c.id for c in parse(crud["listed"], pb.ListTaskPushNotificationConfigsResponse()).configs] == [
        created.id
    ]
    assert crud["deleted"] == "None"
    assert not parse(crud["after"], pb.ListTaskPushNotificationConfigsResponse()).configs


def test_subscribe_across_input_required(sdk_run: dict[str, Any]) -> None:
    """SubscribeToTask on an INPUT_REQUIRED task stays open until the task is
    terminal (design.md A2); the SDK's subscriber sees the answer complete it."""
    events = [parse(e, pb.StreamResponse()) for e in ok(sdk_run, "subscribe_input_required")]
    assert events[0].task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    texts = [
        p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts
    ]
    assert texts == ["the answer"]


@pytest.mark.parametrize("step", ["reply", "reply_stream"])
def test_direct_message_reply(sdk_run: dict[str, Any], step: str) -> None:
    """An agent may answer with one Message and no task (spec §3.1.1): the
    blocking answer and the stream both hold exactly that Message."""
    (event,) = [parse(e, pb.StreamResponse()) for e in ok(sdk_run, step)]
    assert event.WhichOneof("payload") == "message"
    assert event.message.role == pb.ROLE_AGENT
    assert [p.text for p in event.message.parts] == ["a direct reply"]
    assert not event.message.task_id


def test_agent_failure_is_a_failed_task(sdk_run: dict[str, Any]) -> None:
    """An agent that raises after WORKING: the blocking SendMessage returns the
    task FAILED (spec §3.2.2: terminal ⇒ the latest Task), with a message that
    does not leak the exception text; the stream ends with the FAILED status."""
    task = parse(ok(sdk_run, "boom")[0], pb.StreamResponse()).task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert "the agent broke" not in task.status.message.parts[0].text
    events = [parse(e, pb.StreamResponse()) for e in ok(sdk_run, "boom_stream")]
    assert events[0].WhichOneof("payload") == "task"
    assert events[-1].status_update.status.state == pb.TASK_STATE_FAILED


def test_error_context_mismatch(sdk_run: dict[str, Any]) -> None:
    """contextId ≠ the task's ⇒ InvalidParams (spec §3.4.3, digest §16 A17)."""
    assert err(sdk_run, "context_mismatch")["type"] == "InvalidParamsError"


def test_error_message_to_unknown_task(sdk_run: dict[str, Any]) -> None:
    """A taskId the server never issued ⇒ TaskNotFound (spec §3.4.2)."""
    assert err(sdk_run, "message_unknown_task")["type"] == "TaskNotFoundError"
