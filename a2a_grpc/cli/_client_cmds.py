"""The client commands of ``a2a-grpc``: ``card``, ``send``, ``task …``, ``push …``.

Each command takes the agent's base URL, fetches its Agent Card and talks to
the first interface the card offers (``--binding`` restricts it to one
binding). Output is rendered with ``rich``; ``--json`` prints ProtoJSON
instead (one object, or one object per line for streams).

Exit codes: 0 success; 1 an A2A error (``error: REASON: message`` on stderr,
e.g. ``error: TASK_NOT_FOUND: task x not found``; ``STREAM_TRUNCATED`` for a
stream cut before the task was terminal or interrupted); 2 bad usage; 3
``send`` finished but the task is FAILED or REJECTED; 4 ``task subscribe``
found the task terminal already (it is shown instead of a stream); 130
interrupted.

URL is the agent's base URL (its card is at ``/.well-known/agent-card.json``)
or, for a deployment that serves gRPC only, ``grpc://HOST:PORT`` (no card is
fetched; the server's reflection confirms it serves A2A).
"""

from __future__ import annotations

import asyncio
import functools
import json
import mimetypes
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from google.protobuf import message as _message
from rich.console import Console
from rich.json import JSON
from rich.markup import escape
from rich.table import Table

from a2a_grpc.agents import DataView
from a2a_grpc.cli._tls_opts import client_tls_options
from a2a_grpc.client import A2AClient, Credentials, StreamTruncatedError
from a2a_grpc.client._auth import API_KEY_ENV, TOKEN_ENV
from a2a_grpc.client._card import BINDINGS, fetch_card
from a2a_grpc.core._executor import data_part, file_part
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import is_terminal, pb

__all__ = ["register"]

T = TypeVar("T")

EXIT_A2A_ERROR = 1
EXIT_TASK_FAILED = 3
EXIT_ALREADY_FINAL = 4
#: Media types the ``--file`` option sets where ``mimetypes`` has none (or a
#: different one): review agents expect diffs as text/x-diff.
FILE_TYPES = {".diff": "text/x-diff", ".patch": "text/x-diff"}

_STATE_STYLE = {
    pb.TASK_STATE_COMPLETED: "bold green",
    pb.TASK_STATE_FAILED: "bold red",
    pb.TASK_STATE_REJECTED: "bold red",
    pb.TASK_STATE_CANCELED: "yellow",
    pb.TASK_STATE_INPUT_REQUIRED: "bold magenta",
    pb.TASK_STATE_AUTH_REQUIRED: "bold magenta",
    pb.TASK_STATE_WORKING: "cyan",
    pb.TASK_STATE_SUBMITTED: "cyan",
}
#: Styles of table cells by level (:class:`~a2a_grpc.agents.DataView.Cell`).
_LEVEL_STYLE = {"error": "bold red", "warning": "yellow", "note": "dim"}


# --------------------------------------------------------------------- plumbing
class Options:
    """The options every client command shares."""

    def __init__(
        self,
        url: str,
        binding: str | None,
        as_json: bool,
        timeout: float,
        headers: Sequence[str],
        extensions: Sequence[str],
        tls: Any = None,
        credentials: Credentials | None = None,
    ) -> None:
        self.url = url
        self.tls = tls
        self.credentials = credentials
        self.bindings = (binding,) if binding else tuple(BINDINGS)
        self.as_json = as_json
        self.timeout = timeout
        self.headers = _parse_headers(headers)
        self.extensions = tuple(extensions)
        self.out = make_console()

    async def client(self) -> A2AClient:
        return await A2AClient.connect(
            self.url,
            bindings=self.bindings,
            timeout=self.timeout,
            headers=self.headers,
            extensions=self.extensions,
            tls=self.tls,
            credentials=self.credentials,
        )


def make_console(*, stderr: bool = False) -> Console:
    """A rich console; when output goes to a pipe or file (and ``COLUMNS`` is
    unset) tables get 160 columns instead of 80, so ids are not cut."""
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not stream.isatty() and "COLUMNS" not in os.environ:
        width = 160
    return Console(file=stream, highlight=False, soft_wrap=True, width=width)


