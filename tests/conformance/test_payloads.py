"""Content that must survive every binding unchanged: unicode text, binary
parts, structured data (spec §5.5, §5.6)."""

from __future__ import annotations

import hashlib
import random

import pytest

from a2a_grpc.core._executor import data_part, file_part, text_part
from a2a_grpc.types import pb
from tests.conformance.clients import collect
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")

UNICODE = '中文 日本語 한국어 · emoji 😀👩‍💻🏳️‍🌈 · U+2028[\u2028] U+2029[\u2029] · nul-ish \x01 · "quotes" \\ / <tag>'
BLOB = random.Random(2028).randbytes(5 * 1024 * 1024)


def _parts() -> list[pb.Part]:
    return [
        text_part(UNICODE),
        file_part(BLOB, filename="blob.bin"),
        data_part({"k": [1, 2.5, "三", None, True], "nested": {"\u2028": "x"}}),
    ]


async def test_unicode_text_roundtrip(binding, transcript):
    t = transcript
    task = t.add("send", await binding.call("SendMessage", send(text_part(UNICODE)))).task
    assert task.artifacts[0].parts[0].text == UNICODE
    assert task.history[0].parts[0].text == UNICODE
    got = await binding.call("GetTask", pb.GetTaskRequest(id=task.id))
    assert got.artifacts[0].parts[0].text == UNICODE
    events = t.add("stream", await collect(binding, "SendStreamingMessage", send(text_part(UNICODE))))
    assert events[1].artifact_update.artifact.parts[0].text == UNICODE
    t.check_parity()


async def test_five_mib_binary_part_is_byte_exact(binding, transcript):
    t = transcript
    resp = await binding.call("SendMessage", send(*_parts()))
    task = resp.task
    sent = _parts()
    assert list(task.artifacts[0].parts) == sent
    raw = task.artifacts[0].parts[1].raw
    assert len(raw) == len(BLOB) and hashlib.sha256(raw).digest() == hashlib.sha256(BLOB).digest()
    got = await binding.call("GetTask", pb.GetTaskRequest(id=task.id))
    assert got.artifacts[0].parts[1].raw == BLOB
    assert list(got.history[0].parts) == sent
    events = await collect(binding, "SendStreamingMessage", send(*_parts()))
    assert events[1].artifact_update.artifact.parts[1].raw == BLOB
    # Compare the rest through the transcript without the 5 MiB payloads.
    for msg in (task, *[e.task for e in events if e.HasField("task")]):
        for holder in (*msg.artifacts, *msg.history):
            for part in holder.parts:
                if part.raw:
                    part.raw = hashlib.sha256(part.raw).digest()
    for e in events:
        for part in e.artifact_update.artifact.parts:
            if part.raw:
                part.raw = hashlib.sha256(part.raw).digest()
    t.add("send", task)
    t.add("stream", events)
    t.check_parity()
