"""The README's CLI walkthrough (section "1. With the CLI") stays true: its commands, taken from
README.md as written, run against a real server (the code-review agent, memory store, ephemeral
127.0.0.1 ports) and print what the README shows after each of them.

Ids, timestamps and the server's URL are normalised; a ``…`` line in the README's output stands
for any number of lines (trimmed output). Tables are drawn 100 columns wide, as in the README.
Also checks that every ``a2a-grpc`` command line in README.md and docs/*.md names commands and
options that exist, and every file it names."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from a2a_grpc.agents._code_review import CodeReviewAgent
from a2a_grpc.cli import main
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
README_URL = "http://127.0.0.1:8080"
HEXISH = re.compile(r"[0-9a-f-]{6,}")  # uuids and the pieces of a wrapped one
WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
#: ``[NAME=$(]a2a-grpc ARGS[ | python3 -c 'SNIPPET')][; echo "exit code $?"]``
LINE = re.compile(
    r"^(?:(?P<var>\w+)=\$\()?a2a-grpc (?P<args>.*?)(?: \| python3 -c '(?P<py>[^']*)'\))?"
    r"(?P<echo>; echo \"exit code \$\?\")?$"
)


def section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end)]


def command_and_output_blocks(text: str) -> list[tuple[str, str]]:
    """Each ```sh block with the plain ``` block that follows it."""
    return re.findall(r"```sh\n(.*?)```\n\n```\n(.*?)```", text, re.S)


def normalise(text: str) -> str:
    """Ids (also when a table cell wraps one) and times become same-width placeholders."""
    text = WHEN.sub(lambda m: "T" * len(m[0]), text)
    text = HEXISH.sub(lambda m: "x" * len(m[0]) if any(c.isdigit() for c in m[0]) else m[0], text)
    return text.rstrip("\n")


def matches(expected: str, actual: str) -> bool:
    """``actual`` has the lines of ``expected``, where a line ``…`` stands for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "…" else re.escape(line) + r"\n" for line in expected.split("\n")
    )
    return re.fullmatch(pattern, actual + "\n") is not None


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    srv = A2AServer(CodeReviewAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)


async def run_line(line: str, url: str, env: dict[str, str]) -> str:
    """Runs one README command line the way the shell would, and returns what it prints."""
    m = LINE.match(line)
    assert m, f"not a command line this test understands: {line!r}"
    args = [a.replace(README_URL, url) for a in shlex.split(os.path.expandvars(m["args"]))]
    result = await asyncio.to_thread(CliRunner().invoke, main, args, env={"COLUMNS": "100"})
    assert "Traceback" not in result.output, result.output
    if m["var"]:
        assert result.exit_code == 0, result.output
        snippet = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", m["py"]],
            input=result.stdout,
            capture_output=True,
            text=True,
            check=True,
        )
        env[m["var"]] = os.environ[m["var"]] = snippet.stdout.strip()
        return ""
    printed = result.output.replace(url, README_URL)
    if m["echo"]:
        printed += f"exit code {result.exit_code}\n"
    else:
        assert result.exit_code == 0, result.output
    return printed


async def test_readme_cli_walkthrough_prints_what_the_readme_shows(
    server: A2AServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TASK_ID", raising=False)
    url = f"http://127.0.0.1:{server.http_port}"
    blocks = command_and_output_blocks(section(README, "### 1. With the CLI", "### 2. With curl"))
    assert len(blocks) >= 5
    env: dict[str, str] = {}
    for commands, shown in blocks:
        printed = ""
        for line in commands.strip().splitlines():
            if line.startswith(". .venv/bin/activate"):
                continue
            printed += await run_line(line, url, env)
        assert matches(normalise(shown), normalise(printed)), (
            f"README output is stale for:\n{commands}\n--- README shows:\n{shown}\n--- now prints:\n{printed}"
        )


def documented_command_lines() -> list[str]:
    lines: list[str] = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in re.findall(r"```(?:sh|console)\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            for line in block.splitlines():
                line = line.removeprefix("$ ")
                found = re.search(r"(?:^|\$\(|\.venv/bin/)a2a-grpc (.*)", line)
                if found:
                    lines.append(found.group(1))
    return lines


def test_documented_command_lines_name_real_commands_options_and_files() -> None:
    lines = documented_command_lines()
    assert len(lines) >= 15
    for line in lines:
        words = shlex.split(re.split(r"\s*(?:[;|>&]|\)$)", line)[0])
        words = ["x" if w.startswith("$") else w for w in words]
        command: click.Command = main
        name = "a2a-grpc"
        while isinstance(command, click.Group):  # our groups take no options of their own
            name, *words = words
            sub = command.get_command(click.Context(command), name)
            assert sub is not None, f"no command {name!r}: {line}"
            command = sub
        command.make_context(name, list(words))  # raises on an unknown option or a missing argument
        for option, value in itertools.pairwise(words):
            if option == "--file":
                assert (REPO / value).is_file() or value.startswith("/tmp/"), line


def test_readme_first_screen_has_the_two_set_up_commands() -> None:
    first = README.split("---", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", first, re.S)
    assert [line.split()[:2] for line in block.strip().splitlines()] == [["make", "serve"], ["make", "test"]]
    assert "PYTHONPATH" not in README and "18.0" not in README