def _parse_headers(values: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r} is not 'Name: value'", param_hint="--header")
        out[name.strip()] = rest.strip()
    return out


def credential_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--api-key`` and ``--token``: the caller's credentials (docs/auth.md)."""
    fn = click.option(
        "--token",
        envvar=TOKEN_ENV,
        show_envvar=True,
        default="",
        help="Bearer token (JWT), sent as Authorization: Bearer when the card asks for one.",
    )(fn)
    return click.option(
        "--api-key",
        envvar=API_KEY_ENV,
        show_envvar=True,
        default="",
        help="API key, sent the way the card's securitySchemes ask (X-API-Key).",
    )(fn)


def client_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds URL and the shared options, and passes an :class:`Options` as
    ``opts`` to the command."""

    @click.option(
        "--binding",
        type=click.Choice(sorted(BINDINGS)),
        default=None,
        help="Use only this binding (default: the card's first reachable interface).",
    )
    @click.option(
        "--json", "as_json", is_flag=True, help="Print ProtoJSON (one object per line for streams)."
    )
    @click.option(
        "--timeout",
        type=float,
        default=120.0,
        show_default=True,
        help="Seconds to wait for each call (streams are not limited).",
    )
    @click.option(
        "-H",
        "--header",
        "headers",
        multiple=True,
        metavar="'NAME: VALUE'",
        help="Extra header, e.g. Authorization.",
    )
    @click.option("--extension", "extensions", multiple=True, metavar="URI", help="Request an A2A extension.")
    @credential_options
    @click.argument("url")
    @client_tls_options
    @functools.wraps(fn)
    def wrapper(
        url: str,
        binding: str | None,
        as_json: bool,
        timeout: float,
        headers: tuple[str, ...],
        extensions: tuple[str, ...],
        api_key: str,
        token: str,
        tls: Any = None,
        **kwargs: Any,
    ) -> Any:
        opts = Options(url, binding, as_json, timeout, headers, extensions, tls, Credentials(api_key, token))
        return fn(opts, **kwargs)

    return wrapper


def _fail(reason: str, message: str, details: Iterable[str] = ()) -> NoReturn:
    err = make_console(stderr=True)
    err.print(f"[bold red]error:[/] {escape(reason)}: {escape(message)}")
    for line in details:
        if line not in message:  # a field violation is often the message itself
            err.print(f"  {escape(line)}")
    sys.exit(EXIT_A2A_ERROR)


def run(coro: Awaitable[T]) -> T:
    """Runs a command's coroutine; an A2A error (or any other failure) is
    printed as ``error: REASON: message`` and exits 1, never a traceback."""
    try:
        return asyncio.run(coro)  # type: ignore[arg-type]
    except StreamTruncatedError as exc:
        _fail(StreamTruncatedError.reason, exc.message)
    except A2AError as exc:
        _fail(exc.code.reason, exc.message, (f"{v.field}: {v.description}" for v in exc.field_violations))
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except (click.ClickException, click.exceptions.Exit, SystemExit):
        raise
    except Exception as exc:
        _fail("INTERNAL", f"{type(exc).__name__}: {exc}")


def print_json(opts: Options, msg: _message.Message, *, compact: bool = False) -> None:
    data = protojson.to_dict(msg)
    click.echo(protojson.dumps(data) if compact else json.dumps(data, indent=2, ensure_ascii=False))


def state_text(state: int) -> str:
    name = pb.TaskState.Name(state).removeprefix("TASK_STATE_")
    style = _STATE_STYLE.get(state, "")  # type: ignore[call-overload]
    return f"[{style}]{name}[/]" if style else name


# -------------------------------------------------------------------- rendering
def _texts(parts: Iterable[pb.Part]) -> str:
    return "\n".join(p.text for p in parts if p.WhichOneof("content") == "text").strip()


def _flat(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _flat_objects(value: Any) -> bool:
    """A non-empty list of non-empty objects whose members are all scalars."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, dict) and v and all(_flat(x) for x in v.values()) for v in value)
    )


