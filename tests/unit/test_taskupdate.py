"""The pure task update (a2a_grpc.protocol._taskupdate): every merge and validation rule,
without a store, a loop or a socket."""

from __future__ import annotations

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol._taskupdate import (
    apply_event,
    check_event,
    direct_reply,
    open_task,
    received_at,
    status_event,
)
from a2a_grpc.types import pb

T, C = "task-1", "ctx-1"
NOW = Timestamp(seconds=1_800_000_000, nanos=5_000_000)
EARLIER = Timestamp(seconds=1_700_000_000)
LATER = Timestamp(seconds=1_900_000_000)


def user_message(text: str = "hi", message_id: str = "u1") -> pb.Message:
    return pb.Message(
        message_id=message_id, role=pb.ROLE_USER, task_id=T, context_id=C, parts=[pb.Part(text=text)]
    )


def status(state: int, text: str = "", ts: Timestamp | None = None) -> pb.TaskStatusUpdateEvent:
    st = pb.TaskStatus(state=state)  # type: ignore[arg-type]
    if text:
        st.message.parts.add(text=text)
    if ts is not None:
        st.timestamp.CopyFrom(ts)
    return pb.TaskStatusUpdateEvent(task_id=T, context_id=C, status=st)


def artifact(artifact_id: str, *texts: str, append: bool = False, **kw: object) -> pb.TaskArtifactUpdateEvent:
    art = pb.Artifact(artifact_id=artifact_id, parts=[pb.Part(text=t) for t in texts], **kw)  # type: ignore[arg-type]
    return pb.TaskArtifactUpdateEvent(task_id=T, context_id=C, artifact=art, append=append)


def working_task() -> pb.Task:
    return open_task(user_message(), None, status(pb.TASK_STATE_WORKING), now=NOW)


def invalid_agent_response(excinfo: pytest.ExceptionInfo[A2AError]) -> str:
    assert excinfo.value.code is ErrorCode.INVALID_AGENT_RESPONSE
    return excinfo.value.message


# --- the first event -------------------------------------------------------


def test_a_new_task_is_submitted_with_the_message_in_its_history() -> None:
    task = open_task(user_message(), None, status(pb.TASK_STATE_WORKING), now=NOW)
    assert (task.id, task.context_id) == (T, C)
    assert task.status.state == pb.TASK_STATE_SUBMITTED
    assert task.status.timestamp == NOW
    assert [m.message_id for m in task.history] == ["u1"]


def test_the_new_task_is_stamped_with_an_earlier_first_status() -> None:
    task = open_task(user_message(), None, status(pb.TASK_STATE_WORKING, ts=EARLIER), now=NOW)
    assert task.status.timestamp == EARLIER
    # A first status "from the future" does not move the stored one forward.
    assert (
        open_task(user_message(), None, status(pb.TASK_STATE_WORKING, ts=LATER), now=NOW).status.timestamp
        == NOW
    )


def test_received_at() -> None:
    assert received_at(status(pb.TASK_STATE_WORKING, ts=EARLIER), NOW) == EARLIER
    assert received_at(status(pb.TASK_STATE_WORKING, ts=LATER), NOW) == NOW
    assert received_at(status(pb.TASK_STATE_WORKING), NOW) == NOW
    assert received_at(artifact("a", "x"), NOW) == NOW


def test_a_first_task_event_fills_the_new_task() -> None:
    first = pb.Task(id=T, context_id=C, status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    first.artifacts.add(artifact_id="a").parts.add(text="x")
    first.history.append(user_message())  # the user's message again: not duplicated
    first.history.add(message_id="agent-1", role=pb.ROLE_AGENT).parts.add(text="thinking")
    first.metadata.update({"k": "v"})
    task = open_task(user_message(), None, first, now=NOW)
    assert task.status.state == pb.TASK_STATE_WORKING
    assert task.status.timestamp == NOW  # filled in
    assert [a.artifact_id for a in task.artifacts] == ["a"]
    assert [m.message_id for m in task.history] == ["u1", "agent-1"]
    assert dict(task.metadata) == {"k": "v"}


def test_a_first_task_event_without_a_state_keeps_submitted() -> None:
    task = open_task(user_message(), None, pb.Task(id=T), now=NOW)
    assert task.status.state == pb.TASK_STATE_SUBMITTED


def test_an_interrupted_task_becomes_working_with_the_message_appended() -> None:
    existing = working_task()
    existing, _ = apply_event(existing, status(pb.TASK_STATE_INPUT_REQUIRED, "which one?"), now=NOW)
    existing.metadata.update({"kept": True})
    task = open_task(user_message("this one", "u2"), existing, status(pb.TASK_STATE_WORKING), now=LATER)
    assert task.status.state == pb.TASK_STATE_WORKING
    assert not task.status.HasField("message")
    assert task.status.timestamp == LATER
    assert [m.message_id for m in task.history][-1] == "u2"
    assert len(task.history) == len(existing.history) + 1
    assert dict(task.metadata) == {"kept": True}
    assert existing.status.state == pb.TASK_STATE_INPUT_REQUIRED  # input untouched


def test_a_first_task_event_on_an_existing_task_sets_only_its_status() -> None:
    existing, _ = apply_event(working_task(), status(pb.TASK_STATE_INPUT_REQUIRED), now=NOW)
    first = pb.Task(status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED))
    first.artifacts.add(artifact_id="ignored").parts.add(text="x")
    first.metadata.update({"ignored": 1})
    task = open_task(user_message("ok", "u2"), existing, first, now=NOW)
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert not task.artifacts and not task.metadata


