"""The built-in ``code-review`` agent: reviews a unified diff with ruff and returns structured findings.

Input (one client message, spec §3.1.1 parts):

* a text part holding a unified diff (``git diff`` / ``diff -u`` output; a fenced `````diff`` block
  inside prose works too);
* a file part, inline (``raw``) or by ``url`` (http/https, fetched with a size cap and a timeout),
  whose media type is ``text/x-diff``, ``text/x-patch`` or ``text/plain``, or whose file name ends
  in ``.diff`` / ``.patch``;
* a data part ``{"diff": "...", "language": "python", "focus": ["security", "bugs", "style",
  "performance"], "python_version": "3.12"}`` — every member optional; ``focus`` defaults to all.

Review: every changed Python file (``*.py``, ``*.pyi``) is rebuilt from its hunks in a temporary
directory (:mod:`a2a_grpc.agents._review.rebuild`) and linted by ONE ``ruff check`` run with the rule
families of the focus (:mod:`a2a_grpc.agents._review.rules`). Only findings on added lines are kept,
at their line numbers in the new file. Other files are listed as skipped, with the reason.

Events: a ``working`` status per reviewed file ("Reviewing path (i/n)"; at most 100 per review, so
a diff touching more files reports every k-th one), then one artifact named
``review-findings`` with a data part ``{"findings": [{"file", "line", "column", "rule", "severity",
"issue", "recommendation", "url"}], "summary": str, "skipped": [{"file", "reason", ...}]}`` (media
type ``application/vnd.a2a-grpc.review-findings+json``: JSON of that shape, which ``a2a-grpc send`` shows
as a table) and a text part with the summary, then ``completed``. With more than 50 findings the artifact is streamed
in chunks of 50 (same ``artifact_id``, ``append`` after the first, ``last_chunk`` on the last, spec
§10 artifact chunking): each chunk adds one data part ``{"findings": [...]}``; the last one's data part also carries
``summary`` and ``skipped``, and the text part. A client concatenates the ``findings`` of all data
parts. Only the parts the client accepts (``accepted_output_modes``, spec §9.8) are sent: the data part
for ``application/json`` or its own media type, the text part for ``text/plain``.

Outcomes and errors:

* no diff in the message → ``input-required`` with a question; the next message on the same task
  continues the review (focus and options given earlier in the task still apply);
* a part that is neither text nor a diff (e.g. ``image/png``) → ``CONTENT_TYPE_NOT_SUPPORTED``, and
  accepted output modes that include neither ``application/json`` nor ``text/plain`` → the same
  (spec §3.3.2), both raised before any event so nothing is stored;
* an unknown ``focus`` or ``language``, a malformed data part, or an inline diff over 4 MiB →
  ``INVALID_PARAMS`` (spec §3.3.2), before any event;
* a diff that cannot be parsed, a URL that cannot be fetched, or ruff failing → the task ends
  ``failed`` with a message saying why.

Limits (also in the card's skill description): a diff of at most ``MAX_DIFF_BYTES`` (4,194,304)
characters, ``MAX_HUNKS`` (5,000) hunks linted, ``REVIEW_SECONDS`` (120 s) per review — past it
the task ends ``failed`` ("The review took longer than its limit …"). While a step runs (parsing,
rebuilding, ruff, mapping) a ``working`` status goes out at least every ``PROGRESS_SECONDS`` (3 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from a2a_grpc.agents._review import rules
from a2a_grpc.agents._review.fetch import FetchError, fetch_text
from a2a_grpc.agents._review.rebuild import Snippet, is_python_path, rebuild
from a2a_grpc.agents._review.ruff_runner import RuffError, run_ruff
from a2a_grpc.agents._views import REVIEW_FINDINGS
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext, data_part, text_part
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol import protojson
from a2a_grpc.types import Event, new_id, pb

__all__ = ["ARTIFACT_NAME", "CHUNK_FINDINGS", "CodeReviewAgent", "build_card"]

#: Name of the artifact holding the findings.
ARTIFACT_NAME = "review-findings"
#: Findings per artifact chunk; a review with more findings is streamed in chunks.
CHUNK_FINDINGS = 50
#: Largest diff accepted, inline or fetched (bytes).
MAX_DIFF_BYTES = 4 * 1024 * 1024
#: Where the rebuilt sources are written: memory-backed /dev/shm when there is one (thousands of
#: small files; a disk under load makes that take seconds), else the system temporary directory.
_T = TypeVar("_T")
_SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None


async def _finish_in_thread(func: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``asyncio.to_thread(func, ...)`` that, when cancelled, still lets the
    thread finish before the cancellation goes on (its side effects are then
    complete and can be cleaned up)."""
    work = asyncio.ensure_future(asyncio.to_thread(func, *args, **kwargs))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await work
        raise