def generic_view(value: Any) -> DataView:
    """A data value no agent's view knows: a list of flat objects as a table
    of their members (in the order first seen), anything else as pretty JSON."""
    if not _flat_objects(value):
        return DataView((DataView.Json(value),))
    columns = tuple(dict.fromkeys(k for v in value for k in v))
    rows = tuple(tuple(_cell_text(v.get(c)) for c in columns) for v in value)
    return DataView((DataView.Table(f"{len(value)} item{'s' if len(value) != 1 else ''}", columns, rows),))


def data_view(part: pb.Part) -> DataView:
    """How a data part is shown: the view of its media type (an agent's,
    :class:`~a2a_grpc.agents.DataView`), else :func:`generic_view`."""
    value = protojson.json_value(part.data)
    return DataView.of(part.media_type, value) or generic_view(value)


def _table(view: DataView.Table) -> Table:
    table = Table(title=view.title, title_justify="left")
    for col in view.columns:
        table.add_column(col, no_wrap=col in view.no_wrap)
    for row in view.rows:
        table.add_row(*(_cell(c) for c in row))
    return table


def _cell(cell: str | DataView.Cell) -> str:
    if isinstance(cell, str):
        return escape(cell)
    style = _LEVEL_STYLE.get(cell.level, "")
    return f"[{style}]{escape(cell.text)}[/]" if style else escape(cell.text)


class Renderer:
    """Human output of tasks, messages and artifacts, saying each thing once.

    ``shown`` collects the texts already printed (status messages, summaries),
    so that a text that only repeats one of them is left out: an agent may put
    its summary in the final status message, in a data part and as the first
    line of the same data as plain text, and the user sees it once. Data parts
    are shown by their :func:`data_view`; a text part that starts with the
    ``plain_text`` of a data part beside it is that data again, and is left
    out. ``--json`` output never goes through here and always carries
    everything.
    """

    def __init__(self, out: Console, url: str) -> None:
        self.out = out
        self.url = url
        self.shown: set[str] = set()
        self.seen_artifacts: set[str] = set()

    def _said(self, text: str) -> bool:
        return text.strip() in self.shown

    def _print_text(self, text: str, indent: str) -> None:
        self.shown.add(text.strip())
        self.out.print(_indent(escape(text), indent))

    def parts(self, parts: Sequence[pb.Part], indent: str = "") -> None:
        """Text parts as text, data parts by their :func:`data_view`, files
        by name, media type and size."""
        views = {i: data_view(p) for i, p in enumerate(parts) if p.WhichOneof("content") == "data"}
        again = [v.plain_text for v in views.values() if v.plain_text]
        for i, part in enumerate(parts):
            kind = part.WhichOneof("content")
            if kind == "text":
                text = part.text.strip()
                if self._said(text) or any(text.startswith(t) for t in again):
                    continue
                self._print_text(part.text, indent)
            elif kind == "data":
                self._show(views[i], indent)
            elif kind == "raw":
                label = f"[file {part.filename or 'file'}, {part.media_type or '?'}, {len(part.raw)} bytes]"
                self.out.print(f"{indent}[dim]{escape(label)}[/]")
            elif kind == "url":
                label = f"[file {part.url}, {part.media_type or '?'}]"
                self.out.print(f"{indent}[dim]{escape(label)}[/]")

    def _show(self, view: DataView, indent: str) -> None:
        for block in view.blocks:
            if isinstance(block, DataView.Table):
                self.out.print(_table(block))
            elif isinstance(block, DataView.Json):
                self.out.print(JSON.from_data(block.value))
            elif block.unless_said:
                said = "\n".join(self.shown)
                if not all(name in said for name in block.unless_said):
                    self._print_text(block.text, indent)
            elif not self._said(block.text):
                self._print_text(block.text, indent)

    def message(self, msg: pb.Message) -> None:
        role = pb.Role.Name(msg.role).removeprefix("ROLE_").lower()
        self.out.print(f"[bold]{role}:[/]")
        self.parts(msg.parts, indent="  ")

    def artifact(self, artifact: pb.Artifact, *, header: bool = True) -> None:
        if header:
            title = artifact.name or artifact.artifact_id
            self.out.print(
                f"[bold]artifact {escape(title)}[/]"
                + (f" — {escape(artifact.description)}" if artifact.description else "")
            )
        self.parts(artifact.parts, indent="  ")

    def reply_hint(self, state: int, task_id: str) -> None:
        if state in (pb.TASK_STATE_INPUT_REQUIRED, pb.TASK_STATE_AUTH_REQUIRED):
            hint = f"reply with: a2a-grpc send {self.url} TEXT --task {task_id}"
            self.out.print(f"[dim]{escape(hint)}[/]")

    def task(self, task: pb.Task, *, history: bool = False) -> None:
        """The task line, its status message, its artifacts, then (with
        ``history``) the history messages other than the status message."""
        self.out.print(
            f"task [bold]{escape(task.id)}[/] · context {escape(task.context_id)} · {state_text(task.status.state)}"
        )
        status_id = ""
        if task.status.HasField("message"):
            status_id = task.status.message.message_id
            self.parts(task.status.message.parts, indent="  ")
        for artifact in task.artifacts:
            self.artifact(artifact)
        if history:
            for msg in task.history:
                if status_id and msg.message_id == status_id:
                    continue  # already shown as the status message
                self.message(msg)
        self.reply_hint(task.status.state, task.id)

    def event(self, event: pb.StreamResponse) -> None:
        """One StreamResponse: the task line, each status change with its
        message, artifacts as their chunks arrive."""
        kind = event.WhichOneof("payload")
        if kind == "message":
            self.message(event.message)
        elif kind == "task":
            self.task(event.task)
            self.seen_artifacts.update(a.artifact_id for a in event.task.artifacts)
        elif kind == "status_update":
            status = event.status_update.status
            text = _texts(status.message.parts)
            line = f"→ {state_text(status.state)}"
            if text and not self._said(text):
                self.shown.add(text)
                line += f": {escape(text)}"
            self.out.print(line)
            others = [p for p in status.message.parts if p.WhichOneof("content") != "text"]
            self.parts(others, indent="  ")
            self.reply_hint(status.state, event.status_update.task_id)
        elif kind == "artifact_update":
            update = event.artifact_update
            first = update.artifact.artifact_id not in self.seen_artifacts or not update.append
            self.seen_artifacts.add(update.artifact.artifact_id)
            self.artifact(update.artifact, header=first)


