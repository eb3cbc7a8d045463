"""Delivery to a real webhook receiver on 127.0.0.1 (issue 5 §2, §3, §5)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.push import PushDispatcher
from a2a_grpc.push._dispatcher import _retry_after_seconds
from a2a_grpc.store import TaskStore, open_store
from a2a_grpc.types import pb
from tests.push.conftest import OWNER, Receiver, add_config, emit, new_task

Factory = Callable[..., PushDispatcher]

FAST: dict[str, Any] = {
    "allow": ["127.0.0.1"],
    "timeout_seconds": 5.0,
    "base_backoff_seconds": 0.01,
    "max_backoff_seconds": 0.05,
    "poll_interval_seconds": 0.05,
}


@pytest.fixture
async def dispatchers() -> AsyncIterator[Factory]:
    made: list[PushDispatcher] = []

    def make(store: TaskStore, **kw: Any) -> PushDispatcher:
        d = PushDispatcher(store, **{**FAST, **kw})
        made.append(d)
        return d

    yield make
    for d in made:
        await d.stop()


async def settle(store: TaskStore, timeout: float = 10.0) -> None:
    """Waits until no outbox row is pending."""
    deadline = time.monotonic() + timeout
    while await store.outbox_count("pending"):
        assert time.monotonic() < deadline, "outbox still has pending rows"
        await asyncio.sleep(0.02)


def event_ids(hits: list[Any]) -> list[str]:
    return [h.headers["A2A-Notification-Id"] for h in hits]


async def test_events_arrive_in_order_with_headers_and_protojson(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    task_id = await new_task(store)
    cfg = pb.TaskPushNotificationConfig(
        token="tok-123", authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="s3cret")
    )
    await add_config(
        store, task_id, receiver.url("/hook"), token=cfg.token, authentication=cfg.authentication
    )
    d = dispatchers(store)
    await d.start()
    ids = await emit(store, task_id, n=10)
    ids += await emit(store, task_id, n=1, state=pb.TASK_STATE_COMPLETED)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 11)
    await settle(store)
    assert event_ids(receiver.hits) == ids
    first = receiver.hits[0]
    assert first.headers["Content-Type"] == "application/a2a+json"
    assert first.headers["Authorization"] == "Bearer s3cret"
    assert first.headers["X-A2A-Notification-Token"] == "tok-123"
    assert first.body["statusUpdate"]["taskId"] == task_id  # ProtoJSON: camelCase
    assert first.body["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"  # enum names
    assert set(first.body) == {"statusUpdate"}
    assert receiver.hits[-1].body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert await store.outbox_count("delivered") == 11
    assert d.stats["delivered"] == 11 and d.stats["attempts"] == 11 and d.stats["dead"] == 0


async def test_each_config_gets_every_event_and_no_auth_headers_when_unset(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/a"))
    await add_config(store, task_id, receiver.url("/b"), token="only-token")
    d = dispatchers(store)
    await d.start()
    ids = await emit(store, task_id, n=3)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 6)
    assert event_ids(receiver.on("/a")) == ids
    assert event_ids(receiver.on("/b")) == ids
    a, b = receiver.on("/a")[0], receiver.on("/b")[0]
    assert "Authorization" not in a.headers and "X-A2A-Notification-Token" not in a.headers
    assert b.headers["X-A2A-Notification-Token"] == "only-token" and "Authorization" not in b.headers


async def test_fails_twice_then_succeeds(store: TaskStore, receiver: Receiver, dispatchers: Factory) -> None:
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/flaky"))
    receiver.scripts["/flaky"] = [503, 500]
    d = dispatchers(store)
    await d.start()
    ids = await emit(store, task_id, n=2)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 4)
    await settle(store)
    # the same notification id on every retry; the second event waits for the first
    assert event_ids(receiver.hits) == [ids[0], ids[0], ids[0], ids[1]]
    assert d.stats == {"attempts": 4, "delivered": 2, "retried": 2, "dead": 0, "dropped": 0}
    assert await store.outbox_count("delivered") == 2


async def test_always_failing_receiver_gives_a_dead_letter_after_the_limit(
    store: TaskStore, receiver: Receiver, dispatchers: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    task_id = await new_task(store)
    cfg_id = await add_config(store, task_id, receiver.url("/down"))
    receiver.scripts["/down"] = [502, 503, 504, 500]  # 4 failures, then 200
    d = dispatchers(store, max_attempts=3)
    await d.start()
    caplog.set_level(logging.DEBUG, logger="a2a_grpc.push")
    ids = await emit(store, task_id, n=2)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 5)
    await settle(store)
    # event 1: three attempts then dead; event 2 is not held back by a dead event
    assert event_ids(receiver.hits) == [ids[0]] * 3 + [ids[1]] * 2
    assert await store.outbox_count("dead") == 1
    assert await store.outbox_count("delivered") == 1
    assert d.stats["dead"] == 1 and d.stats["retried"] == 3 and d.stats["delivered"] == 1
    dead = [r for r in caplog.records if "dead letter" in r.getMessage()]
    assert len(dead) == 1 and dead[0].levelno == logging.WARNING
    assert task_id in dead[0].getMessage() and cfg_id in dead[0].getMessage()


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 301, 302, 307])
async def test_client_errors_and_redirects_are_not_retried(
    store: TaskStore, receiver: Receiver, dispatchers: Factory, status: int
) -> None:
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/no"))
    receiver.always["/no"] = (status, {"Location": receiver.url("/elsewhere")})
    d = dispatchers(store)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 1)
    await settle(store)
    await asyncio.sleep(0.15)  # several poll intervals: no second attempt, no redirect followed
    assert [h.path for h in receiver.hits] == ["/no"]
    assert await store.outbox_count("dead") == 1
    assert d.stats["retried"] == 0 and d.stats["dead"] == 1


@pytest.mark.parametrize("status", [408, 429])
async def test_408_and_429_are_retried(
    store: TaskStore, receiver: Receiver, dispatchers: Factory, status: int
) -> None:
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/busy"))
    receiver.scripts["/busy"] = [status]
    d = dispatchers(store)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 2)
    await settle(store)
    assert await store.outbox_count("delivered") == 1


async def test_retry_after_is_honoured(store: TaskStore, receiver: Receiver, dispatchers: Factory) -> None:
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/slow-down"))
    receiver.scripts["/slow-down"] = [(429, {"Retry-After": "1"})]
    d = dispatchers(store, max_backoff_seconds=5.0)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 2, timeout=10)
    gap = receiver.hits[1].at - receiver.hits[0].at
    assert gap >= 0.9, f"retried after {gap:.2f}s despite Retry-After: 1"


def test_retry_after_forms() -> None:
    assert _retry_after_seconds("7") == 7.0
    assert _retry_after_seconds(None) is None
    assert _retry_after_seconds("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    got = _retry_after_seconds(later)
    assert got is not None and 25 <= got <= 31
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert _retry_after_seconds(past) == 0.0


async def test_a_pair_in_backoff_does_not_hold_up_other_pairs_nor_reorder_its_own(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    slow_task = await new_task(store)
    await add_config(store, slow_task, receiver.url("/slow"))
    fast_task = await new_task(store)
    await add_config(store, fast_task, receiver.url("/fast"))
    receiver.scripts["/slow"] = [(503, {"Retry-After": "1"})]
    d = dispatchers(store, max_backoff_seconds=5.0)
    await d.start()
    slow_ids = await emit(store, slow_task, n=1)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.on("/slow")) == 1)
    # while /slow's first event waits for its retry, new events are queued on both
    slow_ids += await emit(store, slow_task, n=2)
    fast_ids = await emit(store, fast_task, n=3)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.on("/fast")) == 3)
    assert len(receiver.on("/slow")) == 1  # later slow events did not jump the queue
    await receiver.wait_for(lambda: len(receiver.on("/slow")) == 4)
    assert event_ids(receiver.on("/slow")) == [slow_ids[0], *slow_ids]
    assert event_ids(receiver.on("/fast")) == fast_ids
    assert receiver.on("/fast")[-1].at < receiver.on("/slow")[1].at


async def test_many_pairs_are_delivered_concurrently_and_in_order(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    tasks = [await new_task(store) for _ in range(6)]
    for i, t in enumerate(tasks):
        await add_config(store, t, receiver.url(f"/p{i}"))
    d = dispatchers(store, max_concurrency=4)
    await d.start()
    expected = {}
    for _ in range(5):  # interleave the tasks' updates
        for i, t in enumerate(tasks):
            expected.setdefault(f"/p{i}", []).extend(await emit(store, t, n=1))
        d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 30)
    for path, ids in expected.items():
        assert event_ids(receiver.on(path)) == ids


async def test_deleted_config_gets_nothing(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    task_id = await new_task(store)
    keep = await add_config(store, task_id, receiver.url("/keep"))
    gone = await add_config(store, task_id, receiver.url("/gone"))
    await emit(store, task_id, n=2)
    assert await store.delete_push_config(OWNER, task_id, gone)
    d = dispatchers(store)
    await d.start()
    await receiver.wait_for(lambda: len(receiver.hits) == 2)
    await settle(store)
    assert {h.path for h in receiver.hits} == {"/keep"}
    assert keep


async def test_pending_deliveries_resume_after_a_restart(
    tmp_path: Path, receiver: Receiver, dispatchers: Factory
) -> None:
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    store = open_store(url)
    await store.open()
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/r"))
    receiver.always["/r"] = 503
    first = dispatchers(store, max_backoff_seconds=0.3, base_backoff_seconds=0.2)
    await first.start()
    ids = await emit(store, task_id, n=3)
    first.wake()
    await receiver.wait_for(lambda: len(receiver.hits) >= 1)
    await first.stop()
    ids += await emit(store, task_id, n=2)  # queued while no dispatcher runs
    await store.close()
    assert {h.headers["A2A-Notification-Id"] for h in receiver.hits} == {ids[0]}

    receiver.always.clear()
    reopened = open_store(url)
    await reopened.open()
    try:
        assert await reopened.outbox_count("pending") == 5
        second = dispatchers(reopened)
        await second.start()
        await receiver.wait_for(lambda: len(set(event_ids(receiver.hits))) == 5)
        await settle(reopened)
        delivered = [h for h in receiver.hits if h.path == "/r"]
        # the first event is retried first: nothing overtakes it across the restart
        order = list(dict.fromkeys(event_ids(delivered)))
        assert order == ids
        assert await reopened.outbox_count("delivered") == 5
    finally:
        await reopened.close()


async def test_order_survives_a_restart_while_the_head_waits_for_its_retry(
    tmp_path: Path, receiver: Receiver, dispatchers: Factory
) -> None:
    url = f"sqlite:///{tmp_path / 'parked.db'}"
    store = open_store(url)
    await store.open()
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/p"))
    receiver.scripts["/p"] = [(503, {"Retry-After": "1"})]
    first = dispatchers(store, max_backoff_seconds=5.0)
    await first.start()
    ids = await emit(store, task_id, n=1)
    first.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 1)
    await asyncio.sleep(0.1)  # the failure is recorded: head parked ~1 s ahead
    await first.stop()
    ids += await emit(store, task_id, n=2)  # due now, behind a head that is not
    second = dispatchers(store, max_backoff_seconds=5.0)
    await second.start()
    await receiver.wait_for(lambda: len(receiver.hits) == 4, timeout=10)
    assert event_ids(receiver.hits) == [ids[0], *ids]
    await store.close()


async def test_duplicate_sends_carry_the_same_notification_id(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    """A delivery cut short (stop during the POST) is sent again with the same
    id, so a receiver that remembers ids processes each event once."""
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/dup"))
    receiver.delay["/dup"] = 2.0
    first = dispatchers(store)
    await first.start()
    ids = await emit(store, task_id, n=2)
    first.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 1)
    await first.stop()  # the receiver got the POST; we never saw its answer
    del receiver.delay["/dup"]
    second = dispatchers(store)
    await second.start()
    await receiver.wait_for(lambda: len(receiver.hits) == 3)
    await settle(store)
    got = event_ids(receiver.hits)
    assert got == [ids[0], ids[0], ids[1]]
    assert len(dict.fromkeys(got)) == 2  # what an idempotent receiver keeps


async def test_name_resolving_to_a_blocked_address_at_delivery_is_a_dead_letter(
    store: TaskStore, receiver: Receiver, dispatchers: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    # the config was stored while 'localhost' was trusted; the dispatcher now is not
    task_id = await new_task(store)
    await add_config(store, task_id, f"http://localhost:{receiver.port}/x")
    d = dispatchers(store, allow=[])
    caplog.set_level(logging.INFO, logger="a2a_grpc.push")
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await settle(store)
    assert receiver.hits == []
    assert await store.outbox_count("dead") == 1
    assert any("SSRF guard at delivery" in r.getMessage() for r in caplog.records)


async def test_dns_rebinding_is_caught_at_connect_time(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    """The name is public when the config is created and loopback when the
    POST connects: the resolver aiohttp uses checks again, so nothing is sent."""
    answers = ["93.184.216.34", "127.0.0.1"]

    async def rebinding(host: str, port: int, family: int) -> list[tuple[Any, ...]]:
        addr = answers.pop(0) if len(answers) > 1 else answers[0]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (addr, port))]

    d = dispatchers(store, allow=[], getaddrinfo=rebinding)
    task_id = await new_task(store)
    cfg = pb.TaskPushNotificationConfig(task_id=task_id, id="c1", url=f"http://rebind.test:{receiver.port}/r")
    await d.check_config(cfg)  # passes: public address
    await store.put_push_config(OWNER, cfg)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await settle(store)
    assert receiver.hits == []
    assert await store.outbox_count("dead") == 1


async def test_hostnames_connect_to_the_checked_address_with_the_right_host_header(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    seen: list[str] = []

    async def dns(host: str, port: int, family: int) -> list[tuple[Any, ...]]:
        seen.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    d = dispatchers(store, allow=["127.0.0.1"], getaddrinfo=dns)
    task_id = await new_task(store)
    await add_config(store, task_id, f"http://hooks.test:{receiver.port}/named")
    await d.start()
    await emit(store, task_id, n=2)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 2)
    assert receiver.hits[0].headers["Host"] == f"hooks.test:{receiver.port}"
    assert seen and set(seen) == {"hooks.test"}
    assert ipaddress.ip_address("127.0.0.1")


async def test_connection_refused_is_retried_then_dead(store: TaskStore, dispatchers: Factory) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    task_id = await new_task(store)
    await add_config(store, task_id, f"http://127.0.0.1:{port}/nobody")
    d = dispatchers(store, max_attempts=2)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await settle(store)
    assert await store.outbox_count("dead") == 1
    assert d.stats["attempts"] == 2 and d.stats["retried"] == 1


async def test_timeouts_are_retried(store: TaskStore, receiver: Receiver, dispatchers: Factory) -> None:
    task_id = await new_task(store)
    await add_config(store, task_id, receiver.url("/hang"))
    receiver.delay["/hang"] = 1.0
    d = dispatchers(store, timeout_seconds=0.2, max_attempts=2)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await settle(store)
    assert len(receiver.hits) == 2
    assert await store.outbox_count("dead") == 1


async def test_logs_never_contain_credentials(
    store: TaskStore, receiver: Receiver, dispatchers: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    task_id = await new_task(store)
    await add_config(
        store,
        task_id,
        receiver.url("/secret?key=url-secret"),
        token="token-secret",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="cred-secret"),
    )
    receiver.scripts["/secret"] = [500, 400]
    caplog.set_level(logging.DEBUG, logger="a2a_grpc.push")
    d = dispatchers(store)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await settle(store)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert task_id in text and "attempt" in text and "dead letter" in text
    for secret in ("url-secret", "token-secret", "cred-secret"):
        assert secret not in text


async def test_wake_before_start_and_after_stop_is_harmless(store: TaskStore, dispatchers: Factory) -> None:
    d = dispatchers(store)
    d.wake()
    await d.start()
    await d.start()
    await d.stop()
    d.wake()
    await d.stop()


async def test_configs_of_any_tenant_and_user_are_delivered(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    """An outbox row names its task's owner: the dispatcher finds that
    owner's config, whoever it is."""
    from a2a_grpc.context import Owner

    owner = Owner(tenant="acme", user="alice")
    task_id = await new_task(store, owner)
    await add_config(store, task_id, receiver.url("/tenant"), owner=owner)
    d = dispatchers(store)
    await d.start()
    ids = await emit(store, task_id, n=2, owner=owner)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 2)
    assert event_ids(receiver.hits) == ids
    assert d.stats["dropped"] == 0


