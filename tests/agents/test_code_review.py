"""The code-review agent driven directly through an ExecutorContext, on the real diffs of
examples/diffs (issue 4 item 1)."""

from __future__ import annotations

import pytest
from aiohttp import web

from a2a_grpc.agents._code_review import CHUNK_FINDINGS, CodeReviewAgent
from a2a_grpc.agents._views import REVIEW_FINDINGS
from a2a_grpc.core._executor import data_part, file_part, text_part
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import new_id, now_timestamp, pb
from tests.agents.helpers import (
    artifacts,
    diff_text,
    make_ctx,
    new_line_of,
    review_data,
    run,
    status_text,
    statuses,
    user_message,
)


@pytest.fixture
def agent() -> CodeReviewAgent:
    return CodeReviewAgent()


def _rules(data: dict) -> set[str]:
    return {f["rule"] for f in data["findings"]}


async def test_card_declares_the_review_skill(agent: CodeReviewAgent) -> None:
    card = agent.card
    assert card.name == "Code Review Agent"
    assert card.description and card.version
    assert card.capabilities.streaming
    assert not card.capabilities.HasField("push_notifications")
    assert not card.supported_interfaces
    assert set(card.default_input_modes) == {"text/plain", "text/x-diff", "text/x-patch", "application/json"}
    assert list(card.default_output_modes) == ["application/json", "text/plain"]
    (skill,) = card.skills
    assert skill.id == "review-diff"
    assert skill.description and skill.tags and skill.examples
    assert "text/x-diff" in skill.input_modes and "application/json" in skill.output_modes


async def test_sql_injection_reported_at_the_new_line_of_the_f_string(agent: CodeReviewAgent) -> None:
    diff = diff_text("sql_injection.diff")
    line = new_line_of(diff, "app/users.py", 'query = f"SELECT * FROM users WHERE id = {user_id}"')
    ctx = make_ctx(user_message(text_part(diff)))
    events = await run(agent, ctx)

    states = [s.status.state for s in statuses(events)]
    assert states == [pb.TASK_STATE_WORKING, pb.TASK_STATE_COMPLETED]
    assert status_text(statuses(events)[0]) == "Reviewing app/users.py (1/1)"
    (update,) = artifacts(events)
    assert update.last_chunk and not update.append
    assert isinstance(events[-1], pb.TaskStatusUpdateEvent)  # the artifact comes before the end

    data = review_data(events)
    s608 = [f for f in data["findings"] if f["rule"] == "S608"]
    assert len(s608) == 1
    finding = s608[0]
    assert finding["file"] == "app/users.py"
    assert finding["line"] == line == 18
    assert finding["severity"] == "high"
    assert "SQL injection" in finding["issue"]
    assert "parameterized" in finding["recommendation"]
    assert finding["url"].startswith("https://docs.astral.sh/ruff/rules/")
    assert data["skipped"] == []
    text = [p.text for p in update.artifact.parts if p.WhichOneof("content") == "text"]
    assert "app/users.py:18 S608" in text[0]
    assert data["summary"] in text[0]


async def test_clean_diff_has_no_findings(agent: CodeReviewAgent) -> None:
    events = await run(agent, make_ctx(user_message(text_part(diff_text("clean.diff")))))
    data = review_data(events)
    assert data["findings"] == []
    assert "no findings" in data["summary"]
    assert statuses(events)[-1].status.state == pb.TASK_STATE_COMPLETED


async def test_multi_file_diff_reviews_python_files_and_skips_the_readme(agent: CodeReviewAgent) -> None:
    diff = diff_text("multi_file.diff")
    events = await run(agent, make_ctx(user_message(file_part(diff.encode(), media_type="text/x-diff"))))
    working = [status_text(s) for s in statuses(events) if s.status.state == pb.TASK_STATE_WORKING]
    assert working == ["Reviewing app/config.py (1/2)", "Reviewing app/handlers.py (2/2)"]
    data = review_data(events)
    assert data["skipped"] == [{"file": "README.md", "reason": "not a Python file"}]
    assert "README.md" in data["summary"]
    by_rule = {(f["file"], f["rule"]): f for f in data["findings"]}
    assert by_rule[("app/config.py", "S506")]["line"] == new_line_of(diff, "app/config.py", "yaml.load(fh)")
    assert by_rule[("app/config.py", "S105")]["line"] == new_line_of(diff, "app/config.py", '"hunter2"')
    assert by_rule[("app/handlers.py", "B006")]["severity"] == "medium"
    assert by_rule[("app/handlers.py", "S602")]["line"] == new_line_of(diff, "app/handlers.py", "shell=True")
    # Findings come in diff order: file, then line.
    keys = [(f["file"], f["line"]) for f in data["findings"]]
    assert keys == sorted(keys)