def _indent(text: str, indent: str) -> str:
    """``text`` with ``indent`` before each of its lines."""
    return "\n".join(indent + line for line in text.split("\n")) if indent else text


def render_card(out: Console, card: pb.AgentCard) -> None:
    out.print(f"[bold]{escape(card.name)}[/] {escape(card.version)}")
    if card.description:
        out.print(escape(card.description))
    if card.HasField("provider"):
        out.print(f"provider: {escape(card.provider.organization)} {escape(card.provider.url)}")
    ifaces = Table(title="interfaces (in order of preference)", title_justify="left")
    tenants = any(iface.tenant for iface in card.supported_interfaces)  # no empty column
    for col in (
        ("#", "binding", "url", "version", "tenant") if tenants else ("#", "binding", "url", "version")
    ):
        ifaces.add_column(col)
    for i, iface in enumerate(card.supported_interfaces, 1):
        cells = [str(i), iface.protocol_binding, escape(iface.url), iface.protocol_version]
        ifaces.add_row(*cells, *([escape(iface.tenant)] if tenants else []))
    out.print(ifaces)
    caps = card.capabilities
    flags = [
        f"streaming={'yes' if caps.streaming else 'no'}",
        f"push={'yes' if caps.push_notifications else 'no'}",
        f"extended-card={'yes' if caps.extended_agent_card else 'no'}",
    ]
    out.print("capabilities: " + ", ".join(flags))
    for ext in caps.extensions:
        out.print(f"  extension {escape(ext.uri)}{' (required)' if ext.required else ''}")
    out.print(
        f"input modes: {', '.join(card.default_input_modes)}; output modes: {', '.join(card.default_output_modes)}"
    )
    if card.skills:
        skills = Table(title="skills", title_justify="left")
        for col in ("id", "name", "description", "tags"):
            skills.add_column(col)
        for s in card.skills:
            skills.add_row(escape(s.id), escape(s.name), escape(s.description), escape(", ".join(s.tags)))
        out.print(skills)


