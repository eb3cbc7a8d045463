"""Lifecycle, multi-turn, cancel, list/paginate and tenants — on every binding."""

from __future__ import annotations

import asyncio

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import new_id, pb
from tests.conformance.scenario import send, start_holding

pytestmark = pytest.mark.asyncio(loop_scope="package")


async def test_full_lifecycle(binding, transcript):
    t = transcript
    resp = t.add("send", await binding.call("SendMessage", send("echo hello world")))
    task = resp.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["echo hello world"]
    assert [m.role for m in task.history] == [pb.ROLE_USER]
    assert task.history[0].task_id == task.id and task.history[0].context_id == task.context_id

    got = t.add("get", await binding.call("GetTask", pb.GetTaskRequest(id=task.id)))
    assert got == task
    none = t.add("get h=0", await binding.call("GetTask", pb.GetTaskRequest(id=task.id, history_length=0)))
    assert len(none.history) == 0 and len(none.artifacts) == 1

    page = t.add("list", await binding.call("ListTasks", pb.ListTasksRequest(context_id=task.context_id)))
    assert [x.id for x in page.tasks] == [task.id]
    assert page.total_size == 1 and page.next_page_token == ""

    with pytest.raises(A2AError) as exc:
        await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id))
    t.error("cancel completed", exc.value)
    assert exc.value.code is ErrorCode.TASK_NOT_CANCELABLE

    with pytest.raises(A2AError) as exc:
        await binding.call("SendMessage", send("echo again", task_id=task.id))
    assert t.error("message to terminal task", exc.value).code is ErrorCode.UNSUPPORTED_OPERATION
    t.check_parity()


async def test_multi_turn_through_input_required(binding, transcript):
    t = transcript
    first = t.add("ask", await binding.call("SendMessage", send("ask"))).task
    assert first.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert first.status.message.parts[0].text == "what else?"
    assert first.status.message.role == pb.ROLE_AGENT

    with pytest.raises(A2AError) as exc:
        await binding.call("SendMessage", send("blue", task_id=first.id, context_id="another-context"))
    assert t.error("context mismatch", exc.value).code is ErrorCode.INVALID_PARAMS

    second = t.add("answer", await binding.call("SendMessage", send("blue", task_id=first.id))).task
    assert second.id == first.id and second.context_id == first.context_id
    assert second.status.state == pb.TASK_STATE_COMPLETED
    assert [p.text for a in second.artifacts for p in a.parts] == ["got: blue"]
    texts = [(m.role, m.parts[0].text) for m in second.history]
    assert texts == [(pb.ROLE_USER, "ask"), (pb.ROLE_AGENT, "what else?"), (pb.ROLE_USER, "blue")]
    t.check_parity()


async def test_direct_message_reply(binding, transcript):
    resp = transcript.add("reply", await binding.call("SendMessage", send("reply")))
    assert resp.WhichOneof("payload") == "message"
    assert resp.message.role == pb.ROLE_AGENT and resp.message.parts[0].text == "hi there"
    assert resp.message.task_id == ""
    transcript.check_parity()


async def test_cancel(binding, transcript):
    t = transcript
    task = await start_holding(binding)
    t.add("working", task)
    canceled = t.add("cancel", await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id)))
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    again = t.add("cancel again", await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id)))
    assert again.status.state == pb.TASK_STATE_CANCELED
    got = t.add("get", await binding.call("GetTask", pb.GetTaskRequest(id=task.id)))
    assert got.status.state == pb.TASK_STATE_CANCELED
    with pytest.raises(A2AError) as exc:
        await binding.call("CancelTask", pb.CancelTaskRequest(id="no-such-task"))
    assert t.error("cancel unknown", exc.value).code is ErrorCode.TASK_NOT_FOUND
    t.check_parity()


async def test_list_and_paginate(binding, transcript):
    t = transcript
    context = f"ctx-{new_id()}"
    created = []
    for i in range(3):
        resp = await binding.call("SendMessage", send(f"echo n{i}", context_id=context))
        created.append(t.add(f"send {i}", resp).task)
        await asyncio.sleep(0.005)  # distinct status timestamps (ms): a stable order
    newest_first = [x.id for x in reversed(created)]

    def token_free(page: pb.ListTasksResponse) -> pb.ListTasksResponse:
        copy = pb.ListTasksResponse()
        copy.CopyFrom(page)
        copy.next_page_token = "<token>" if page.next_page_token else ""
        return copy

    first = await binding.call("ListTasks", pb.ListTasksRequest(context_id=context, page_size=2))
    t.add("page 1", token_free(first))
    assert [x.id for x in first.tasks] == newest_first[:2]
    assert (first.page_size, first.total_size) == (2, 3) and first.next_page_token
    assert all(len(x.artifacts) == 0 for x in first.tasks)  # includeArtifacts defaults to false

    second = await binding.call(
        "ListTasks",
        pb.ListTasksRequest(
            context_id=context, page_size=2, page_token=first.next_page_token, include_artifacts=True
        ),
    )
    t.add("page 2", token_free(second))
    assert [x.id for x in second.tasks] == newest_first[2:]
    assert second.next_page_token == "" and second.total_size == 3
    assert [p.text for p in second.tasks[0].artifacts[0].parts] == ["echo n0"]

    filtered = await binding.call(
        "ListTasks",
        pb.ListTasksRequest(context_id=context, status=pb.TASK_STATE_WORKING, history_length=0),
    )
    assert t.add("working only", filtered).tasks == [] and filtered.total_size == 0
    trimmed = await binding.call("ListTasks", pb.ListTasksRequest(context_id=context, history_length=0))
    assert all(len(x.history) == 0 for x in t.add("history 0", trimmed).tasks)

    with pytest.raises(A2AError) as exc:
        await binding.call("ListTasks", pb.ListTasksRequest(context_id=context, page_token="garbage"))
    assert t.error("bad token", exc.value).code is ErrorCode.INVALID_PARAMS
    with pytest.raises(A2AError) as exc:
        # A token is bound to its query.
        await binding.call("ListTasks", pb.ListTasksRequest(page_token=first.next_page_token))
    assert t.error("token of another query", exc.value).code is ErrorCode.INVALID_PARAMS
    t.check_parity()


async def test_tenant_scoping(binding, transcript):
    t = transcript
    tenant = "acme"
    task = t.add("send", await binding.call("SendMessage", send("echo scoped", tenant=tenant))).task
    got = t.add("get in tenant", await binding.call("GetTask", pb.GetTaskRequest(id=task.id, tenant=tenant)))
    assert got.id == task.id
    with pytest.raises(A2AError) as exc:
        await binding.call("GetTask", pb.GetTaskRequest(id=task.id))
    assert t.error("get outside tenant", exc.value).code is ErrorCode.TASK_NOT_FOUND
    with pytest.raises(A2AError) as exc:
        await binding.call("GetTask", pb.GetTaskRequest(id=task.id, tenant="other"))
    assert t.error("get in other tenant", exc.value).code is ErrorCode.TASK_NOT_FOUND
    page = await binding.call("ListTasks", pb.ListTasksRequest(tenant=tenant, context_id=task.context_id))
    assert [x.id for x in t.add("list in tenant", page).tasks] == [task.id]
    t.check_parity()
