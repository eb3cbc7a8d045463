"""README "Serve from Python": ``examples/serve_from_python.py`` serves the word-count
agent as shown (the code block in the README is the example's code), answers on
every binding, keeps its tasks in SQLite across a restart, and stops on SIGINT."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

from a2a_grpc import A2AClient
from a2a_grpc.types import pb
from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
EXAMPLE = (REPO / "examples" / "serve_from_python.py").read_text(encoding="utf-8")


def test_readme_shows_the_example() -> None:
    section = README[README.index("### Serve from Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    shown = code.group(1)
    # The README's block is the example minus its docstring and argv handling.
    for line in shown.splitlines():
        if line.strip() and not line.startswith(("serve(", "    ", ")")):
            assert line in EXAMPLE, line
    assert "ServerConfig(grpc_port=50053, http_port=8082)" in shown


async def _start(cwd: Path, grpc_port: int, http_port: int) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "examples" / "serve_from_python.py"),
        str(grpc_port),
        str(http_port),
        cwd=cwd,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    while len(lines) < 3:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        if not line:
            raise AssertionError("the example exited:\n" + "".join(lines))
        lines.append(line)
    return proc, "".join(lines)


async def _stop(proc: asyncio.subprocess.Process) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return await asyncio.wait_for(proc.wait(), 15)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise


async def test_the_example_serves_and_keeps_its_tasks(tmp_path: Path) -> None:
    grpc_port, http_port = free_port(), free_port()
    proc, printed = await _start(tmp_path, grpc_port, http_port)
    try:
        assert printed.splitlines() == [
            f"GRPC      127.0.0.1:{grpc_port}",
            f"JSONRPC   http://127.0.0.1:{http_port}/",
            f"HTTP+JSON http://127.0.0.1:{http_port}",
        ]
        url = f"http://127.0.0.1:{http_port}"
        ids = []
        for binding in ("grpc", "jsonrpc", "rest"):
            async with await A2AClient.connect(url, bindings=[binding]) as client:
                task = (await client.send_message("one two three")).task
            assert task.status.state == pb.TASK_STATE_COMPLETED
            ids.append(task.id)
    finally:
        assert await _stop(proc) == 0
    assert (tmp_path / "data" / "word-count.db").exists()
    proc, _ = await _start(tmp_path, grpc_port, http_port)
    try:
        async with await A2AClient.connect(f"http://127.0.0.1:{http_port}") as client:
            listed = await client.list_tasks()
        assert sorted(t.id for t in listed.tasks) == sorted(ids)
    finally:
        assert await _stop(proc) == 0