#: Most hunks linted in one review; files beyond it are listed as skipped.
MAX_HUNKS = 5000
#: Timeout of a diff fetch by URL (seconds).
FETCH_TIMEOUT = 15.0
#: Most ``working`` statuses one review sends (a diff touching more files reports every k-th file).
_MAX_PROGRESS = 100
#: Longest pause between two ``working`` statuses while one step of a review runs (seconds).
PROGRESS_SECONDS = 3.0
#: Longest one review may take (seconds); then the task ends ``failed`` saying so.
REVIEW_SECONDS = 120.0
#: Findings listed in the text part (the data part has them all).
_TEXT_LISTED = 25

DIFF_MEDIA_TYPES = frozenset({"text/x-diff", "text/x-patch", "text/plain"})
_DIFF_SUFFIXES = (".diff", ".patch")
_INPUT_MODES = ("text/plain", "text/x-diff", "text/x-patch", "application/json")
_OUTPUT_MODES = ("application/json", "text/plain")

_QUESTION = (
    "Please send the unified diff to review: paste it as text (the output of `git diff` or "
    "`diff -u`), attach it as a file part (text/x-diff or text/x-patch, inline or by URL), or send a "
    'data part {"diff": "...", "focus": ["security", "bugs", "style", "performance"]}.'
)
# A line that only a unified diff has: a git header, a ---/+++ header pair, or a hunk header.
_DIFF_MARKERS = re.compile(r"^(diff --git |--- .*\n\+\+\+ |@@ -\d)", re.MULTILINE)
_FENCED = re.compile(r"```(?:diff|patch|udiff)?[ \t]*\r?\n(.*?)^```", re.MULTILINE | re.DOTALL)
_PY_VERSION = re.compile(r"3\.(\d{1,2})")


def build_card() -> pb.AgentCard:
    """The public card of the agent, without ``supported_interfaces`` (the server adds them)."""
    return pb.AgentCard(
        name="Code Review Agent",
        description=(
            "Reviews unified diffs of Python code with ruff and returns structured findings "
            "(file, line, rule, severity, issue, recommendation) for the added lines only."
        ),
        version="0.1.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=list(_INPUT_MODES),
        default_output_modes=list(_OUTPUT_MODES),
        skills=[
            pb.AgentSkill(
                id="review-diff",
                name="Review a diff",
                description=(
                    "Lints the Python files changed by a unified diff (security: bandit rules, bugs: "
                    "pyflakes/bugbear/pylint errors, style: pycodestyle/pep8-naming/pyupgrade, "
                    "performance: perflint) and reports the findings on added lines with their new "
                    "line numbers, a severity and a fix hint. Send the diff as text, as a "
                    'text/x-diff file, or as data {"diff": ..., "focus": [...]}. Non-Python files '
                    "are listed as skipped. Asks for a diff when the message has none. Limits: a diff of "
                    "at most 4,194,304 characters (4 MiB, inline or fetched), 5,000 hunks linted (files "
                    "beyond are listed as skipped), 120 s per review; a working status at least every 3 s."
                ),
                tags=["code-review", "python", "diff", "security", "lint", "ruff"],
                examples=[
                    "Review this diff: diff --git a/app/db.py b/app/db.py ...",
                    '{"diff": "--- a/app.py\\n+++ b/app.py\\n@@ ...", "focus": ["security"]}',
                    "Please review my change (the agent then asks for the diff)",
                ],
                input_modes=list(_INPUT_MODES),
                output_modes=list(_OUTPUT_MODES),
            )
        ],
    )