async def _stream(opts: Options, events: Any) -> int:
    """Prints a stream (rich, or one ProtoJSON object per line) and returns
    the last task state it carried. Interrupted (Ctrl-C) once the task is
    known, it says on stderr how to follow the task again: the task goes on
    without its stream."""
    printer = Renderer(opts.out, opts.url)
    state = pb.TASK_STATE_UNSPECIFIED
    task_id = ""
    try:
        async for event in events:
            kind = event.WhichOneof("payload")
            if kind == "task":
                state, task_id = event.task.status.state, event.task.id
            elif kind == "status_update":
                state, task_id = event.status_update.status.state, event.status_update.task_id
            if opts.as_json:
                print_json(opts, event, compact=True)
            else:
                printer.event(event)
    except asyncio.CancelledError:
        if task_id and not is_terminal(state):
            click.echo(
                f"the task goes on; follow it with: a2a-grpc task subscribe {opts.url} {task_id}", err=True
            )
        raise
    return state


# --------------------------------------------------------------------- commands
@click.command()
@client_options
@click.option("--extended", is_flag=True, help="Fetch the extended card (GetExtendedAgentCard) instead.")
@click.option(
    "--verify", is_flag=True, help="Refuse the card unless a signature verifies (spec §8.4; see --trust)."
)
@click.option(
    "--trust",
    "trust",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="KEYS",
    help="PEM public key, certificate or JWK set trusted for card signatures (repeatable).",
)
def card(opts: Options, extended: bool, verify: bool, trust: tuple[Path, ...]) -> None:
    """Fetch, validate and show the Agent Card of the agent at URL. A signed
    card is verified (with --trust keys and its own-host https jku) and
    refused when a signature fails; --verify refuses an unverified one."""
    trusted = _trusted(trust)

    async def go() -> pb.AgentCard:
        if not extended:
            return await fetch_card(
                opts.url,
                timeout=opts.timeout,
                headers=opts.headers,
                tls=opts.tls,
                trusted=trusted,
                require_signature=verify,
            )
        async with await opts.client() as client:
            return await client.get_extended_agent_card()

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
    else:
        render_card(opts.out, result)


def _trusted(paths: Sequence[Path]) -> Any:
    """The TrustedKeys of --trust files (None without any); a bad file is a usage error."""
    if not paths:
        return None
    from a2a_grpc.protocol.cardsign import TrustedKeys

    try:
        return TrustedKeys.from_files(paths)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--trust") from None


def _file_part(path: str) -> pb.Part:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint="--file") from None
    media_type = (
        FILE_TYPES.get(p.suffix.lower()) or mimetypes.guess_type(p.name)[0] or "application/octet-stream"
    )
    return file_part(raw, filename=p.name, media_type=media_type)


def _data_part(text: str) -> pb.Part:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--data") from None
    return data_part(value)


@click.command()
@client_options
@click.argument("text", required=False)
@click.option(
    "--file", "files", multiple=True, metavar="PATH", help="Attach a file (a diff is sent as text/x-diff)."
)
@click.option("--data", "data", metavar="JSON", help="Attach a JSON data part.")
@click.option("--task", "task_id", metavar="ID", help="Continue this task (e.g. answer input-required).")
@click.option("--context", "context_id", metavar="ID", help="Send in this context.")
@click.option("--stream", is_flag=True, help="Stream status changes and artifacts as they happen.")
@click.option("--no-wait", is_flag=True, help="Return as soon as the task exists (returnImmediately).")
def send(
    opts: Options,
    text: str | None,
    files: tuple[str, ...],
    data: str | None,
    task_id: str | None,
    context_id: str | None,
    stream: bool,
    no_wait: bool,
) -> None:
    """Send a message (TEXT, files, data) to the agent at URL and show the answer.

    Exits 3 when the task ends FAILED or REJECTED.
    """
    parts: list[pb.Part] = []
    if text:
        parts.append(pb.Part(text=text))
    parts.extend(_file_part(f) for f in files)
    if data is not None:
        parts.append(_data_part(data))
    if not parts:
        raise click.UsageError("give TEXT, --file or --data")
    config = pb.SendMessageConfiguration(return_immediately=no_wait) if no_wait else None

    async def go() -> int:
        async with await opts.client() as client:
            if stream:
                events = client.send_streaming_message(
                    parts, task_id=task_id, context_id=context_id, configuration=config
                )
                return await _stream(opts, events)
            response = await client.send_message(
                parts, task_id=task_id, context_id=context_id, configuration=config
            )
        if opts.as_json:
            print_json(opts, response)
        elif response.HasField("message"):
            Renderer(opts.out, opts.url).message(response.message)
        else:
            Renderer(opts.out, opts.url).task(response.task)
        return response.task.status.state if response.HasField("task") else pb.TASK_STATE_UNSPECIFIED

    state = run(go())
    if state in (pb.TASK_STATE_FAILED, pb.TASK_STATE_REJECTED):
        sys.exit(EXIT_TASK_FAILED)