async def test_input_required_round_trip(agent: CodeReviewAgent) -> None:
    first = user_message(text_part("please review my change"), data_part({"focus": ["security"]}))
    ctx = make_ctx(first)
    events = await run(agent, ctx)
    (event,) = events
    assert event.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert "diff" in status_text(event)
    assert event.status.message.role == pb.ROLE_AGENT

    # The follow-up on the same task carries the diff; the focus of the first turn still applies.
    task = pb.Task(
        id=ctx.task_id,
        context_id=ctx.context_id,
        status=pb.TaskStatus(state=pb.TASK_STATE_INPUT_REQUIRED, timestamp=now_timestamp()),
        history=[first, event.status.message],
    )
    diff = diff_text("multi_file.diff")
    second = user_message(
        file_part(diff.encode(), filename="change.patch", media_type=""),
        task_id=task.id,
        context_id=task.context_id,
    )
    events = await run(agent, make_ctx(second, task=task))
    assert statuses(events)[-1].status.state == pb.TASK_STATE_COMPLETED
    data = review_data(events)
    assert _rules(data) == {"S506", "S105", "S602"}  # security only: B006 is not reported
    assert "focus: security" in data["summary"]


async def test_follow_up_without_a_diff_asks_again(agent: CodeReviewAgent) -> None:
    task = pb.Task(id=new_id(), context_id=new_id(), status=pb.TaskStatus(state=pb.TASK_STATE_INPUT_REQUIRED))
    events = await run(agent, make_ctx(user_message(text_part("here it is")), task=task))
    assert [e.status.state for e in events] == [pb.TASK_STATE_INPUT_REQUIRED]


async def test_image_part_is_content_type_not_supported(agent: CodeReviewAgent) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(32)
    ctx = make_ctx(user_message(text_part("review this"), file_part(png, media_type="image/png")))
    gen = agent.execute(ctx)
    with pytest.raises(A2AError) as err:
        await gen.__anext__()
    assert err.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    assert "image/png" in err.value.message


async def test_output_modes_are_honoured(agent: CodeReviewAgent) -> None:
    diff = diff_text("sql_injection.diff")
    events = await run(agent, make_ctx(user_message(text_part(diff)), accepted=["text/plain"]))
    (update,) = artifacts(events)
    assert [p.WhichOneof("content") for p in update.artifact.parts] == ["text"]
    assert "S608" in update.artifact.parts[0].text
    # The data part says what it is (the CLI's view of it): asked for by that type or as JSON.
    for accepted in (["application/json"], [REVIEW_FINDINGS]):
        (update,) = artifacts(await run(agent, make_ctx(user_message(text_part(diff)), accepted=accepted)))
        assert [(p.WhichOneof("content"), p.media_type) for p in update.artifact.parts] == [
            ("data", REVIEW_FINDINGS)
        ]
    with pytest.raises(A2AError) as err:
        await agent.execute(make_ctx(user_message(text_part(diff)), accepted=["image/png"])).__anext__()
    assert err.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED


async def test_text_typed_as_a_diff_must_be_one(agent: CodeReviewAgent) -> None:
    events = await run(agent, make_ctx(user_message(text_part("not a diff", media_type="text/x-patch"))))
    (event,) = statuses(events)
    assert event.status.state == pb.TASK_STATE_FAILED
    assert "no file headers" in status_text(event)


