"""The shared TaskStore suite: every backend must pass every test here."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest
from storekit import (
    ALICE,
    BOB,
    COMPLETED,
    FAILED,
    OTHER_TENANT,
    SUBMITTED,
    WORKING,
    config,
    entry,
    ids,
    make_task,
)

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.store import ListQuery, TaskExistsError, TaskStore, VersionConflictError
from a2a_grpc.types import pb

# --- tasks -------------------------------------------------------------------


async def test_create_and_get_are_copies(store: TaskStore) -> None:
    task = make_task("t1")
    assert await store.update(TaskWrite(task, ALICE)) == 1
    task.status.state = COMPLETED  # the caller's object is not the stored one
    task.history.add(message_id="late")

    got = await store.get("t1", ALICE)
    assert got is not None and got.version == 1
    assert got.task == make_task("t1")
    got.task.artifacts.add(artifact_id="mutated")
    got.task.status.state = pb.TASK_STATE_FAILED

    again = await store.get("t1", ALICE)
    assert again is not None and again.task == make_task("t1")


async def test_get_missing_is_none(store: TaskStore) -> None:
    assert await store.get("nope", ALICE) is None


async def test_a_created_id_is_taken_for_its_owner_only(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    with pytest.raises(TaskExistsError):
        await store.update(TaskWrite(make_task("t1", state=WORKING), ALICE))
    got = await store.get("t1", ALICE)
    assert got is not None and got.version == 1 and got.task.status.state == SUBMITTED


async def test_two_owners_hold_tasks_of_one_id_apart(store: TaskStore) -> None:
    """A task id names a task of one owner (a client-chosen id of the legacy
    dialects): another owner's task of that id is another task, in every
    read and write."""
    assert await store.update(TaskWrite(make_task("t1", context_id="ctx-a"), ALICE)) == 1
    assert (
        await store.update(TaskWrite(make_task("t1", context_id="ctx-o", state=WORKING), OTHER_TENANT)) == 1
    )
    assert await store.update(TaskWrite(make_task("t1", context_id="ctx-a", state=COMPLETED), ALICE, 1)) == 2
    chunk = pb.Artifact(artifact_id="a", parts=[pb.Part(text="theirs")])
    theirs = make_task("t1", context_id="ctx-o", state=WORKING)
    theirs.artifacts.add().CopyFrom(chunk)
    assert await store.update(TaskWrite(theirs, OTHER_TENANT, 1, append=chunk)) == 2
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(make_task("t1", state=FAILED), OTHER_TENANT, 1))
    mine, other = await store.get("t1", ALICE), await store.get("t1", OTHER_TENANT)
    assert mine is not None and other is not None
    assert (mine.task.context_id, mine.task.status.state, mine.version) == ("ctx-a", COMPLETED, 2)
    assert (other.task.context_id, other.task.status.state) == ("ctx-o", WORKING)
    assert other.task.artifacts[-1] == chunk and chunk not in mine.task.artifacts
    assert (await store.list_tasks(ALICE, ListQuery())).total_size == 1
    page = await store.list_tasks(OTHER_TENANT, ListQuery(state=WORKING))
    assert ids(page.tasks) == ["t1"] and page.total_size == 1


async def test_other_owner_sees_nothing(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    await store.update(TaskWrite(make_task("t2"), BOB))
    assert await store.get("t1", BOB) is None
    assert await store.get("t1", OTHER_TENANT) is None
    assert await store.get("t1", Owner()) is None

    page = await store.list_tasks(ALICE, ListQuery())
    assert ids(page.tasks) == ["t1"] and page.total_size == 1
    page = await store.list_tasks(OTHER_TENANT, ListQuery())
    assert page.tasks == [] and page.total_size == 0 and not page.has_more

    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(make_task("t1", state=COMPLETED), BOB, 1))
    got = await store.get("t1", ALICE)
    assert got is not None and got.version == 1 and got.task.status.state == SUBMITTED


async def test_update_is_compare_and_swap(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    assert await store.update(TaskWrite(make_task("t1", state=WORKING), ALICE, 1)) == 2
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(make_task("t1", state=COMPLETED), ALICE, 1))
    got = await store.get("t1", ALICE)
    assert got is not None and got.version == 2 and got.task.status.state == WORKING
    assert await store.update(TaskWrite(make_task("t1", state=COMPLETED), ALICE, 2)) == 3
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(make_task("missing"), ALICE, 1))


async def test_concurrent_updates_one_wins(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    results = await asyncio.gather(
        *(
            store.update(TaskWrite(make_task("t1", state=WORKING, ts_ms=1_700_000_000_000 + i), ALICE, 1))
            for i in range(5)
        ),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["VersionConflictError"] * 4 + ["int"]
    got = await store.get("t1", ALICE)
    assert got is not None and got.version == 2


async def test_update_refreshes_indexed_columns(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("old", ts_ms=1000), ALICE))
    await store.update(TaskWrite(make_task("new", ts_ms=2000), ALICE))
    await store.update(TaskWrite(make_task("old", ts_ms=3000, state=COMPLETED), ALICE, 1))
    page = await store.list_tasks(ALICE, ListQuery())
    assert ids(page.tasks) == ["old", "new"]
    page = await store.list_tasks(ALICE, ListQuery(state=COMPLETED))
    assert ids(page.tasks) == ["old"] and page.total_size == 1
    page = await store.list_tasks(ALICE, ListQuery(state=SUBMITTED))
    assert ids(page.tasks) == ["new"] and page.total_size == 1


# --- ListTasks -------------------------------------------------------------


async def test_list_order_newest_first_ties_by_id_desc(store: TaskStore) -> None:
    for task_id, ts in [("b", 5000), ("a", 5000), ("c", 5000), ("z", 1000), ("y", 9000), ("B", 5000)]:
        await store.update(TaskWrite(make_task(task_id, ts_ms=ts), ALICE))
    page = await store.list_tasks(ALICE, ListQuery())
    # Ties compare ids by code point: "c" > "b" > "a" > "B".
    assert ids(page.tasks) == ["y", "c", "b", "a", "B", "z"]
    assert page.total_size == 6 and not page.has_more
    # Listed tasks are full (artifacts, history) and are copies.
    first = page.tasks[0]
    assert first == make_task("y", ts_ms=9000)
    first.history.clear()
    again = await store.list_tasks(ALICE, ListQuery(page_size=1))
    assert again.tasks[0] == make_task("y", ts_ms=9000)


async def test_list_filters(store: TaskStore) -> None:
    rows = [
        ("t1", 1000, "ctx-a", SUBMITTED),
        ("t2", 2000, "ctx-a", WORKING),
        ("t3", 3000, "ctx-b", WORKING),
        ("t4", 4000, "ctx-a", COMPLETED),
        ("t5", 5000, "ctx-b", COMPLETED),
        ("t6", 4000, "ctx-a", WORKING),
    ]
    for task_id, ts, ctx, state in rows:
        await store.update(TaskWrite(make_task(task_id, ts_ms=ts, context_id=ctx, state=state), ALICE))
    await store.update(TaskWrite(make_task("bob", ts_ms=4500, context_id="ctx-a", state=WORKING), BOB))

    async def listed(**kw: object) -> tuple[list[str], int]:
        page = await store.list_tasks(ALICE, ListQuery(**kw))  # type: ignore[arg-type]
        return ids(page.tasks), page.total_size

    assert await listed(context_id="ctx-a") == (["t6", "t4", "t2", "t1"], 4)
    assert await listed(state=WORKING) == (["t6", "t3", "t2"], 3)
    assert await listed(context_id="ctx-a", state=WORKING) == (["t6", "t2"], 2)
    # Inclusive lower bound on the status timestamp.
    assert await listed(status_timestamp_after_ms=4000) == (["t5", "t6", "t4"], 3)
    assert await listed(status_timestamp_after_ms=4001) == (["t5"], 1)
    assert await listed(status_timestamp_after_ms=3000, state=WORKING) == (["t6", "t3"], 2)
    assert await listed(context_id="ctx-none") == ([], 0)
    assert await listed(state=pb.TASK_STATE_CANCELED) == ([], 0)


@pytest.mark.parametrize(
    "query",
    [
        ListQuery(page_size=4),
        ListQuery(page_size=3, context_id="ctx-1"),
        ListQuery(page_size=2, state=WORKING),
    ],
    ids=["all", "context", "state"],
)
async def test_pagination_walks_every_task_once(store: TaskStore, query: ListQuery) -> None:
    # 23 tasks, many sharing a timestamp so pages split inside a tie.
    for i in range(23):
        await store.update(
            TaskWrite(
                make_task(
                    f"task-{i:02d}",
                    ts_ms=1_700_000_000_000 + (i // 4) * 1000,
                    context_id="ctx-1" if i % 3 else "ctx-2",
                    state=WORKING if i % 2 else SUBMITTED,
                ),
                ALICE,
            )
        )
    full = await store.list_tasks(
        ALICE, ListQuery(page_size=100, context_id=query.context_id, state=query.state)
    )
    assert not full.has_more and full.total_size == len(full.tasks) > query.page_size
    keys = [(t.status.timestamp.ToMilliseconds(), t.id) for t in full.tasks]
    assert keys == sorted(keys, reverse=True)

    walked: list[str] = []
    after: tuple[int, str] | None = None
    pages = 0
    while True:
        q = ListQuery(context_id=query.context_id, state=query.state, page_size=query.page_size, after=after)
        page = await store.list_tasks(ALICE, q)
        pages += 1
        assert page.total_size == full.total_size
        assert 0 < len(page.tasks) <= query.page_size
        walked += ids(page.tasks)
        if not page.has_more:
            break
        assert len(page.tasks) == query.page_size
        last = page.tasks[-1]
        after = (last.status.timestamp.ToMilliseconds(), last.id)
    assert walked == ids(full.tasks)
    assert pages == -(-full.total_size // query.page_size)


async def test_list_cursor_is_strictly_after(store: TaskStore) -> None:
    for task_id in ["a", "b", "c"]:
        await store.update(TaskWrite(make_task(task_id, ts_ms=7000), ALICE))
    page = await store.list_tasks(ALICE, ListQuery(after=(7000, "b")))
    assert ids(page.tasks) == ["a"] and page.total_size == 3 and not page.has_more
    # A cursor on a task that no longer sorts there still splits the order.
    page = await store.list_tasks(ALICE, ListQuery(after=(7000, "bb")))
    assert ids(page.tasks) == ["b", "a"]
    page = await store.list_tasks(ALICE, ListQuery(after=(8000, "")))
    assert ids(page.tasks) == ["c", "b", "a"]


async def test_list_empty_owner(store: TaskStore) -> None:
    page = await store.list_tasks(ALICE, ListQuery())
    assert page.tasks == [] and not page.has_more and page.total_size == 0


# --- push notification configs -------------------------------------------------


async def test_push_config_crud(store: TaskStore) -> None:
    await store.put_push_config(ALICE, config("t1", "c1"))
    await store.put_push_config(ALICE, config("t1", "c2"))
    await store.put_push_config(ALICE, config("t2", "c1"))

    got = await store.get_push_config(ALICE, "t1", "c1")
    assert got == config("t1", "c1")
    assert got is not None
    got.url = "https://mutated.example.com"
    assert await store.get_push_config(ALICE, "t1", "c1") == config("t1", "c1")
    assert await store.get_push_config(ALICE, "t1", "nope") is None
    assert await store.get_push_config(BOB, "t1", "c1") is None
    assert await store.get_push_config(OTHER_TENANT, "t1", "c1") is None

    # Replacing keeps the config's place in creation order.
    await store.put_push_config(ALICE, config("t1", "c1", url="https://new.example.com/hook"))
    listed = await store.list_push_configs(ALICE, "t1")
    assert [c.id for c in listed] == ["c1", "c2"]
    assert listed[0].url == "https://new.example.com/hook"

    assert await store.count_push_configs(ALICE) == 3
    assert await store.count_push_configs(ALICE, "t1") == 2
    assert await store.count_push_configs(ALICE, "t3") == 0
    assert await store.count_push_configs(BOB) == 0
    assert await store.list_push_configs(BOB, "t1") == []

    # The push dispatcher's lookup (an outbox entry names its owner).
    async def lookup(task_id: str, config_id: str, owner: Owner = ALICE) -> Any:
        target = await store.get_push_target(owner, task_id, config_id)
        return None if target is None else target[0]

    assert (await lookup("t1", "c1")).url == "https://new.example.com/hook"
    assert await lookup("t1", "nope") is None
    assert await lookup("t1", "c1", BOB) is None

    assert await store.delete_push_config(BOB, "t1", "c1") is False
    assert await store.delete_push_config(ALICE, "t1", "c1") is True
    assert await store.delete_push_config(ALICE, "t1", "c1") is False
    assert await store.get_push_config(ALICE, "t1", "c1") is None
    assert await lookup("t1", "c1") is None
    assert await store.delete_push_config(ALICE, "t2", "c1") is True
    assert await lookup("t2", "c1") is None
    assert [c.id for c in await store.list_push_configs(ALICE, "t1")] == ["c2"]
    assert await store.count_push_configs(ALICE) == 1


async def test_push_config_paging(store: TaskStore) -> None:
    # Creation order, not id order.
    order = ["k", "c", "x", "a", "m", "b", "z"]
    for cid in order:
        await store.put_push_config(ALICE, config("t1", cid))
    await store.put_push_config(ALICE, config("t2", "other"))
    assert [c.id for c in await store.list_push_configs(ALICE, "t1")] == order

    walked: list[str] = []
    after: str | None = None
    while True:
        page = await store.list_push_configs(ALICE, "t1", limit=3, after_id=after)
        walked += [c.id for c in page]
        if len(page) < 3:
            break
        after = page[-1].id
    assert walked == order
    assert [c.id for c in await store.list_push_configs(ALICE, "t1", after_id="a")] == ["m", "b", "z"]
    assert await store.list_push_configs(ALICE, "t1", after_id="z") == []
    assert await store.list_push_configs(ALICE, "t1", after_id="unknown") == []
    assert await store.list_push_configs(ALICE, "t1", limit=0) == []


# --- push outbox ---------------------------------------------------------------


async def test_outbox_written_with_update_and_not_on_conflict(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    await store.update(
        TaskWrite(
            make_task("t1", state=WORKING), ALICE, 1, outbox=[entry("t1", "c1", 2), entry("t1", "c2", 2)]
        )
    )
    assert await store.outbox_count("pending") == 2
    with pytest.raises(VersionConflictError):
        await store.update(
            TaskWrite(make_task("t1", state=COMPLETED), ALICE, 1, outbox=[entry("t1", "c1", 3)])
        )
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(make_task("t1", state=COMPLETED), BOB, 2, outbox=[entry("t1", "c1", 3)]))
    assert await store.outbox_count("pending") == 2
    due = await store.outbox_due(time.time() + 1, 10)
    assert [r.entry for r in due] == [entry("t1", "c1", 2), entry("t1", "c2", 2)]
    assert all(r.state == "pending" and r.attempts == 0 and r.last_error == "" for r in due)


async def test_outbox_due_order_and_marking(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    for version in range(1, 5):
        await store.update(
            TaskWrite(make_task("t1"), ALICE, version, outbox=[entry("t1", "c1", version + 1)])
        )
    now = time.time() + 1
    due = await store.outbox_due(now, 10)
    assert [r.entry.event_id for r in due] == ["t1:2", "t1:3", "t1:4", "t1:5"]
    seqs = [r.seq for r in due]
    assert seqs == sorted(seqs) and len(set(seqs)) == 4
    assert [r.seq for r in await store.outbox_due(now, 2)] == seqs[:2]
    assert await store.outbox_due(0.0, 10) == []  # created after the epoch: not due yet

    await store.outbox_mark(
        seqs[0], state="pending", attempts=1, next_attempt_at=now + 60, last_error="HTTP 503"
    )
    await store.outbox_mark(seqs[1], state="delivered", attempts=1, next_attempt_at=now)
    await store.outbox_mark(seqs[2], state="dead", attempts=7, next_attempt_at=now, last_error="gave up")
    assert [r.seq for r in await store.outbox_due(now, 10)] == [seqs[3]]
    later = await store.outbox_due(now + 60, 10)  # inclusive: next_attempt_at == now
    assert [r.seq for r in later] == [seqs[0], seqs[3]]
    assert later[0].attempts == 1 and later[0].last_error == "HTTP 503"
    assert later[0].next_attempt_at == pytest.approx(now + 60)
    assert await store.outbox_count("pending") == 2
    assert await store.outbox_count("delivered") == 1
    assert await store.outbox_count("dead") == 1
    # A row can be put back in the queue.
    await store.outbox_mark(seqs[2], state="pending", attempts=7, next_attempt_at=now)
    assert [r.seq for r in await store.outbox_due(now, 10)] == [seqs[2], seqs[3]]
    assert await store.outbox_count("dead") == 0


async def test_delete_push_config_drops_its_pending_rows(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    await store.put_push_config(ALICE, config("t1", "c1"))
    await store.put_push_config(ALICE, config("t1", "c2"))
    await store.update(
        TaskWrite(make_task("t1"), ALICE, 1, outbox=[entry("t1", "c1", 2), entry("t1", "c2", 2)])
    )
    await store.update(
        TaskWrite(make_task("t1"), ALICE, 2, outbox=[entry("t1", "c1", 3), entry("t1", "c2", 3)])
    )
    now = time.time() + 1
    first = (await store.outbox_due(now, 1))[0]
    assert first.entry.config_id == "c1"
    await store.outbox_mark(first.seq, state="delivered", attempts=1, next_attempt_at=now)

    assert await store.delete_push_config(ALICE, "t1", "c1")
    due = await store.outbox_due(now, 10)
    assert [(r.entry.config_id, r.entry.event_id) for r in due] == [("c2", "t1:2"), ("c2", "t1:3")]
    assert await store.outbox_count("pending") == 2
    assert await store.outbox_count("delivered") == 1


async def test_open_is_idempotent(store: TaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    await store.open()
    assert await store.get("t1", ALICE) is not None


async def test_list_matches_a_brute_force_model_after_many_updates(store: TaskStore) -> None:
    # Indexes (sorted lists in memory, SQL indexes) must follow every update of
    # the indexed columns: compare with sorting what get() returns.
    rng = random.Random(20261130)
    contexts, states = ["ctx-a", "ctx-b", "ctx-c"], [SUBMITTED, WORKING, COMPLETED]
    versions: dict[str, int] = {}
    for i in range(40):
        task_id = f"t{i:02d}"
        await store.update(TaskWrite(make_task(task_id, ts_ms=rng.randrange(10) * 1000), ALICE))
        versions[task_id] = 1
    for _ in range(120):
        task_id = rng.choice(sorted(versions))
        task = make_task(
            task_id, ts_ms=rng.randrange(10) * 1000, context_id=rng.choice(contexts), state=rng.choice(states)
        )
        versions[task_id] = await store.update(TaskWrite(task, ALICE, versions[task_id]))

    current = [got.task for t in sorted(versions) if (got := await store.get(t, ALICE)) is not None]

    def model(context_id: str, state: int, since: int | None) -> list[str]:
        keep = [
            t
            for t in current
            if (not context_id or t.context_id == context_id)
            and (not state or t.status.state == state)
            and (since is None or t.status.timestamp.ToMilliseconds() >= since)
        ]
        keep.sort(key=lambda t: (t.status.timestamp.ToMilliseconds(), t.id), reverse=True)
        return ids(keep)

    for context_id in ["", *contexts]:
        for state in [0, *states]:
            for since in [None, 5000]:
                want = model(context_id, state, since)
                walked: list[str] = []
                after: tuple[int, str] | None = None
                while True:
                    q = ListQuery(
                        context_id=context_id,
                        state=state,
                        status_timestamp_after_ms=since,
                        page_size=7,
                        after=after,
                    )
                    page = await store.list_tasks(ALICE, q)
                    assert page.total_size == len(want)
                    walked += ids(page.tasks)
                    if not page.has_more:
                        break
                    after = (page.tasks[-1].status.timestamp.ToMilliseconds(), page.tasks[-1].id)
                assert walked == want, (context_id, state, since)


async def test_total_size_matches_a_brute_force_count_for_every_filter(store: TaskStore) -> None:
    # totalSize comes from maintained counts for no filter, one context or one
    # state (SQL store), and from a COUNT for combined filters: either way it
    # must equal counting the tasks, through creates, state and context
    # changes, rejected duplicates and lost compare-and-swaps, per owner.
    rng = random.Random(6)
    owners = [ALICE, BOB, OTHER_TENANT]
    contexts = ["ctx-a", "ctx-b", "ctx-c"]
    states = [SUBMITTED, WORKING, pb.TASK_STATE_INPUT_REQUIRED, COMPLETED, pb.TASK_STATE_FAILED]
    current: dict[str, tuple[Owner, pb.Task, int]] = {}

    def brute(owner: Owner, context_id: str, state: int, since: int | None) -> int:
        return sum(
            1
            for o, t, _v in current.values()
            if o == owner
            and (not context_id or t.context_id == context_id)
            and (not state or t.status.state == state)
            and (since is None or t.status.timestamp.ToMilliseconds() >= since)
        )

    async def check() -> None:
        for owner in owners:
            for context_id in ["", *contexts, "ctx-none"]:
                for state in [0, *states]:
                    for since in [None, 4000]:
                        q = ListQuery(
                            context_id=context_id, state=state, status_timestamp_after_ms=since, page_size=1
                        )
                        page = await store.list_tasks(owner, q)
                        assert page.total_size == brute(owner, context_id, state, since), (
                            owner,
                            context_id,
                            state,
                            since,
                        )

    for i in range(30):
        owner = owners[i % 3]
        task = make_task(
            f"t{i:02d}",
            ts_ms=rng.randrange(8) * 1000,
            context_id=rng.choice(contexts),
            state=rng.choice(states),
        )
        assert await store.update(TaskWrite(task, owner)) == 1
        current[task.id] = (owner, task, 1)
    await check()

    # An id its owner holds is rejected and counts nothing.
    with pytest.raises(TaskExistsError):
        await store.update(TaskWrite(make_task("t00", context_id="ctx-c", state=WORKING), current["t00"][0]))
    for _ in range(60):
        task_id = rng.choice(sorted(current))
        owner, _old, version = current[task_id]
        task = make_task(
            task_id, ts_ms=rng.randrange(8) * 1000, context_id=rng.choice(contexts), state=rng.choice(states)
        )
        if rng.random() < 0.2:  # a stale version or the wrong owner: nothing moves
            with pytest.raises(VersionConflictError):
                await store.update(
                    TaskWrite(task, owner if rng.random() < 0.5 else Owner("x", "y"), version + 1)
                )
            continue
        current[task_id] = (owner, task, await store.update(TaskWrite(task, owner, version)))
    await check()