def test_a_terminal_existing_task_is_refused() -> None:
    existing, _ = apply_event(working_task(), status(pb.TASK_STATE_CANCELED), now=NOW)
    with pytest.raises(A2AError) as excinfo:
        open_task(user_message(), existing, status(pb.TASK_STATE_WORKING))
    assert excinfo.value.code is ErrorCode.UNSUPPORTED_OPERATION


# --- status updates ----------------------------------------------------------


def test_a_status_update_replaces_the_status_and_its_message_joins_the_history() -> None:
    before = working_task()
    task, out = apply_event(before, status(pb.TASK_STATE_INPUT_REQUIRED, "which one?"), now=NOW)
    assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert task.status.timestamp == NOW
    msg = task.history[-1]
    assert msg == task.status.message
    assert (msg.role, msg.task_id, msg.context_id) == (pb.ROLE_AGENT, T, C)
    assert msg.message_id  # generated
    assert out == pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(task_id=T, context_id=C, status=task.status)
    )
    assert len(before.history) == 1 and before.status.state == pb.TASK_STATE_SUBMITTED


def test_a_status_update_keeps_its_timestamp_and_fills_missing_ids() -> None:
    event = status(pb.TASK_STATE_WORKING, ts=EARLIER)
    event.task_id = event.context_id = ""
    event.metadata.update({"m": 1})
    task, out = apply_event(working_task(), event, now=NOW)
    assert task.status.timestamp == EARLIER
    assert (out.status_update.task_id, out.status_update.context_id) == (T, C)
    assert dict(out.status_update.metadata) == {"m": 1}


@pytest.mark.parametrize("state", [pb.TASK_STATE_UNSPECIFIED, 99])
def test_a_status_update_needs_a_valid_state(state: int) -> None:
    with pytest.raises(A2AError) as excinfo:
        apply_event(working_task(), status(state))
    assert "valid state" in invalid_agent_response(excinfo)


# --- artifacts ---------------------------------------------------------------


def test_artifacts_are_added_replaced_and_appended() -> None:
    task, out = apply_event(working_task(), artifact("a", "one", name="first"))
    assert out.artifact_update.artifact.artifact_id == "a" and out.artifact_update.task_id == T
    task, _ = apply_event(task, artifact("b", "other"))
    task, _ = apply_event(task, artifact("a", "uno"))  # no append: replaced
    assert [(a.artifact_id, [p.text for p in a.parts], a.name) for a in task.artifacts] == [
        ("a", ["uno"], ""),
        ("b", ["other"], ""),
    ]
    chunk = artifact("a", "dos", append=True, name="named", description="d", extensions=["x", "y"])
    chunk.artifact.metadata.update({"m": 2})
    chunk.last_chunk = True
    task, out = apply_event(task, chunk)
    a = task.artifacts[0]
    assert ([p.text for p in a.parts], a.name, a.description, list(a.extensions)) == (
        ["uno", "dos"],
        "named",
        "d",
        ["x", "y"],
    )
    assert dict(a.metadata) == {"m": 2}
    assert out.artifact_update.last_chunk and out.artifact_update.append
    again = artifact("a", "tres", append=True, extensions=["y", "z"])
    again.artifact.metadata.update({"n": 3})
    task, _ = apply_event(task, again)
    a = task.artifacts[0]
    assert (len(a.parts), a.name, list(a.extensions), dict(a.metadata)) == (
        3,
        "named",
        ["x", "y", "z"],
        {"m": 2, "n": 3},
    )


def test_append_on_an_unknown_artifact_creates_it() -> None:
    task, _ = apply_event(working_task(), artifact("new", "content", append=True))
    assert [(a.artifact_id, a.parts[0].text) for a in task.artifacts] == [("new", "content")]