@pytest.mark.parametrize(
    ("diff", "reason"),
    [
        # The hunk header promises 8 new lines; the body is cut short.
        ("\n".join(diff_text("sql_injection.diff").splitlines()[:-3]) + "\n", "shorter than expected"),
        # A hunk without file headers.
        ("@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3\n", "could not be parsed"),
        ("diff --git a/x.py b/x.py\n", "no hunks"),
        ("--- a/x.py\n+++ b/x.py\n-a = 1\n+a = 2\n", "no hunks"),
    ],
)
async def test_malformed_diff_fails_the_task(agent: CodeReviewAgent, diff: str, reason: str) -> None:
    events = await run(agent, make_ctx(user_message(text_part(diff))))
    (event,) = statuses(events)
    assert event.status.state == pb.TASK_STATE_FAILED
    message = status_text(event)
    assert "could not be parsed" in message and reason in message
    assert "\n" not in message, message
    assert not artifacts(events)


async def test_malformed_diff_message_is_one_line(agent: CodeReviewAgent) -> None:
    """unidiff ends its error with the offending line and its line break; the message must not."""
    events = await run(agent, make_ctx(user_message(text_part("@@ -1,3 +1,4 @@\ngarbage"))))
    (event,) = statuses(events)
    assert event.status.state == pb.TASK_STATE_FAILED
    assert status_text(event) == (
        "The diff could not be parsed: Unexpected hunk found: @@ -1,3 +1,4 @@. "
        "Send a complete unified diff (`git diff`)."
    )


@pytest.mark.parametrize(
    ("focus", "expected"),
    [
        (["bugs"], {"B006"}),
        (["security"], {"S506", "S105", "S602"}),
        (["style", "performance"], set()),
        ("bugs", {"B006"}),
    ],
)
async def test_focus_selects_rule_families(agent: CodeReviewAgent, focus, expected) -> None:
    message = user_message(
        data_part({"diff": diff_text("multi_file.diff"), "language": "python", "focus": focus})
    )
    data = review_data(await run(agent, make_ctx(message)))
    assert _rules(data) == expected


async def test_style_focus_on_the_large_diff(agent: CodeReviewAgent) -> None:
    message = user_message(data_part({"diff": diff_text("large_new_module.diff"), "focus": ["style"]}))
    data = review_data(await run(agent, make_ctx(message)))
    assert data["findings"]
    assert all(
        f["rule"].startswith(("E", "W", "N", "UP")) and f["severity"] == "low" for f in data["findings"]
    )


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"diff": "x", "focus": ["security", "typos"]}, "data.focus"),
        ({"diff": "x", "focus": [1]}, "data.focus"),
        ({"diff": "x", "language": "go"}, "data.language"),
        ({"diff": 42}, "data.diff"),
        ({"diff": "x", "python_version": "2.7"}, "data.python_version"),
        (["not", "an", "object"], "data"),
    ],
)
async def test_bad_data_part_is_invalid_params(agent: CodeReviewAgent, value, field: str) -> None:
    gen = agent.execute(make_ctx(user_message(data_part(value))))
    with pytest.raises(A2AError) as err:
        await gen.__anext__()
    assert err.value.code is ErrorCode.INVALID_PARAMS
    assert [v.field for v in err.value.field_violations] == [f"message.parts[0].{field}"]


async def test_large_review_is_streamed_in_chunks(agent: CodeReviewAgent) -> None:
    diff = diff_text("large_new_module.diff")
    events = await run(agent, make_ctx(user_message(text_part(diff))))
    updates = artifacts(events)
    assert len(updates) >= 2
    assert len({u.artifact.artifact_id for u in updates}) == 1
    assert [u.append for u in updates] == [False] + [True] * (len(updates) - 1)
    assert [u.last_chunk for u in updates] == [False] * (len(updates) - 1) + [True]
    for u in updates[:-1]:
        (part,) = u.artifact.parts
        assert len(part.data.struct_value.fields["findings"].list_value.values) == CHUNK_FINDINGS
    kinds = [p.WhichOneof("content") for p in updates[-1].artifact.parts]
    assert kinds == ["data", "text"]

    data = review_data(events)
    total = len(data["findings"])
    assert total > CHUNK_FINDINGS
    assert f"{total} findings" in data["summary"]
    # One S608 per generated export function, each at the line of its query.
    s608 = sorted(f["line"] for f in data["findings"] if f["rule"] == "S608")
    expected = sorted(
        int(line.target_line_no)
        for patched in __import__("unidiff").PatchSet(diff)
        for hunk in patched
        for line in hunk
        if 'sql = "SELECT' in line.value
    )
    assert s608 == expected and len(expected) == 20
    assert statuses(events)[-1].status.state == pb.TASK_STATE_COMPLETED