@click.group()
def task() -> None:
    """Get, list, cancel or follow tasks."""


@task.command("get")
@client_options
@click.argument("task_id")
@click.option("--history", type=int, default=None, help="At most this many history messages.")
def task_get(opts: Options, task_id: str, history: int | None) -> None:
    """Show the task TASK_ID."""

    async def go() -> pb.Task:
        async with await opts.client() as client:
            return await client.get_task(task_id, history_length=history)

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
    else:
        Renderer(opts.out, opts.url).task(result, history=True)


@task.command("list")
@client_options
@click.option("--context", "context_id", help="Only tasks of this context.")
@click.option("--status", help="Only tasks in this state (e.g. working, completed).")
@click.option("--page-size", type=int, help="Tasks per page.")
@click.option("--page-token", help="The nextPageToken of a previous page.")
def task_list(
    opts: Options, context_id: str | None, status: str | None, page_size: int | None, page_token: str | None
) -> None:
    """List your tasks, newest first, one page at a time."""

    async def go() -> pb.ListTasksResponse:
        async with await opts.client() as client:
            return await client.list_tasks(
                context_id=context_id, status=status, page_size=page_size, page_token=page_token
            )

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
        return
    if not result.tasks:
        opts.out.print(
            "no tasks" if not result.total_size else f"no tasks on this page of {result.total_size}"
        )
        return
    table = Table(title=f"{len(result.tasks)} of {result.total_size} tasks", title_justify="left")
    table.add_column("id", no_wrap=True)
    for col in ("context", "state", "updated (UTC)"):
        table.add_column(col, overflow="fold")
    for t in result.tasks:
        updated = ""
        if t.status.HasField("timestamp"):
            updated = t.status.timestamp.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(escape(t.id), escape(t.context_id), state_text(t.status.state), updated)
    opts.out.print(table)
    if result.next_page_token:
        opts.out.print(f"next page: --page-token {escape(result.next_page_token)}")


@task.command("cancel")
@client_options
@click.argument("task_id")
def task_cancel(opts: Options, task_id: str) -> None:
    """Cancel the task TASK_ID and show it."""

    async def go() -> pb.Task:
        async with await opts.client() as client:
            return await client.cancel_task(task_id)

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
    else:
        Renderer(opts.out, opts.url).task(result)


@task.command("subscribe")
@client_options
@click.argument("task_id")
def task_subscribe(opts: Options, task_id: str) -> None:
    """Follow the task TASK_ID until it is terminal (a task that is terminal
    already is shown, and the exit code is 4)."""

    async def go() -> bool:
        """Follows the task; True when it was terminal already (and shown)."""
        async with await opts.client() as client:
            try:
                await _stream(opts, client.subscribe_to_task(task_id))
                return False  # the stream's last line shows the terminal state
            except A2AError as err:
                if err.code is not ErrorCode.UNSUPPORTED_OPERATION:
                    raise
                final = await client.get_task(task_id)  # TASK_NOT_FOUND, or the task
                if not is_terminal(final.status.state):
                    raise
        if opts.as_json:
            print_json(opts, final)
        else:
            Renderer(opts.out, opts.url).task(final)
        return True

    if run(go()):
        sys.exit(EXIT_ALREADY_FINAL)


@click.group()
def push() -> None:
    """Manage the push-notification webhooks of a task."""