def test_an_artifact_needs_an_id_and_parts() -> None:
    with pytest.raises(A2AError) as excinfo:
        apply_event(working_task(), artifact("", "x"))
    assert "artifactId" in invalid_agent_response(excinfo)
    with pytest.raises(A2AError) as excinfo:
        apply_event(working_task(), artifact("a"))
    assert "no parts" in invalid_agent_response(excinfo)


# --- Task snapshots ----------------------------------------------------------


def test_a_task_event_replaces_status_and_artifacts_and_metadata_when_given() -> None:
    before, _ = apply_event(working_task(), artifact("old", "x"))
    before.metadata.update({"other": "writer"})
    snap = pb.Task(status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED))
    snap.artifacts.add(artifact_id="new").parts.add(text="y")
    snap.history.add(message_id="ignored")
    task, out = apply_event(before, snap, now=NOW)
    assert task.status.state == pb.TASK_STATE_COMPLETED and task.status.timestamp == NOW
    assert [a.artifact_id for a in task.artifacts] == ["new"]
    assert list(task.history) == list(before.history)
    assert dict(task.metadata) == {"other": "writer"}  # no metadata in the event: kept
    assert out == pb.StreamResponse(task=task)
    snap.metadata.update({"agent": 1})
    task, _ = apply_event(before, snap, now=NOW)
    assert dict(task.metadata) == {"agent": 1}


def test_a_task_event_needs_a_state() -> None:
    with pytest.raises(A2AError) as excinfo:
        apply_event(working_task(), pb.Task(id=T))
    assert "status state" in invalid_agent_response(excinfo)


# --- invalid sequences -------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        status(pb.TASK_STATE_WORKING),
        artifact("a", "x"),
        pb.Task(status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)),
    ],
)
@pytest.mark.parametrize(
    "terminal",
    [pb.TASK_STATE_COMPLETED, pb.TASK_STATE_FAILED, pb.TASK_STATE_CANCELED, pb.TASK_STATE_REJECTED],
)
def test_terminal_is_final(event: object, terminal: int) -> None:
    task, _ = apply_event(working_task(), status(terminal))
    with pytest.raises(A2AError) as excinfo:
        apply_event(task, event)
    assert "terminal" in invalid_agent_response(excinfo)


def test_events_of_another_task_or_context_or_type_are_refused() -> None:
    task = working_task()
    other_task = status(pb.TASK_STATE_WORKING)
    other_task.task_id = "task-2"
    other_ctx = artifact("a", "x")
    other_ctx.context_id = "ctx-2"
    for event, text in [
        (other_task, "event for task task-2"),
        (other_ctx, "contextId ctx-2"),
        (pb.Task(id="task-2", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)), "event for task task-2"),
        ("text", "unexpected event type str"),
        (pb.Message(parts=[pb.Part(text="x")]), "only answer a new interaction"),
    ]:
        with pytest.raises(A2AError) as excinfo:
            apply_event(task, event)
        assert text in invalid_agent_response(excinfo)
    assert check_event(status(pb.TASK_STATE_WORKING), T, C) is not None


def test_a_direct_reply() -> None:
    reply = direct_reply(pb.Message(parts=[pb.Part(text="42")], role=pb.ROLE_USER), C, has_task=False)
    assert (reply.role, reply.context_id, reply.task_id, reply.parts[0].text) == (pb.ROLE_AGENT, C, "", "42")
    assert reply.message_id
    kept = direct_reply(
        pb.Message(message_id="r1", context_id=C, parts=[pb.Part(text="x")]), C, has_task=False
    )
    assert kept.message_id == "r1"


@pytest.mark.parametrize(
    ("reply", "has_task", "text"),
    [
        (pb.Message(parts=[pb.Part(text="x")]), True, "only answer a new interaction"),
        (pb.Message(task_id=T, parts=[pb.Part(text="x")]), False, "must not carry a task id"),
        (pb.Message(context_id="ctx-2", parts=[pb.Part(text="x")]), False, "contextId differs"),
        (pb.Message(), False, "no parts"),
    ],
)
def test_invalid_direct_replies(reply: pb.Message, has_task: bool, text: str) -> None:
    with pytest.raises(A2AError) as excinfo:
        direct_reply(reply, C, has_task=has_task)
    assert text in invalid_agent_response(excinfo)


def test_status_event() -> None:
    task = working_task()
    assert status_event(task).status_update == pb.TaskStatusUpdateEvent(
        task_id=T, context_id=C, status=task.status
    )