async def test_diff_fenced_inside_prose(agent: CodeReviewAgent) -> None:
    prose = f"Hi! Could you review this?\n\n```diff\n{diff_text('sql_injection.diff')}```\n\nThanks."
    data = review_data(await run(agent, make_ctx(user_message(text_part(prose)))))
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("S608", 18)]


async def test_crlf_diff_and_odd_file_names(agent: CodeReviewAgent) -> None:
    diff = diff_text("sql_injection.diff").replace("app/users.py", "app/../we ird$name.py")
    data = review_data(await run(agent, make_ctx(user_message(text_part(diff.replace("\n", "\r\n"))))))
    assert [(f["file"], f["rule"], f["line"]) for f in data["findings"]] == [
        ("app/../we ird$name.py", "S608", 18)
    ]


# --- hunks that need care to rebuild ------------------------------------------------------------

_PARTIAL = """\
--- a/svc/jobs.py
+++ b/svc/jobs.py
@@ -40,9 +40,10 @@ class Runner:
             "retries": 3,
         ]
         try:
-            result = self.run(job)
+            result = eval(job.expr)
+            log.info("ran %s", job)
-        except Exception:
-            raise
+        except Exception:
+            continue
         return result

     def stop(self):
"""


async def test_partial_hunk_is_rebuilt_without_false_findings(agent: CodeReviewAgent) -> None:
    """The hunk starts inside a bracket and a method, uses names defined elsewhere, and ends on a
    block header: eval (S307, line 43) and try/except/continue (S112, line 45) are found at their
    new lines, and nothing is reported for names or statements whose context the diff does not show
    (F821 log/job, F702 continue outside a loop, F706 return outside a function)."""
    data = review_data(await run(agent, make_ctx(user_message(text_part(_PARTIAL)))))
    found = {(f["rule"], f["line"]) for f in data["findings"]}
    assert ("S307", 43) in found
    assert ("S112", 45) in found
    assert not {rule for rule, _ in found} & {"F821", "F701", "F702", "F706", "invalid-syntax"}
    assert data["skipped"] == []


_NEW_FILE = """\
diff --git a/tools/cli.py b/tools/cli.py
new file mode 100644
--- /dev/null
+++ b/tools/cli.py
@@ -0,0 +1,5 @@
+import os
+import sys
+
+def main():
+    return undefined_helper(sys.argv)
"""


async def test_context_rules_apply_to_files_added_in_full(agent: CodeReviewAgent) -> None:
    data = review_data(await run(agent, make_ctx(user_message(text_part(_NEW_FILE)))))
    found = {(f["rule"], f["line"]) for f in data["findings"]}
    assert ("F401", 1) in found  # os is unused: the whole file is known
    assert ("F821", 5) in found


async def test_unparseable_hunk_is_listed_as_not_reviewed(agent: CodeReviewAgent) -> None:
    diff = (
        "--- a/m.py\n+++ b/m.py\n@@ -1,1 +1,4 @@\n x = 1\n+def f(:\n"
        + '+    """doc"""\n'
        + "+    s = '''a'''\n"
    )
    data = review_data(await run(agent, make_ctx(user_message(text_part(diff)))))
    assert data["findings"] == []
    (entry,) = data["skipped"]
    assert entry["file"] == "m.py" and entry["line"] == 1 and "not reviewed" in entry["reason"]


async def test_hunk_inside_a_docstring_is_checked_as_text(agent: CodeReviewAgent) -> None:
    """An edited docstring: the hunk neither opens nor closes the string. Its prose is not linted
    as code (no E702 for the semicolon, no syntax error), but long lines are still found."""
    long_line = "uses TLS; " * 12
    diff = (
        "--- a/m.py\n+++ b/m.py\n@@ -10,3 +10,3 @@ def connect():\n"
        " Connects to the server\n-over plain TCP.\n"
        f"+{long_line.strip()}\n"
        " Returns the channel.\n"
    )
    data = review_data(await run(agent, make_ctx(user_message(text_part(diff)))))
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("E501", 11)]
    (entry,) = data["skipped"]
    assert entry["line"] == 10 and "inside of a string literal" in entry["reason"]


