"""The official Python SDK client drives the built-in code-review agent (the
default of ``a2a-grpc serve``) over gRPC, JSON-RPC and REST: the shipped
``examples/diffs/sql_injection.diff`` yields S608 at new line 18 whether the
diff comes as text, as a data part with a focus (streamed), as a
``text/x-diff`` file part, or as the answer to the agent's question
(issue 4 items 1 and 5)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from google.protobuf import json_format

from a2a_grpc.types import pb
from tests.interop.conftest import BINDINGS, HERE, ROOT, LiveServer, run_json_lines
from tests.interop.test_sdk_client import ok, parse

pytestmark = pytest.mark.interop

DIFF = ROOT / "examples" / "diffs" / "sql_injection.diff"


@pytest.fixture(scope="module", params=BINDINGS)
def review_run(request: pytest.FixtureRequest, review_server: LiveServer) -> dict[str, Any]:
    argv = [sys.executable, str(HERE / "sdk_client.py"), review_server.base_url, request.param]
    return run_json_lines([*argv, "--review", str(DIFF)], timeout=120)


def findings(task: Any) -> list[dict[str, Any]]:
    (artifact,) = [a for a in task.artifacts if a.name == "review-findings"]
    data = [json_format.MessageToDict(p.data) for p in artifact.parts if p.HasField("data")]
    return [f for d in data for f in d.get("findings", [])]


def assert_sql_injection_found(task: Any) -> None:
    assert task.status.state == pb.TASK_STATE_COMPLETED, task.status
    s608 = [f for f in findings(task) if f["rule"] == "S608"]
    assert len(s608) == 1, findings(task)
    assert (s608[0]["file"], int(s608[0]["line"]), s608[0]["severity"]) == ("app/users.py", 18, "high")


def test_card_offers_review_skill(review_run: dict[str, Any]) -> None:
    card = parse(ok(review_run, "review_card"), pb.AgentCard())
    assert "review-diff" in [s.id for s in card.skills]
    assert "text/x-diff" in card.default_input_modes


def test_review_text_part(review_run: dict[str, Any]) -> None:
    assert_sql_injection_found(parse(ok(review_run, "review_text")[0], pb.StreamResponse()).task)


def test_review_data_part_streamed(review_run: dict[str, Any]) -> None:
    events = [parse(e, pb.StreamResponse()) for e in ok(review_run, "review_data_stream")]
    working = [
        e.status_update.status.message.parts[0].text
        for e in events
        if e.HasField("status_update") and e.status_update.status.state == pb.TASK_STATE_WORKING
    ]
    assert any("app/users.py" in w for w in working), working  # a working status per file
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    task = pb.Task(status=events[-1].status_update.status)
    for e in events:
        if e.HasField("artifact_update"):
            task.artifacts.append(e.artifact_update.artifact)
    assert_sql_injection_found(task)


def test_review_file_part(review_run: dict[str, Any]) -> None:
    assert_sql_injection_found(parse(ok(review_run, "review_file")[0], pb.StreamResponse()).task)


def test_review_after_input_required(review_run: dict[str, Any]) -> None:
    asked = parse(ok(review_run, "review_ask")[0], pb.StreamResponse()).task
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert "diff" in asked.status.message.parts[0].text
    answered = parse(ok(review_run, "review_answer")[0], pb.StreamResponse()).task
    assert answered.id == asked.id
    assert_sql_injection_found(answered)
