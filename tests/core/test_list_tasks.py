"""ListTasks over gRPC (spec §3.1.4; digest §3.17, §14 D)."""

from __future__ import annotations

import asyncio
import base64
import json

from google.protobuf import timestamp_pb2

from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.helpers import VERSION_MD, msg, raises


async def send_many(stub, texts: list[str]) -> list[pb.Task]:
    out: list[pb.Task] = []
    for i in range(0, len(texts), 20):
        batch = [
            stub.SendMessage(msg(t, message_id=f"m{i + j}"), metadata=VERSION_MD)
            for j, t in enumerate(texts[i : i + 20])
        ]
        out.extend(r.task for r in await asyncio.gather(*batch))
    return out


async def list_(stub, **kw: object) -> pb.ListTasksResponse:
    return await stub.ListTasks(pb.ListTasksRequest(**kw), metadata=VERSION_MD)  # type: ignore[arg-type]


async def test_filters(stub) -> None:
    a1 = (await stub.SendMessage(msg("echo a1", context_id="ctx-a"), metadata=VERSION_MD)).task
    a2 = (await stub.SendMessage(msg("ask", context_id="ctx-a"), metadata=VERSION_MD)).task
    b1 = (await stub.SendMessage(msg("echo b1", context_id="ctx-b"), metadata=VERSION_MD)).task
    r = await list_(stub, context_id="ctx-a")
    assert {t.id for t in r.tasks} == {a1.id, a2.id} and r.total_size == 2
    r = await list_(stub, status=pb.TASK_STATE_COMPLETED)
    assert {t.id for t in r.tasks} == {a1.id, b1.id} and r.total_size == 2
    r = await list_(stub, context_id="ctx-a", status=pb.TASK_STATE_INPUT_REQUIRED)
    assert [t.id for t in r.tasks] == [a2.id]
    r = await list_(stub, context_id="nothing-here")
    assert list(r.tasks) == [] and r.total_size == 0 and r.next_page_token == "" and r.page_size == 50


async def test_status_timestamp_after_is_inclusive(stub) -> None:
    tasks = await send_many(stub, ["at 1700000000", "at 1700000100", "at 1700000200"])
    assert [t.status.timestamp.seconds for t in tasks] == [1700000000, 1700000100, 1700000200]
    r = await list_(stub, status_timestamp_after=timestamp_pb2.Timestamp(seconds=1700000100))
    assert [t.id for t in r.tasks] == [tasks[2].id, tasks[1].id]  # newest first, boundary included
    assert r.total_size == 2
    r = await list_(stub, status_timestamp_after=timestamp_pb2.Timestamp(seconds=1700000100, nanos=1_000_000))
    assert [t.id for t in r.tasks] == [tasks[2].id]


async def test_order_newest_first(stub) -> None:
    tasks = await send_many(stub, ["at 1700000300", "at 1700000100", "at 1700000200"])
    r = await list_(stub)
    assert [t.id for t in r.tasks] == [tasks[0].id, tasks[2].id, tasks[1].id]


async def test_page_size_and_cursor_walk_equal_timestamps(stub) -> None:
    """120 tasks sharing one status timestamp: pages of the default size (50),
    the clamp (100), and a full walk with pageSize 7 visit every task once."""
    n = 120
    tasks = await send_many(stub, ["at 1700000000"] * n)
    ids = {t.id for t in tasks}
    assert len(ids) == n

    r = await list_(stub)
    assert r.page_size == 50 and len(r.tasks) == 50 and r.total_size == n and r.next_page_token
    r0 = await list_(stub, page_size=0)
    assert r0.page_size == 50 and [t.id for t in r0.tasks] == [t.id for t in r.tasks]
    big = await list_(stub, page_size=1000)
    assert big.page_size == 100 and len(big.tasks) == 100 and big.next_page_token

    for size in (7, 100):
        seen: list[str] = []
        token = ""
        pages = 0
        while True:
            page = await list_(stub, page_size=size, page_token=token)
            assert page.total_size == n
            assert len(page.tasks) <= size
            seen.extend(t.id for t in page.tasks)
            pages += 1
            token = page.next_page_token
            if not token:
                break
        assert len(seen) == n and set(seen) == ids, f"duplicates or gaps with pageSize {size}"
        assert pages == -(-n // size)
        # Equal timestamps: the tiebreak is the task id, descending.
        assert seen == sorted(seen, reverse=True)


async def test_negative_page_size(stub) -> None:
    with raises(ErrorCode.INVALID_PARAMS) as r:
        await list_(stub, page_size=-1)
    assert "page_size" in r.violations
    with raises(ErrorCode.INVALID_PARAMS) as r:
        await list_(stub, history_length=-2)
    assert "history_length" in r.violations


async def test_bad_page_tokens(stub) -> None:
    await send_many(stub, [f"at {1700000000 + i}" for i in range(3)] + ["ask"])
    page = await list_(stub, page_size=1)
    assert page.next_page_token
    for bad in ("garbage!!", "bm90IGpzb24", base64.urlsafe_b64encode(b'[1,"x"]').decode()):
        with raises(ErrorCode.INVALID_PARAMS) as r:
            await list_(stub, page_size=1, page_token=bad)
        assert "page_token" in r.violations
    # A token issued for another query (different filters / caller) is foreign.
    with raises(ErrorCode.INVALID_PARAMS):
        await list_(stub, page_size=1, page_token=page.next_page_token, status=pb.TASK_STATE_COMPLETED)
    with raises(ErrorCode.INVALID_PARAMS):
        await list_(stub, page_size=1, page_token=page.next_page_token, tenant="other")
    # A forged token with a made-up fingerprint.
    raw = json.loads(base64.urlsafe_b64decode(page.next_page_token + "=="))
    forged = base64.urlsafe_b64encode(json.dumps([raw[0], raw[1], "0" * 16]).encode()).decode()
    with raises(ErrorCode.INVALID_PARAMS):
        await list_(stub, page_size=1, page_token=forged)
    # The genuine token still works.
    nxt = await list_(stub, page_size=1, page_token=page.next_page_token)
    assert nxt.tasks[0].id != page.tasks[0].id


async def test_include_artifacts_and_history(stub) -> None:
    first = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    await stub.SendMessage(msg("answer", task_id=first.id), metadata=VERSION_MD)
    r = await list_(stub)
    assert r.tasks[0].id == first.id
    assert len(r.tasks[0].artifacts) == 0 and len(r.tasks[0].history) == 3
    r = await list_(stub, include_artifacts=False, history_length=0)
    assert len(r.tasks[0].artifacts) == 0 and len(r.tasks[0].history) == 0
    r = await list_(stub, include_artifacts=True, history_length=1)
    assert r.tasks[0].artifacts[0].parts[0].text == "got: answer"
    assert [m.parts[0].text for m in r.tasks[0].history] == ["answer"]