async def test_hunk_closing_a_docstring_is_linted_after_it(agent: CodeReviewAgent) -> None:
    diff = (
        "--- a/m.py\n+++ b/m.py\n@@ -3,4 +3,5 @@\n"
        " the rest of the module docstring; with a semicolon.\n"
        ' """\n'
        " \n"
        "+data = pickle.loads(blob)\n"
        " import os\n"
    )
    data = review_data(await run(agent, make_ctx(user_message(text_part(diff)))))
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("S301", 6)]
    assert data["skipped"] == []


async def test_section_header_gives_the_hunk_its_real_scope(agent: CodeReviewAgent) -> None:
    """git names the enclosing class after ``@@``: the hunk is then rebuilt inside that class and a
    method, so a camelCase local is N806 (in a function), not N816 (module level)."""
    diff = (
        "--- a/store.py\n+++ b/store.py\n@@ -10,3 +10,4 @@ class Store:\n"
        "         self.rows = []\n"
        '+        userName = "x"\n'
        "         return self\n"
        " \n"
    )
    data = review_data(await run(agent, make_ctx(user_message(text_part(diff)))))
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("N806", 11)]
    without_header = diff.replace(" class Store:", "")
    data = review_data(await run(agent, make_ctx(user_message(text_part(without_header)))))
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("N816", 11)]


def _loop_diff(after: str) -> str:
    return (
        "--- a/m.py\n+++ b/m.py\n@@ -20,4 +20,6 @@ def build(items):\n"
        "     out = []\n"
        "+    for item in items:\n"
        "+        out.append(item * 2)\n"
        f"{after}"
    )


async def test_loop_rules_need_the_end_of_the_loop(agent: CodeReviewAgent) -> None:
    """PERF401 judges the whole loop body: reported when the hunk shows the loop end, not when
    the body may go on below the hunk."""
    closed = _loop_diff("     return out\n \n \n")
    data = review_data(await run(agent, make_ctx(user_message(text_part(closed)))))
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("PERF401", 22)]
    open_ended = _loop_diff("         log(item)\n         count += 1\n         check(out)\n")
    data = review_data(await run(agent, make_ctx(user_message(text_part(open_ended)))))
    assert data["findings"] == []


# --- diffs by URL ---------------------------------------------------------------------------------


@pytest.fixture
async def diff_server():
    body = diff_text("sql_injection.diff")

    async def pr(_: web.Request) -> web.Response:
        return web.Response(text=body, content_type="text/x-diff")

    async def moved(_: web.Request) -> web.Response:
        raise web.HTTPFound("/pr/1.diff")

    async def huge(_: web.Request) -> web.Response:
        return web.Response(body=b"+" * (5 * 1024 * 1024))

    app = web.Application()
    app.router.add_get("/pr/1.diff", pr)
    app.router.add_get("/moved.diff", moved)
    app.router.add_get("/huge.diff", huge)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def test_diff_fetched_by_url(diff_server: str) -> None:
    agent = CodeReviewAgent(allow_private_urls=True)
    part = pb.Part(url=f"{diff_server}/moved.diff")
    events = await run(agent, make_ctx(user_message(part)))
    assert status_text(statuses(events)[0]).startswith("Fetching ")
    assert [(f["rule"], f["line"]) for f in review_data(events)["findings"]] == [("S608", 18)]


@pytest.mark.parametrize(
    ("path", "allow", "reason"),
    [
        ("/pr/1.diff", False, "non-public address"),
        ("/missing.diff", True, "HTTP 404"),
        ("/huge.diff", True, "limit"),
    ],
)
async def test_fetch_failure_fails_the_task(diff_server: str, path: str, allow: bool, reason: str) -> None:
    agent = CodeReviewAgent(allow_private_urls=allow)
    events = await run(agent, make_ctx(user_message(pb.Part(url=diff_server + path))))
    final = statuses(events)[-1]
    assert final.status.state == pb.TASK_STATE_FAILED
    assert "Could not fetch the diff" in status_text(final) and reason in status_text(final)


