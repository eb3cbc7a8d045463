"""The client commands of ``a2a-grpc`` (click's CliRunner) against a real
A2AServer: output, --json, exit codes and error reasons, never a traceback."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from a2a_grpc.agents import DataView
from a2a_grpc.agents._views import OUTLINE, REVIEW_FINDINGS, outline_text
from a2a_grpc.cli import main
from a2a_grpc.cli._client_cmds import Renderer
from a2a_grpc.core._executor import data_part
from a2a_grpc.server import A2AServer
from a2a_grpc.types import pb
from tests.client.conftest import BINDING_NAMES, base_url
from tests.ports import free_port


async def cli(*args: str) -> Result:
    """Runs the command in a worker thread: the server keeps serving on the loop."""
    result = await asyncio.to_thread(CliRunner().invoke, main, list(args))
    assert "Traceback" not in result.output
    return result


async def test_card(server: A2AServer) -> None:
    result = await cli("card", base_url(server))
    assert result.exit_code == 0, result.output
    assert "Script Agent" in result.stdout
    for binding in ("GRPC", "JSONRPC", "HTTP+JSON"):
        assert binding in result.stdout
    as_json = json.loads((await cli("card", base_url(server), "--json")).stdout)
    assert as_json["name"] == "Script Agent"
    assert as_json["supportedInterfaces"][0]["protocolVersion"] == "1.0"


@pytest.mark.parametrize("binding", BINDING_NAMES)
async def test_send_text(server: A2AServer, binding: str) -> None:
    result = await cli("send", base_url(server), "echo hello there", "--binding", binding)
    assert result.exit_code == 0, result.output
    assert "COMPLETED" in result.stdout and "hello there" in result.stdout
    data = json.loads((await cli("send", base_url(server), "echo x", "--binding", binding, "--json")).stdout)
    assert data["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert data["task"]["artifacts"][0]["parts"][0]["text"] == "x"


async def test_send_stream_renders_status_and_findings(server: A2AServer) -> None:
    result = await cli("send", base_url(server), "review", "--stream")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "WORKING: reviewing app/db.py" in out
    assert "review-findings" in out
    for cell in ("app/db.py", "12", "S608", "high", "SQL injection"):
        assert cell in out
    assert "1 finding in 1 file" in out
    assert "COMPLETED" in out


async def test_send_stream_json_lines(server: A2AServer) -> None:
    result = await cli("send", base_url(server), "review", "--stream", "--json", "--binding", "rest")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_send_file_and_data(server: A2AServer, tmp_path: Path) -> None:
    diff = tmp_path / "change.diff"
    diff.write_text("--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+x = 1\n")
    args = ("send", base_url(server), "echo files", "--file", str(diff), "--data", '{"language": "python"}')
    data = json.loads((await cli(*args, "--json")).stdout)
    parts = data["task"]["artifacts"][0]["parts"]
    assert parts[1]["mediaType"] == "text/x-diff" and parts[1]["filename"] == "change.diff"
    assert parts[2]["data"] == {"language": "python"}
    shown = (await cli(*args)).stdout
    assert "[file change.diff, text/x-diff, " in shown and '"language": "python"' in shown


async def test_multi_turn_with_task_option(server: A2AServer) -> None:
    first = json.loads((await cli("send", base_url(server), "ask", "--json")).stdout)
    task_id = first["task"]["id"]
    assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    shown = await cli("send", base_url(server), "ask")
    assert "INPUT_REQUIRED" in shown.stdout and "which file?" in shown.stdout and "--task" in shown.stdout
    result = await cli("send", base_url(server), "app/db.py", "--task", task_id)
    assert result.exit_code == 0 and "got: app/db.py" in result.stdout


async def test_usage_errors_exit_2(server: A2AServer, tmp_path: Path) -> None:
    assert (await cli("send", base_url(server))).exit_code == 2
    bad = await cli("send", base_url(server), "x", "--data", "{not json")
    assert bad.exit_code == 2 and "not JSON" in bad.output
    missing = await cli("send", base_url(server), "x", "--file", str(tmp_path / "nope.diff"))
    assert missing.exit_code == 2 and "cannot read" in missing.output
    assert (await cli("send", base_url(server), "x", "--binding", "soap")).exit_code == 2


async def test_failed_task_exits_3(server: A2AServer) -> None:
    result = await cli("send", base_url(server), "fail")
    assert result.exit_code == 3
    assert "FAILED" in result.stdout and "could not parse the diff" in result.stdout
    streamed = await cli("send", base_url(server), "fail", "--stream", "--json")
    assert streamed.exit_code == 3
    assert (
        json.loads(streamed.stdout.splitlines()[-1])["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    )


@pytest.mark.parametrize("binding", BINDING_NAMES)
async def test_a2a_errors_print_the_reason_and_exit_1(server: A2AServer, binding: str) -> None:
    result = await cli("task", "get", base_url(server), "missing", "--binding", binding)
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: TASK_NOT_FOUND: task missing not found"
    assert result.stdout == ""
    result = await cli("send", base_url(server), "hi", "--task", "missing", "--stream", "--binding", binding)
    assert result.exit_code == 1 and result.stderr.startswith("error: TASK_NOT_FOUND:")


async def test_field_violations_are_listed(server: A2AServer) -> None:
    result = await cli("task", "get", base_url(server), "x", "--history", "-1")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: INVALID_PARAMS:")
    assert "history" in result.stderr.lower()


async def test_unreachable_agent() -> None:
    result = await cli("card", f"http://127.0.0.1:{free_port()}")
    assert result.exit_code == 1 and result.stderr.startswith("error: UNAVAILABLE:")


async def test_task_list_cancel_subscribe(server: A2AServer) -> None:
    url = base_url(server)
    started = json.loads(
        (await cli("send", url, "slow 30", "--no-wait", "--json", "--context", "c-cli")).stdout
    )
    task_id = started["task"]["id"]
    assert (await cli("task", "list", url, "--context", "none")).stdout == "no tasks\n"
    listed = json.loads((await cli("task", "list", url, "--context", "c-cli", "--json")).stdout)
    assert [t["id"] for t in listed["tasks"]] == [task_id]
    table = await cli("task", "list", url, "--status", "working")
    assert task_id in table.stdout and "WORKING" in table.stdout
    follower = asyncio.create_task(cli("task", "subscribe", url, task_id, "--binding", "grpc"))
    await asyncio.sleep(0.5)
    canceled = await cli("task", "cancel", url, task_id)
    assert canceled.exit_code == 0 and "CANCELED" in canceled.stdout
    followed = await asyncio.wait_for(follower, 15)
    assert followed.exit_code == 0, followed.output
    assert "CANCELED" in followed.stdout
    got = json.loads((await cli("task", "get", url, task_id, "--json")).stdout)
    assert got["status"]["state"] == "TASK_STATE_CANCELED"
    again = await cli("task", "cancel", url, task_id, "--binding", "jsonrpc")
    assert again.exit_code == 0


async def test_push_commands(push_server: A2AServer) -> None:
    url = base_url(push_server)
    task_id = json.loads((await cli("send", url, "ask", "--json")).stdout)["task"]["id"]
    hook = f"http://127.0.0.1:{free_port()}/hook"
    made = await cli(
        "push", "set", url, task_id, hook, "--notification-token", "t0k", "--auth-scheme", "Bearer",
        "--auth-credentials", "s3cret", "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    config = json.loads(made.stdout)
    assert config["url"] == hook and config["id"]
    shown = await cli("push", "get", url, task_id, config["id"])
    assert hook in shown.stdout and "s3cret" not in shown.stdout
    listed = json.loads((await cli("push", "list", url, task_id, "--json", "--binding", "rest")).stdout)
    assert [c["id"] for c in listed["configs"]] == [config["id"]]
    deleted = await cli("push", "delete", url, task_id, config["id"], "--binding", "grpc")
    assert deleted.exit_code == 0 and "deleted" in deleted.stdout
    gone = await cli("push", "get", url, task_id, config["id"])
    assert gone.exit_code == 1 and gone.stderr.startswith("error: TASK_NOT_FOUND:")
    refused = await cli("push", "set", url, task_id, "ftp://127.0.0.1/x")
    assert refused.exit_code == 1 and refused.stderr.startswith("error: INVALID_PARAMS:")
    assert "url" in refused.stderr


async def test_push_not_supported(server: A2AServer) -> None:
    result = await cli("push", "list", base_url(server), "t")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: PUSH_NOTIFICATION_NOT_SUPPORTED:")


async def test_extended_card(push_server: A2AServer, server: A2AServer) -> None:
    ok = await cli("card", base_url(push_server), "--extended", "--json")
    assert json.loads(ok.stdout)["name"] == "Script Agent (extended)"
    missing = await cli("card", base_url(server), "--extended")
    assert missing.exit_code == 1 and missing.stderr.startswith("error: UNSUPPORTED_OPERATION:")


async def test_review_says_each_thing_once(server: A2AServer) -> None:
    """The summary is in the data part and in the text part (its plain-text form): shown once, with the
    findings as a table that carries the recommendation; ``--json`` still has every part."""
    url = base_url(server)
    for args in (("review",), ("review", "--stream")):
        out = (await cli("send", url, *args)).stdout
        assert out.count("1 finding in 1 file") == 1, out
        assert out.count("SQL injection") == 1, out
        assert "recommendation" in out and "Use parameterized queries." in out
        assert '"summary"' not in out and "skipped" not in out
    data = json.loads((await cli("send", url, "review", "--json")).stdout)
    parts = data["task"]["artifacts"][0]["parts"]
    assert parts[0]["data"]["summary"] == "1 finding in 1 file" and parts[1]["text"] == "1 finding in 1 file"


async def test_reply_hint_names_the_url_used(server: A2AServer) -> None:
    url = base_url(server)
    task_id = json.loads((await cli("send", url, "ask", "--json")).stdout)["task"]["id"]
    for args in (("send", url, "ask"), ("send", url, "ask", "--stream"), ("task", "get", url, task_id)):
        out = (await cli(*args)).stdout
        assert f"reply with: a2a-grpc send {url} TEXT --task " in out, out
        assert "send URL" not in out


async def test_task_get_does_not_repeat_the_status_message(server: A2AServer) -> None:
    url = base_url(server)
    task_id = json.loads((await cli("send", url, "ask", "--json")).stdout)["task"]["id"]
    got = json.loads((await cli("task", "get", url, task_id, "--json")).stdout)
    assert [m["role"] for m in got["history"]] == [
        "ROLE_USER",
        "ROLE_AGENT",
    ]  # the question is in history too
    out = (await cli("task", "get", url, task_id)).stdout
    assert out.count("which file?") == 1, out
    assert "user:" in out and "  ask" in out


async def test_error_detail_that_repeats_the_message_is_not_printed_twice(push_server: A2AServer) -> None:
    url = base_url(push_server)
    task_id = json.loads((await cli("send", url, "ask", "--json")).stdout)["task"]["id"]
    refused = await cli("push", "set", url, task_id, "ftp://127.0.0.1/x")
    assert refused.exit_code == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: INVALID_PARAMS: url:"), refused.stderr


async def test_json_is_raw_utf8_with_whole_numbers(server: A2AServer) -> None:
    result = await cli(
        "send", base_url(server), "echo héllo ✓", "--data", '{"line": 18, "ratio": 0.5}', "--json"
    )
    assert "héllo ✓" in result.stdout and "\\u" not in result.stdout
    parts = json.loads(result.stdout)["task"]["artifacts"][0]["parts"]
    assert parts[0]["text"] == "héllo ✓"
    assert '"line": 18,' in result.stdout and parts[1]["data"] == {"line": 18, "ratio": 0.5}
    streamed = await cli("send", base_url(server), "echo héllo ✓", "--stream", "--json")
    assert all(json.loads(line) for line in streamed.stdout.splitlines()) and "héllo ✓" in streamed.stdout


async def test_push_tables_name_the_task_once(push_server: A2AServer) -> None:
    url = base_url(push_server)
    task_id = json.loads((await cli("send", url, "ask", "--json")).stdout)["task"]["id"]
    hook = f"http://127.0.0.1:{free_port()}/hook"
    made = await cli("push", "set", url, task_id, hook, "--notification-token", "t0k")
    assert made.exit_code == 0, made.output
    assert f"push config created for task {task_id}" in made.stdout
    assert made.stdout.count(task_id) == 1 and hook in made.stdout and "t0k" not in made.stdout
    listed = await cli("push", "list", url, task_id)
    assert f"1 push config for task {task_id}" in listed.stdout and listed.stdout.count(task_id) == 1


def _render(*parts: pb.Part, shown: str = "") -> str:
    """Rendering alone (no transport): one artifact with ``parts``, ``shown`` already said."""
    buf = io.StringIO()
    renderer = Renderer(Console(file=buf, width=120), "http://agent")
    renderer.shown.add(shown)
    renderer.artifact(pb.Artifact(artifact_id="a", name="result", parts=list(parts)))
    return buf.getvalue()


def test_findings_data_shows_only_what_adds_something() -> None:
    """The code-review agent's view (chosen by its media type): a skipped list the summary already
    names is left out, one it does not name is listed, and keys the view does not know are shown
    as JSON."""
    skipped = [{"file": "README.md", "reason": "not a Python file"}]
    value = {"findings": [], "summary": "0 findings", "skipped": skipped, "tool": "ruff"}
    part = data_part(value, media_type=REVIEW_FINDINGS)
    named = _render(part, shown="0 findings. Skipped 1: README.md (not a Python file).")
    assert "README.md" not in named and '"tool": "ruff"' in named and "0 findings" in named
    unnamed = _render(part, shown="something else")
    assert unnamed.count("0 findings") == 2  # the table's title and the summary line
    assert "skipped: README.md (not a Python file)" in unnamed


def test_a_data_part_is_shown_by_the_view_of_its_media_type() -> None:
    """The CLI does not guess from the shape: findings sent as plain application/json are JSON; with
    the agent's media type (any case, with parameters) they are a table, and the text part that
    repeats them is left out."""
    value = {"findings": [{"file": "a.py", "line": 3, "rule": "S1", "severity": "high", "issue": "bad"}]}
    value["summary"] = "1 finding"
    text = pb.Part(text="1 finding\na.py:3 S1 bad")
    plain = _render(data_part(value), text)
    assert "┏" not in plain and '"findings"' in plain and "a.py:3 S1 bad" in plain
    typed = _render(data_part(value, media_type=REVIEW_FINDINGS.upper() + "; charset=utf-8"), text)
    assert "┏" in typed and '"findings"' not in typed and "a.py:3" not in typed
    assert typed.count("1 finding") == 2  # the table's title and the summary, not the text part


def test_the_generic_view_tables_a_list_of_flat_objects() -> None:
    rows = [{"name": "a", "size": 3, "ok": True}, {"name": "b", "note": None, "size": 4.5}]
    table = _render(data_part(rows))
    assert table.splitlines()[1].strip() == "2 items" and "┏" in table
    # Columns as first seen (a Struct keeps no order: each object's members come sorted).
    assert table.index("name") < table.index("ok") < table.index("size") < table.index("note")
    assert "true" in table and "4.5" in table
    for other in ([{"name": "a", "tags": ["x"]}], [], [{}], [1, 2], {"name": "a"}):
        shown = _render(data_part(other))
        assert "┏" not in shown and shown.strip(), other


def test_an_agent_package_adds_a_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view in DataView.VIEWS is used for its media type; one that does not know the value leaves
    it to the generic view."""

    def report(value: object) -> DataView | None:
        if not isinstance(value, dict) or "score" not in value:
            return None
        cell = DataView.Cell(str(value["score"]), "warning")
        return DataView((DataView.Table("report", ("score",), ((cell,),)), DataView.Text("scored")))

    monkeypatch.setitem(DataView.VIEWS, "application/vnd.example.report+json", report)
    shown = _render(data_part({"score": 7}, media_type="application/vnd.example.report+json"))
    assert shown.splitlines()[1].strip() == "report" and "7" in shown and "scored" in shown
    other = _render(data_part({"grade": 7}, media_type="application/vnd.example.report+json"))
    assert '"grade": 7' in other