@dataclass(slots=True)
class _Request:
    """What one message asks for (after validation)."""

    texts: list[str] = field(default_factory=list)  # inline diffs
    urls: list[str] = field(default_factory=list)
    focus: tuple[str, ...] | None = None
    python_version: str | None = None


class _Failed(Exception):
    """Ends the task FAILED with this message."""


class CodeReviewAgent(AgentExecutor):
    """Reviews unified diffs of Python code with ruff (see the module docstring for input, events
    and errors). ``allow_private_urls`` lets file parts point at loopback/private addresses (off by
    default: the server should not fetch from its own network on a client's behalf)."""

    def __init__(self, *, allow_private_urls: bool = False) -> None:
        self.card = build_card()
        self.allow_private_urls = allow_private_urls

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        """Handles one message: asks for a diff, or reviews it (see the module docstring)."""
        want_data = ctx.accepts("application/json") or ctx.accepts(REVIEW_FINDINGS)
        want_text = ctx.accepts("text/plain")
        if not (want_data or want_text):
            raise A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                "the review is produced as application/json and text/plain; the accepted output "
                f"modes {list(ctx.accepted_output_modes)} include neither",
            )
        request = _read_message(ctx.message, field_path="message")
        focus, py_version = _earlier_options(ctx.task)
        focus = request.focus or focus or rules.ALL_FOCUS
        py_version = request.python_version or py_version or "py312"

        if not request.texts and not request.urls:
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, _QUESTION)
            return
        try:
            texts = list(request.texts)
            for url in request.urls:
                yield ctx.status(pb.TASK_STATE_WORKING, f"Fetching {url}")
                try:
                    texts.append(
                        await fetch_text(
                            url,
                            max_bytes=MAX_DIFF_BYTES,
                            timeout=FETCH_TIMEOUT,
                            allow_private=self.allow_private_urls,
                        )
                    )
                except FetchError as exc:
                    raise _Failed(f"Could not fetch the diff: {exc}.") from exc
            # Parsing, rebuilding and mapping are CPU work in pure Python: they run in worker
            # threads so a large diff does not stall the server's event loop.
            clock = _Clock(asyncio.get_running_loop().time() + REVIEW_SECONDS)
            parse = asyncio.ensure_future(asyncio.to_thread(_parse_diff, texts))
            async for event in clock.wait(ctx, parse, "Reading the diff"):
                yield event
            async for event in self._review(
                ctx, parse.result(), focus, py_version, want_data, want_text, clock
            ):
                yield event
        except _Failed as exc:
            yield ctx.status(pb.TASK_STATE_FAILED, str(exc))

    async def _review(
        self,
        ctx: ExecutorContext,
        patch: PatchSet,
        focus: Sequence[str],
        py_version: str,
        want_data: bool,
        want_text: bool,
        clock: _Clock,
    ) -> AsyncIterator[Event]:
        python_files, skipped = _triage(patch)
        snippets: list[Snippet] = []
        n = len(python_files)
        every = -(-n // _MAX_PROGRESS)  # one status per file, or per `every` files for huge diffs
        for start in range(0, n, every):
            group = python_files[start : start + every]
            label = f"Reviewing {group[0].path} ({start + 1}/{n})"
            yield ctx.status(pb.TASK_STATE_WORKING, label)
            if start + len(group) == n and len(group) > 1:
                yield ctx.status(pb.TASK_STATE_WORKING, label := f"Reviewing {group[-1].path} ({n}/{n})")
            rebuilt = asyncio.ensure_future(asyncio.to_thread(_rebuild_files, group, len(snippets), skipped))
            async for event in clock.wait(ctx, rebuilt, label):
                yield event
            snippets.extend(rebuilt.result())

        lint = asyncio.ensure_future(_lint(snippets, focus, py_version))
        async for event in clock.wait(ctx, lint, f"Linting {len(snippets)} snippets with ruff"):
            yield event
        mapped = asyncio.ensure_future(asyncio.to_thread(_map_findings, lint.result(), snippets))
        async for event in clock.wait(ctx, mapped, "Mapping the findings to the diff"):
            yield event
        findings, unreviewed = mapped.result()
        order = {p.path: i for i, p in enumerate(python_files)}
        findings.sort(key=lambda f: (order[f["file"]], f["line"], f["column"], f["rule"]))
        skipped.extend(unreviewed)
        summary = _summary(len(python_files), focus, findings, skipped)
        for event in _findings_artifacts(
            ctx, findings, summary, skipped, want_data=want_data, want_text=want_text
        ):
            yield event
        yield ctx.status(pb.TASK_STATE_COMPLETED, summary)


class _Clock:
    """One review's deadline (``REVIEW_SECONDS`` from its start, loop time)
    and its heartbeat."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    async def wait(self, ctx: ExecutorContext, work: asyncio.Future[Any], label: str) -> AsyncIterator[Event]:
        """Waits for ``work``, yielding a ``working`` status ("label, N s")
        every ``PROGRESS_SECONDS``; cancels it and raises _Failed past the
        deadline. ``work`` is cancelled too when the review is interrupted."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            while not work.done():
                left = self.deadline - loop.time()
                if left <= 0:
                    raise _Failed(
                        f"The review took longer than its limit of {REVIEW_SECONDS:g} s; send a smaller diff."
                    )
                await asyncio.wait({work}, timeout=min(PROGRESS_SECONDS, left))
                if not work.done() and loop.time() < self.deadline:
                    yield ctx.status(pb.TASK_STATE_WORKING, f"{label}, {loop.time() - started:.0f} s")
        finally:
            if not work.done():
                work.cancel()
                with contextlib.suppress(BaseException):
                    await work


def _triage(patch: PatchSet) -> tuple[list[PatchedFile], list[dict[str, Any]]]:
    """The Python files of ``patch`` to review, and the other files as skipped (with the reason)."""
    skipped: list[dict[str, Any]] = []
    python_files: list[PatchedFile] = []
    for patched in patch:
        path = patched.path
        if patched.is_binary_file:
            skipped.append({"file": path, "reason": "binary file"})
        elif not is_python_path(path):
            skipped.append({"file": path, "reason": "not a Python file"})
        elif patched.is_removed_file:
            skipped.append({"file": path, "reason": "deleted"})
        else:
            python_files.append(patched)
    return python_files, skipped


async def _lint(snippets: Sequence[Snippet], focus: Sequence[str], py_version: str) -> list[dict[str, Any]]:
    """ruff's diagnostics for ``snippets``, written to a scratch directory that is removed after.

    Raises _Failed when ruff cannot run."""
    # File system work runs in a thread so a large diff does not stall the event loop.
    # A thread cannot be stopped: on cancellation wait for it (shielded) before the
    # scratch directory is removed, or it would write into it afterwards.
    tmp = tempfile.mkdtemp(prefix="a2a-review-", dir=_SCRATCH)  # one syscall: no thread, nothing to race
    try:
        names = await _finish_in_thread(_write_snippets, tmp, snippets)
        return await run_ruff(names, rules.families_for(focus), target_version=py_version)
    except RuffError as exc:
        raise _Failed(f"The review could not run: {exc}.") from exc
    finally:
        await asyncio.shield(asyncio.to_thread(shutil.rmtree, tmp, ignore_errors=True))


def _findings_artifacts(
    ctx: ExecutorContext,
    findings: list[dict[str, Any]],
    summary: str,
    skipped: list[dict[str, Any]],
    *,
    want_data: bool,
    want_text: bool,
) -> Iterator[Event]:
    """The ``review-findings`` artifact: one event, or with a data part and more than
    :data:`CHUNK_FINDINGS` findings one chunk per :data:`CHUNK_FINDINGS` (spec §10); the last
    carries the summary, the skipped files and the text part."""
    text = _text_report(summary, findings)
    artifact_id = new_id()
    step = CHUNK_FINDINGS if want_data else max(len(findings), 1)
    chunks = [findings[i : i + step] for i in range(0, len(findings), step)] or [findings]
    for k, chunk in enumerate(chunks):
        last = k == len(chunks) - 1
        parts: list[pb.Part] = []
        if want_data:
            payload: dict[str, Any] = {"findings": chunk}
            if last:
                payload |= {"summary": summary, "skipped": skipped}
            parts.append(data_part(payload, media_type=REVIEW_FINDINGS))
        if last and want_text:
            parts.append(text_part(text, media_type="text/plain"))
        yield ctx.artifact(
            parts,
            artifact_id=artifact_id,
            name=ARTIFACT_NAME,
            description="Findings of the code review, on added lines, with new line numbers",
            append=k > 0,
            last_chunk=last,
        )


# --- reading the message ------------------------------------------------------------------------


def _media_type(part: pb.Part) -> str:
    return part.media_type.split(";", 1)[0].strip().lower()


def _is_diff_file(part: pb.Part, name_hint: str = "") -> bool:
    names = [part.filename.lower(), name_hint.lower()]
    return _media_type(part) in DIFF_MEDIA_TYPES or any(n.endswith(_DIFF_SUFFIXES) for n in names if n)


def _unsupported(part: pb.Part, index: int, what: str) -> A2AError:
    media = part.media_type or "no media type"
    return A2AError(
        ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
        f"part {index} is {what} ({media}); the code-review agent accepts text, a unified diff "
        "(text/x-diff, text/x-patch, or a .diff/.patch file) or a JSON data part",
        metadata={"mediaType": part.media_type},
    )


def _read_message(message: pb.Message, *, field_path: str) -> _Request:
    """Validates the parts of ``message`` and collects the diffs and options it carries. Raises
    A2AError (CONTENT_TYPE_NOT_SUPPORTED, INVALID_PARAMS) for parts the agent cannot use."""
    req = _Request()
    for i, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        where = f"{field_path}.parts[{i}]"
        if kind == "text":
            # A text part typed as a diff is one (and fails the task if it does not parse); plain
            # text holds a diff when it has diff markers.
            typed = _media_type(part) in ("text/x-diff", "text/x-patch")
            diff = part.text if typed else _diff_in_text(part.text)
            if diff is not None:
                req.texts.append(diff)
        elif kind == "raw":
            if not _is_diff_file(part):
                raise _unsupported(part, i, "a file that is not a diff")
            try:
                decoded = part.raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _unsupported(part, i, "a file that is not UTF-8 text") from exc
            req.texts.append(decoded)
        elif kind == "url":
            path = part.url.split("?", 1)[0].split("#", 1)[0]
            if not _is_diff_file(part, name_hint=path):
                raise _unsupported(part, i, "a file that is not a diff")
            if not part.url.lower().startswith(("http://", "https://")):
                raise A2AError.invalid_params(
                    FieldViolation(f"{where}.url", "only http and https URLs can be fetched")
                )
            req.urls.append(part.url)
        elif kind == "data":
            _read_data(part, where, req)
        else:
            raise A2AError.invalid_params(FieldViolation(where, "the part has no content"))
    if sum(len(t) for t in req.texts) > MAX_DIFF_BYTES:
        raise A2AError.invalid_params(
            FieldViolation(f"{field_path}.parts", f"the diff is longer than {MAX_DIFF_BYTES} characters")
        )
    return req


def _read_data(part: pb.Part, where: str, req: _Request, *, options_only: bool = False) -> None:
    value = protojson.json_value(part.data)
    if not isinstance(value, dict):
        raise A2AError.invalid_params(
            FieldViolation(f"{where}.data", 'must be an object like {"diff": "...", "focus": [...]}')
        )
    if not options_only and "diff" in value:
        diff = value["diff"]
        if not isinstance(diff, str):
            raise A2AError.invalid_params(FieldViolation(f"{where}.data.diff", "must be a string"))
        if diff.strip():
            req.texts.append(diff)
    language = value.get("language")
    if language is not None and (not isinstance(language, str) or language.lower() not in ("python", "py")):
        raise A2AError.invalid_params(
            FieldViolation(f"{where}.data.language", f"unsupported language {language!r}; only 'python'")
        )
    if "focus" in value:
        focus = value["focus"]
        items = [focus] if isinstance(focus, str) else focus
        if not isinstance(items, list) or not all(isinstance(f, str) for f in items):
            raise A2AError.invalid_params(FieldViolation(f"{where}.data.focus", "must be a list of strings"))
        unknown = [f for f in items if f.lower() not in rules.ALL_FOCUS]
        if unknown:
            raise A2AError.invalid_params(
                FieldViolation(
                    f"{where}.data.focus",
                    f"unknown focus {', '.join(map(repr, unknown))}; expected any of {', '.join(rules.ALL_FOCUS)}",
                )
            )
        if items:
            req.focus = tuple(f for f in rules.ALL_FOCUS if f in {i.lower() for i in items})
    if "python_version" in value:
        version = value["python_version"]
        m = _PY_VERSION.fullmatch(version) if isinstance(version, str) else None
        if not m or not 7 <= int(m.group(1)) <= 14:
            raise A2AError.invalid_params(
                FieldViolation(f"{where}.data.python_version", "must be a Python version from 3.7 to 3.14")
            )
        req.python_version = f"py3{m.group(1)}"


def _earlier_options(task: pb.Task | None) -> tuple[tuple[str, ...] | None, str | None]:
    """Focus and Python version given by earlier client messages of the task (latest wins)."""
    focus: tuple[str, ...] | None = None
    version: str | None = None
    if task is None:
        return focus, version
    for message in task.history:
        if message.role != pb.ROLE_USER:
            continue
        for i, part in enumerate(message.parts):
            if part.WhichOneof("content") != "data":
                continue
            req = _Request()
            try:
                _read_data(part, f"history.parts[{i}]", req, options_only=True)
            except A2AError:
                continue
            focus = req.focus or focus
            version = req.python_version or version
    return focus, version


def _diff_in_text(text: str) -> str | None:
    """The diff a text part holds: the contents of fenced diff blocks when there are any, else the
    whole text when it has diff markers; None when it has none."""
    fenced = [m.group(1) for m in _FENCED.finditer(text) if _DIFF_MARKERS.search(m.group(1))]
    if fenced:
        return "\n".join(fenced)
    if _DIFF_MARKERS.search(text):
        return text
    return None


def _no_headers_message() -> str:
    return (
        "The diff could not be parsed: it has no file headers (--- a/path / +++ b/path). "
        "Send the complete output of `git diff` or `diff -u`."
    )


def _parse_diff(texts: Iterable[str]) -> PatchSet:
    # CRLF line breaks (a diff saved on Windows, or sent through a text form) would end up in the
    # file names; the review does not depend on them.
    joined = "".join(t if t.endswith("\n") else t + "\n" for t in texts).replace("\r\n", "\n")
    try:
        patch = PatchSet(joined)
    except UnidiffParseError as exc:
        # unidiff quotes the offending line with its line break ("... @@ -1,3 +1,4 @@\n"): strip it.
        raise _Failed(
            f"The diff could not be parsed: {str(exc).strip()}. Send a complete unified diff (`git diff`)."
        ) from exc
    except (UnicodeError, ValueError) as exc:
        raise _Failed(f"The diff could not be parsed: {str(exc).strip()}.") from exc
    if len(patch) == 0:
        raise _Failed(_no_headers_message())
    for patched in patch:
        if len(patched) == 0 and not patched.is_binary_file and not _has_extended_header(patched):
            raise _Failed(
                f"The diff could not be parsed: {patched.path} has file headers but no hunks "
                "(@@ -a,b +c,d @@). Send a complete unified diff (`git diff`)."
            )
    return patch


# git's extended header lines: a file section with one of these legitimately has no hunks.
_EXTENDED_HEADERS = (
    "old mode",
    "new mode",
    "new file mode",
    "deleted file mode",
    "rename from",
    "rename to",
    "copy from",
    "copy to",
    "similarity index",
    "Binary files",
)


def _has_extended_header(patched: PatchedFile) -> bool:
    info = patched.patch_info or ()
    return any(str(line).startswith(_EXTENDED_HEADERS) for line in info)


# --- running the review -------------------------------------------------------------------------


def _rebuild_files(files: Sequence[PatchedFile], count: int, skipped: list[dict[str, Any]]) -> list[Snippet]:
    """The snippets of ``files`` while the review stays under MAX_HUNKS (``count`` so far); files
    beyond the limit are added to ``skipped``."""
    out: list[Snippet] = []
    for patched in files:
        if count + len(out) >= MAX_HUNKS:
            skipped.append({"file": patched.path, "reason": f"review limit of {MAX_HUNKS} hunks reached"})
        else:
            out.extend(rebuild(patched))
    return out


def _write_snippets(root: str, snippets: Sequence[Snippet]) -> list[str]:
    """Writes each snippet to ``root/s<k>/<basename>`` and returns the absolute paths."""
    names = []
    for k, snippet in enumerate(snippets):
        directory = Path(root, f"s{k}")
        directory.mkdir()
        path = directory / snippet.basename
        path.write_text(snippet.text, encoding="utf-8")
        names.append(os.fspath(path.absolute()))
    return names


#: One ruff diagnostic placed in its snippet: (snippet index, row, column, rule code, diagnostic).
_Located = tuple[int, int, int, str, dict[str, Any]]


def _map_findings(
    report: Sequence[dict[str, Any]], snippets: Sequence[Snippet]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Turns ruff's diagnostics into findings on added lines; also returns the hunks that could not
    be reviewed (they did not parse on their own)."""
    located, unreviewed = _locate(report, snippets)
    notes = [
        {"file": sn.file, "line": sn.first_line, "reason": sn.note} for sn in snippets if sn.note is not None
    ]
    findings: list[dict[str, Any]] = []
    seen: set[tuple[str, int, int, str]] = set()
    for k, row, column, code, diag in located:
        snippet = snippets[k]
        line = None if k in unreviewed else _added_line(snippet, row, code)
        if line is None:
            continue
        key = (snippet.file, line, column, code)
        if key in seen:
            continue
        seen.add(key)
        findings.append(_finding(snippet.file, line, column, code, diag))
    return findings, [*notes, *unreviewed.values()]


def _locate(
    report: Sequence[dict[str, Any]], snippets: Sequence[Snippet]
) -> tuple[list[_Located], dict[int, dict[str, Any]]]:
    """Each readable diagnostic of ``report`` with its snippet, and per snippet index the hunks
    reported as not reviewed (a syntax error in a hunk that could not be made to parse)."""
    unreviewed: dict[int, dict[str, Any]] = {}
    located: list[_Located] = []
    for diag in report:
        try:
            k = int(Path(str(diag["filename"])).parent.name[1:])
            snippet = snippets[k]
            row = int(diag["location"]["row"])
            column = int(diag["location"]["column"])
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        code = diag.get("code") or rules.SYNTAX_ERROR_CODE
        if code == rules.SYNTAX_ERROR_CODE and not snippet.whole_file and not snippet.parsed:
            # A hunk that could not be made to parse: ruff's token-based rules would still report
            # on text that is not code (e.g. docstring prose), so the hunk is reported as not
            # reviewed instead. (Hunks that did parse may still fail ruff's semantic checks for
            # lack of context, e.g. `nonlocal` outside its function: those errors are ignored.)
            unreviewed.setdefault(
                k,
                {
                    "file": snippet.file,
                    "line": snippet.first_line,
                    "reason": "this hunk does not parse without the rest of the file "
                    f"({diag.get('message', 'syntax error')}); it was not reviewed",
                },
            )
        located.append((k, row, column, code, diag))
    return located, unreviewed


def _added_line(snippet: Snippet, row: int, code: str) -> int | None:
    """The new file's line number of ``snippet``'s ``row`` when a ``code`` finding there counts: on
    an added line, and not a rule that needs context a lone hunk lacks; else None."""
    if code == rules.SYNTAX_ERROR_CODE and not snippet.whole_file:
        return None
    if not snippet.whole_file and code in rules.CONTEXT_DEPENDENT_RULES:
        return None
    if code in rules.LOOP_RULES and not snippet.loop_closed(row):
        return None
    return snippet.added_rows.get(row)


def _finding(file: str, line: int, column: int, code: str, diag: dict[str, Any]) -> dict[str, Any]:
    """One finding of the artifact's ``findings`` list, from ruff diagnostic ``diag``."""
    fix = diag.get("fix") or {}
    message = str(diag.get("message", ""))
    finding: dict[str, Any] = {
        "file": file,
        "line": line,
        "column": column,
        "rule": code,
        "severity": rules.severity_of(code),
        "issue": f"SyntaxError: {message}" if code == rules.SYNTAX_ERROR_CODE else message,
        "recommendation": rules.recommendation_for(
            code, fix.get("message") if isinstance(fix, dict) else None
        ),
    }
    if diag.get("url"):
        finding["url"] = diag["url"]
    return finding


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(
    reviewed: int, focus: Sequence[str], findings: Sequence[dict[str, Any]], skipped: Sequence[dict[str, Any]]
) -> str:
    if reviewed:
        head = f"Reviewed {_plural(reviewed, 'Python file')} (focus: {', '.join(focus)}): "
        if findings:
            counts = Counter(f["severity"] for f in findings)
            by_severity = ", ".join(f"{counts[s]} {s}" for s in ("high", "medium", "low") if counts[s])
            head += f"{_plural(len(findings), 'finding')} ({by_severity})."
        else:
            head += "no findings."
    else:
        head = "No Python files to review."
    if skipped:
        listed = "; ".join(
            f"{s['file']}{':' + str(s['line']) if 'line' in s else ''} ({s['reason']})" for s in skipped[:10]
        )
        more = f"; and {len(skipped) - 10} more" if len(skipped) > 10 else ""
        head += f" Skipped {len(skipped)}: {listed}{more}."
    return head


def _text_report(summary: str, findings: Sequence[dict[str, Any]]) -> str:
    lines = [summary]
    lines.extend(
        f"- {f['file']}:{f['line']} {f['rule']} [{f['severity']}] {f['issue']} — {f['recommendation']}"
        for f in findings[:_TEXT_LISTED]
    )
    if len(findings) > _TEXT_LISTED:
        lines.append(f"… and {len(findings) - _TEXT_LISTED} more findings in the data part.")
    return "\n".join(lines)
