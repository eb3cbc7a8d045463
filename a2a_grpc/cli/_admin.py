"""``a2a-grpc admin``: maintenance against a store, no server needed.

* ``admin purge --older-than 30d`` deletes terminal tasks whose status is
  older than that, with their push configs and outbox rows (the one-off of
  ``serve --retain-terminal-tasks``);
* ``admin dead-letters list | show SEQ | redrive SEQ… | drop SEQ…`` handles
  push notifications the dispatcher gave up on.

``--store`` (``A2A_GRPC_STORE``) names the store as for ``serve``; it defaults
to serve's SQLite file. A failure is one ``error: …`` line and exit status 1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from a2a_grpc.cli._ops import DURATION
from a2a_grpc.core.ports import OutboxRecord
from a2a_grpc.protocol import protojson

__all__ = ["admin"]

_T = TypeVar("_T")

_STORE = click.option(
    "--store",
    "store_url",
    default=None,
    envvar="A2A_GRPC_STORE",
    show_envvar=True,
    help="memory, sqlite:///PATH or postgresql://... [default: serve's SQLite file]",
)


def _with_store(store_url: str | None, work: Callable[[Any], Awaitable[_T]]) -> _T:
    """Opens the store, runs ``work(store)``, closes it; errors become ClickException."""
    from sqlalchemy.exc import SQLAlchemyError

    from a2a_grpc.store import default_store_url, open_store

    async def run() -> _T:
        store = open_store(store_url or default_store_url())
        await store.open()
        try:
            return await work(store)
        finally:
            await store.close()

    try:
        return asyncio.run(run())
    except (ValueError, TypeError, OSError, SQLAlchemyError) as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from None


@click.group()
def admin() -> None:
    """Maintain a store: purge old tasks, handle dead letters."""


@admin.command()
@_STORE
@click.option("--older-than", "older_than", type=DURATION, required=True, help="30d, 12h, 90m, 45s …")
def purge(store_url: str | None, older_than: float) -> None:
    """Delete terminal tasks older than --older-than, with their push configs and outbox rows."""
    from a2a_grpc.store._retention import purge as purge_tasks

    n = _with_store(store_url, lambda store: purge_tasks(store, older_than))
    click.echo(f"deleted {n} terminal task{'s' if n != 1 else ''} older than {older_than:g}s")


@admin.group("dead-letters")
def dead_letters() -> None:
    """Push notifications given up on: list, show, redrive (send again) or drop them."""


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _line(rec: OutboxRecord) -> str:
    e = rec.entry
    return (
        f"{rec.seq}  task={e.task_id} config={e.config_id} event={e.event_id} "
        f"attempts={rec.attempts} last={_when(rec.next_attempt_at)}Z error={rec.last_error}"
    )


@dead_letters.command("list")
@_STORE
@click.option("--limit", type=click.IntRange(1), default=100, show_default=True)
@click.option("--after", "after_seq", type=click.IntRange(0), default=0, help="Start after this SEQ.")
def list_cmd(store_url: str | None, limit: int, after_seq: int) -> None:
    """One line per dead letter: SEQ, task, config, event, attempts, last attempt, error."""
    rows: list[OutboxRecord] = _with_store(store_url, lambda s: s.dead_letters(limit, after_seq))
    for rec in rows:
        click.echo(_line(rec))
    click.echo(f"{len(rows)} dead letter{'s' if len(rows) != 1 else ''}", err=True)


@dead_letters.command()
@_STORE
@click.argument("seq", type=click.IntRange(1))
def show(store_url: str | None, seq: int) -> None:
    """One dead letter with the event it carries (ProtoJSON)."""
    from a2a_grpc.types import pb

    rec: OutboxRecord | None = _with_store(store_url, lambda s: s.dead_letter(seq))
    if rec is None:
        raise click.ClickException(f"no dead letter {seq}")
    click.echo(_line(rec))
    event = protojson.to_dict(pb.StreamResponse.FromString(rec.entry.payload))  # NaN: null
    click.echo(json.dumps(event, indent=2, ensure_ascii=False))


def _each(store_url: str | None, seqs: tuple[int, ...], method: str, done: str) -> None:
    async def work(store: Any) -> list[int]:
        return [seq for seq in seqs if not await getattr(store, method)(seq)]

    missing = _with_store(store_url, work)
    for seq in seqs:
        if seq not in missing:
            click.echo(f"{done} {seq}")
    if missing:
        raise click.ClickException("no dead letter " + ", ".join(map(str, missing)))


@dead_letters.command()
@_STORE
@click.argument("seqs", nargs=-1, required=True, type=click.IntRange(1))
def redrive(store_url: str | None, seqs: tuple[int, ...]) -> None:
    """Make dead letters pending again: a running server sends them within a second."""
    _each(store_url, seqs, "redrive_dead_letter", "redriven")


@dead_letters.command()
@_STORE
@click.argument("seqs", nargs=-1, required=True, type=click.IntRange(1))
def drop(store_url: str | None, seqs: tuple[int, ...]) -> None:
    """Delete dead letters."""
    _each(store_url, seqs, "drop_dead_letter", "dropped")
