"""The explain agent over a real server: Python source and diffs in, the
outline (data part and text) out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from a2a_grpc.agents import load_agent
from a2a_grpc.client import A2AClient
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb

SOURCE = '''"""Shapes and their areas."""
import math
from dataclasses import dataclass


@dataclass
class Circle(object):
    """A circle."""

    r: float

    def area(self) -> float:
        """The area."""
        return math.pi * self.r**2


def classify(x: int, *, strict: bool = False) -> str:
    """Sign of x as a word.

    More text."""
    if x > 0:
        return "positive"
    elif x < 0:
        return "negative"
    for _ in range(3):
        if strict and x == 0:
            raise ValueError(x)
    return "zero"


async def fetch(url) -> None:
    pass
'''

DIFF = (Path(__file__).resolve().parents[2] / "examples" / "diffs" / "sql_injection.diff").read_text()


@pytest.fixture
async def client() -> AsyncIterator[A2AClient]:
    srv = A2AServer(load_agent("explain"), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    try:
        async with await A2AClient.connect(f"http://127.0.0.1:{srv.http_port}") as c:
            yield c
    finally:
        await srv.stop(0.1)


async def _outline(client: A2AClient, parts: list[pb.Part]) -> tuple[dict, str]:
    result = await client.send_message(parts)
    assert result.task.status.state == pb.TASK_STATE_COMPLETED
    (artifact,) = result.task.artifacts
    assert artifact.name == "outline"
    return json_format.MessageToDict(artifact.parts[0].data), artifact.parts[1].text


async def test_source_outline(client: A2AClient):
    data, text = await _outline(client, [pb.Part(text=SOURCE)])
    (module,) = data["modules"]
    assert module["docstring"] == "Shapes and their areas."
    assert module["imports"] == ["import math", "from dataclasses import dataclass"]
    (cls,) = module["classes"]
    assert cls["name"] == "Circle" and cls["bases"] == ["object"] and cls["docstring"] == "A circle."
    assert cls["methods"][0]["signature"] == "def area(self) -> float"
    classify, fetch = module["functions"]
    assert classify["signature"] == "def classify(x: int, *, strict: bool=False) -> str"
    assert classify["docstring"] == "Sign of x as a word." and classify["line"] == 17
    assert classify["complexity"] == 6  # if, elif, for, if, and: radon's count
    assert fetch["signature"] == "async def fetch(url) -> None" and fetch["complexity"] == 1
    assert module["complexity"] == {"average": 2.67, "max": 6}
    assert "def classify(x: int, *, strict: bool=False) -> str  [line 17, complexity 6]" in text


async def test_diff_outline(client: A2AClient):
    data, text = await _outline(client, [pb.Part(text=DIFF, media_type="text/x-diff")])
    (module,) = data["modules"]
    assert module["path"] == "app/users.py" and module["imports"] == []
    assert [f["name"] for f in module["functions"]] == ["get_user"]
    assert module["functions"][0]["docstring"] == "Returns the user with this id, or None."
    assert text.startswith("app/users.py\n  def get_user(conn: sqlite3.Connection, user_id: int)")


async def test_bad_input(client: A2AClient):
    broken = await client.send_message("def f(:\n  pass")
    assert broken.task.status.state == pb.TASK_STATE_FAILED
    assert "line 1" in broken.task.status.message.parts[0].text
    # A part outside the card's input modes never reaches the agent (issue 10: media types).
    with pytest.raises(A2AError) as refused:
        await client.send_message([pb.Part(raw=b"\x00", media_type="application/octet-stream")])
    assert refused.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    assert "text/x-python" in refused.value.message
    # One it accepts but finds no source in is rejected by the agent.
    empty = await client.send_message([pb.Part(raw=b"", media_type="text/plain")])
    assert empty.task.status.state == pb.TASK_STATE_REJECTED