@pytest.mark.parametrize("yields", [0, 1, 2, 3])
async def test_stop_never_hangs_when_a_wake_lands_with_it(dispatchers: Factory, yields: int) -> None:
    from a2a_grpc.store._memory import InMemoryTaskStore

    for _ in range(10):
        d = dispatchers(InMemoryTaskStore(), poll_interval_seconds=5.0)
        await d.start()
        await asyncio.sleep(0.01)  # the loop sleeps, waiting for a wake
        d.wake()
        for _ in range(yields):
            await asyncio.sleep(0)
        async with asyncio.timeout(3):
            await d.stop()


async def test_deleting_a_config_whose_event_waits_for_a_retry_leaves_the_loop_idle(
    store: TaskStore, receiver: Receiver, dispatchers: Factory
) -> None:
    task_id = await new_task(store)
    cfg_id = await add_config(store, task_id, receiver.url("/retry-then-gone"))
    receiver.always["/retry-then-gone"] = (503, {"Retry-After": "1"})
    calls = 0
    real_due = store.outbox_due

    async def counting_due(now: float, limit: int) -> Any:
        nonlocal calls
        calls += 1
        return await real_due(now, limit)

    store.outbox_due = counting_due  # type: ignore[method-assign]
    d = dispatchers(store, max_backoff_seconds=5.0, poll_interval_seconds=0.1)
    await d.start()
    await emit(store, task_id, n=1)
    d.wake()
    await receiver.wait_for(lambda: len(receiver.hits) == 1)
    assert await store.delete_push_config(OWNER, task_id, cfg_id)
    await asyncio.sleep(1.5)  # past the retry time: nothing left to send
    calls_before = calls
    await asyncio.sleep(0.5)
    assert calls - calls_before < 20, "the delivery loop spins"
    assert len(receiver.hits) == 1
    assert not d._parked