async def test_host_names_resolving_to_loopback_are_refused(diff_server: str, agent: CodeReviewAgent) -> None:
    url = diff_server.replace("127.0.0.1", "localhost") + "/pr/1.diff"
    events = await run(agent, make_ctx(user_message(pb.Part(url=url))))
    final = statuses(events)[-1]
    assert final.status.state == pb.TASK_STATE_FAILED
    assert "non-public address" in status_text(final)


async def test_url_that_is_not_a_diff_is_rejected(agent: CodeReviewAgent) -> None:
    gen = agent.execute(
        make_ctx(user_message(pb.Part(url="https://example.com/cat.png", media_type="image/png")))
    )
    with pytest.raises(A2AError) as err:
        await gen.__anext__()
    assert err.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED


async def test_ruff_that_cannot_start_fails_the_task(agent: CodeReviewAgent, monkeypatch, tmp_path) -> None:
    from a2a_grpc.agents._review import ruff_runner

    monkeypatch.setattr(ruff_runner, "ruff_command", lambda: (str(tmp_path / "no-such-ruff"),))
    events = await run(agent, make_ctx(user_message(text_part(diff_text("sql_injection.diff")))))
    final = statuses(events)[-1]
    assert final.status.state == pb.TASK_STATE_FAILED
    assert "The review could not run: cannot start ruff" in status_text(final)
    assert not artifacts(events)


async def test_progress_statuses_are_capped_for_diffs_touching_many_files(agent: CodeReviewAgent) -> None:
    diff = "".join(
        f"--- a/pkg/m{i}.py\n+++ b/pkg/m{i}.py\n@@ -1,1 +1,2 @@\n import os\n+x{i} = eval(os.environ['X'])\n"
        for i in range(250)
    )
    events = await run(agent, make_ctx(user_message(text_part(diff))))
    working = [status_text(s) for s in statuses(events) if s.status.state == pb.TASK_STATE_WORKING]
    assert working[0] == "Reviewing pkg/m0.py (1/250)"
    assert working[-1] == "Reviewing pkg/m249.py (250/250)"
    assert 80 <= len(working) <= 101
    data = review_data(events)
    assert {(f["rule"], f["line"]) for f in data["findings"]} == {("S307", 2)}
    assert len(data["findings"]) == 250


async def test_files_beyond_the_hunk_limit_are_skipped(agent: CodeReviewAgent, monkeypatch) -> None:
    from a2a_grpc.agents import _code_review as code_review

    monkeypatch.setattr(code_review, "MAX_HUNKS", 3)
    diff = "".join(
        f"--- a/m{i}.py\n+++ b/m{i}.py\n@@ -1,1 +1,2 @@\n import os\n+x = eval(os.environ['X'])\n"
        for i in range(5)
    )
    data = review_data(await run(agent, make_ctx(user_message(text_part(diff)))))
    assert [f["file"] for f in data["findings"]] == ["m0.py", "m1.py", "m2.py"]
    assert data["skipped"] == [
        {"file": f"m{i}.py", "reason": "review limit of 3 hunks reached"} for i in (3, 4)
    ]


@pytest.mark.parametrize("spins", [0, 3, 20])
async def test_cancellation_leaves_no_files_behind(
    agent: CodeReviewAgent, monkeypatch, tmp_path, spins
) -> None:
    """The framework cancels the generator when the task is canceled: wherever the review is then
    (rebuilding, writing, linting), its scratch directory is removed."""
    import asyncio

    from a2a_grpc.agents import _code_review as code_review

    monkeypatch.setattr(code_review, "_SCRATCH", str(tmp_path))
    gen = agent.execute(make_ctx(user_message(text_part(diff_text("large_new_module.diff")))))
    first = await gen.__anext__()
    assert first.status.state == pb.TASK_STATE_WORKING
    pending = asyncio.ensure_future(gen.__anext__())  # now in the thread and subprocess awaits
    for _ in range(spins):
        await asyncio.sleep(0)
    assert not pending.done()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await gen.aclose()
    for _ in range(50):
        if not list(tmp_path.iterdir()):
            break
        await asyncio.sleep(0.02)
    assert list(tmp_path.iterdir()) == []
