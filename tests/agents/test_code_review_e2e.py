"""The code-review agent served by a real A2AServer, driven over gRPC with the generated stub."""

from __future__ import annotations

import grpc
from google.protobuf import json_format

from a2a_grpc.agents import load_agent
from a2a_grpc.agents._code_review import ARTIFACT_NAME
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import new_id, pb, pb_grpc
from tests.agents.helpers import diff_text, new_line_of

VERSION_MD = (("a2a-version", "1.0"),)


async def test_sql_injection_diff_reviewed_over_grpc() -> None:
    diff = diff_text("sql_injection.diff")
    line = new_line_of(diff, "app/users.py", 'query = f"SELECT * FROM users WHERE id = {user_id}"')
    server = A2AServer(
        load_agent("code-review"), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=None)
    )
    await server.start()
    assert server.card.name == "Code Review Agent"
    assert server.card.supported_interfaces  # filled in by the server
    assert [s.id for s in server.card.skills] == ["review-diff"]
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            stub = pb_grpc.A2AServiceStub(channel)
            request = pb.SendMessageRequest(
                message=pb.Message(
                    message_id=new_id(),
                    role=pb.ROLE_USER,
                    parts=[
                        pb.Part(text="Please review this change."),
                        pb.Part(raw=diff.encode(), filename="sql_injection.diff", media_type="text/x-diff"),
                    ],
                )
            )
            events = [ev async for ev in stub.SendStreamingMessage(request, metadata=VERSION_MD)]
            kinds = [ev.WhichOneof("payload") for ev in events]
            assert kinds[0] == "task"
            assert "artifact_update" in kinds
            assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
            task_id = events[0].task.id

            task = await stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=VERSION_MD)
    finally:
        await server.stop(0.5)

    assert task.status.state == pb.TASK_STATE_COMPLETED
    (artifact,) = task.artifacts
    assert artifact.name == ARTIFACT_NAME
    data = next(
        json_format.MessageToDict(p.data) for p in artifact.parts if p.WhichOneof("content") == "data"
    )
    assert [(f["file"], f["rule"], f["line"], f["severity"]) for f in data["findings"]] == [
        ("app/users.py", "S608", line, "high")
    ]
    text = next(p.text for p in artifact.parts if p.WhichOneof("content") == "text")
    assert f"app/users.py:{line} S608" in text