def _render_configs(opts: Options, configs: Sequence[pb.TaskPushNotificationConfig], title: str) -> None:
    """A table of push configs; the task column only when they are not all of one task (the
    title names it otherwise). Token and credentials are never printed."""
    tasks = {c.task_id for c in configs}
    if len(tasks) == 1:
        title += f" for task {next(iter(tasks))}"
    table = Table(title=escape(title), title_justify="left")
    columns = (
        ("id", "task", "url", "token", "authentication")
        if len(tasks) > 1
        else ("id", "url", "token", "authentication")
    )
    for col in columns:
        table.add_column(col, no_wrap=col == "id", overflow="fold")
    for c in configs:
        auth = (
            f"{c.authentication.scheme} ***"
            if c.HasField("authentication") and c.authentication.scheme
            else ""
        )
        cells = [escape(c.id), escape(c.url), "***" if c.token else "", escape(auth)]
        if len(tasks) > 1:
            cells.insert(1, escape(c.task_id))
        table.add_row(*cells)
    opts.out.print(table)


@push.command("set")
@client_options
@click.argument("task_id")
@click.argument("webhook_url")
@click.option("--id", "config_id", help="Config id (the server picks one when absent).")
@click.option(
    "--notification-token",
    "notification_token",
    help="Sent back as X-A2A-Notification-Token (--token is the caller's bearer token).",
)
@click.option("--auth-scheme", help="Authorization scheme for the webhook (e.g. Bearer).")
@click.option("--auth-credentials", help="Credentials sent with --auth-scheme.")
def push_set(
    opts: Options,
    task_id: str,
    webhook_url: str,
    config_id: str | None,
    notification_token: str | None,
    auth_scheme: str | None,
    auth_credentials: str | None,
) -> None:
    """Register WEBHOOK_URL for updates of TASK_ID."""
    config = pb.TaskPushNotificationConfig(
        task_id=task_id, url=webhook_url, id=config_id or "", token=notification_token or ""
    )
    if auth_scheme or auth_credentials:
        config.authentication.scheme = auth_scheme or "Bearer"
        config.authentication.credentials = auth_credentials or ""

    async def go() -> pb.TaskPushNotificationConfig:
        async with await opts.client() as client:
            return await client.create_task_push_notification_config(config)

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
    else:
        _render_configs(opts, [result], "push config created")


@push.command("get")
@client_options
@click.argument("task_id")
@click.argument("config_id")
def push_get(opts: Options, task_id: str, config_id: str) -> None:
    """Show the webhook CONFIG_ID of TASK_ID."""

    async def go() -> pb.TaskPushNotificationConfig:
        async with await opts.client() as client:
            return await client.get_task_push_notification_config(task_id, config_id)

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
    else:
        _render_configs(opts, [result], "push config")


@push.command("list")
@client_options
@click.argument("task_id")
@click.option("--page-size", type=int, help="Configs per page.")
@click.option("--page-token", help="The nextPageToken of a previous page.")
def push_list(opts: Options, task_id: str, page_size: int | None, page_token: str | None) -> None:
    """List the webhooks of TASK_ID."""

    async def go() -> pb.ListTaskPushNotificationConfigsResponse:
        async with await opts.client() as client:
            return await client.list_task_push_notification_configs(
                task_id, page_size=page_size, page_token=page_token
            )

    result = run(go())
    if opts.as_json:
        print_json(opts, result)
        return
    _render_configs(
        opts,
        list(result.configs),
        f"{len(result.configs)} push config{'s' if len(result.configs) != 1 else ''}",
    )
    if result.next_page_token:
        opts.out.print(f"next page: --page-token {escape(result.next_page_token)}")


@push.command("delete")
@client_options
@click.argument("task_id")
@click.argument("config_id")
def push_delete(opts: Options, task_id: str, config_id: str) -> None:
    """Remove the webhook CONFIG_ID of TASK_ID."""

    async def go() -> None:
        async with await opts.client() as client:
            await client.delete_task_push_notification_config(task_id, config_id)

    run(go())
    if opts.as_json:
        click.echo("{}")
    else:
        opts.out.print(f"deleted push config {escape(config_id)} of task {escape(task_id)}")


def register(main: click.Group) -> None:
    """Adds ``card``, ``send``, ``task`` and ``push`` to the ``a2a-grpc`` group."""
    for command in (card, send, task, push):
        main.add_command(command)