def test_the_outline_is_shown_once() -> None:
    from a2a_grpc.agents._explain import outline_source

    modules = [outline_source("def f(x):\n    return x\n", "m.py")]
    shown = _render(data_part({"modules": modules}, media_type=OUTLINE), pb.Part(text=outline_text(modules)))
    assert shown.count("def f(x)  [line 1, complexity 1]") == 1 and '"modules"' not in shown


def test_the_cli_knows_no_agent_vocabulary() -> None:
    """What the built-in agents emit is rendered by their own views (a2a_grpc.agents): the CLI's
    modules do not name it."""
    cli_dir = Path(__file__).resolve().parents[2] / "a2a_grpc" / "cli"
    words = ("finding", "severity", "recommendation", "skipped", "outline")
    found = {
        (path.name, word)
        for path in cli_dir.glob("*.py")
        for word in words
        if word in path.read_text(encoding="utf-8").lower()
    }
    assert found == set()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"name": "x"', "invalid JSON"),
        ('{"name": "x", "capabilities": "streaming"}', "capabilities: must be a JSON object"),
    ],
)
async def test_serve_names_what_is_wrong_with_the_extended_card(tmp_path: Path, text: str, said: str) -> None:
    card = tmp_path / "extended.json"
    card.write_text(text)
    result = await cli(
        "serve", "--agent", "echo", "--store", "memory", "--extended-card", str(card), "--grpc-port", "0"
    )
    assert result.exit_code == 1 and f"--extended-card {card}: {said}" in result.output, result.output
