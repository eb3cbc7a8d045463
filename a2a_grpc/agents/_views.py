"""How the command line shows an agent's data parts: views chosen by the part's media type.

A data part whose media type (without parameters, in lower case) has a view in
:attr:`DataView.VIEWS` is shown by it: a function from the part's JSON value
to a :class:`DataView`, or to None when the value is not of the shape it knows
(the part is then shown as any data part: a list of flat objects as a table,
anything else as pretty JSON). A DataView is plain data — no terminal library
here — that the CLI draws: its blocks in order (:class:`DataView.Table`,
:class:`DataView.Text`, :class:`DataView.Json`), and its ``plain_text``, the
start of the text part that carries the same data as plain text (agents send
both, for clients that take one of them; the CLI shows the data once).

The built-in agents mark their data parts with their own ``+json`` media types
(RFC 6839: JSON documents of a known shape): :data:`REVIEW_FINDINGS` (the
code-review agent's ``review-findings`` artifact) and :data:`OUTLINE` (the
explain agent's ``outline``). Another agent package adds its own view:
``DataView.VIEWS["application/vnd.example.report+json"] = report_view``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["OUTLINE", "REVIEW_FINDINGS", "DataView", "outline_text"]

#: Media type of the code-review agent's findings data part:
#: ``{"findings": [{file, line, column, rule, severity, issue, recommendation, url}], "summary", "skipped"}``.
REVIEW_FINDINGS = "application/vnd.a2a-grpc.review-findings+json"
#: Media type of the explain agent's outline data part: ``{"modules": [...]}``.
OUTLINE = "application/vnd.a2a-grpc.outline+json"


@dataclass(frozen=True, slots=True)
class DataView:
    """What the command line shows for one data part: ``blocks`` in order,
    and ``plain_text`` (when not empty: a text part starting with it is the
    same data as plain text, and is not shown again)."""

    blocks: tuple[DataView.Table | DataView.Text | DataView.Json, ...]
    plain_text: str = ""

    #: Views by media type (lower case, no parameters): JSON value → DataView,
    #: or None for a value the view does not know.
    VIEWS: ClassVar[dict[str, Callable[[Any], DataView | None]]] = {}

    @dataclass(frozen=True, slots=True)
    class Cell:
        """A table cell with a ``level`` the CLI colours: ``error``,
        ``warning`` or ``note`` (SARIF's result levels); others are plain."""

        text: str
        level: str = ""

    @dataclass(frozen=True, slots=True)
    class Table:
        """A titled table; cells are plain text (the CLI escapes them), the
        columns named in ``no_wrap`` are never wrapped."""

        title: str
        columns: tuple[str, ...]
        rows: tuple[tuple[str | DataView.Cell, ...], ...]
        no_wrap: frozenset[str] = frozenset()

    @dataclass(frozen=True, slots=True)
    class Text:
        """A line of text, said once: left out when it was already shown, or
        — with ``unless_said`` — when every one of those strings already was
        (e.g. the files a summary already named)."""

        text: str
        unless_said: tuple[str, ...] = ()

    @dataclass(frozen=True, slots=True)
    class Json:
        """A JSON value, shown pretty-printed."""

        value: Any

    @classmethod
    def of(cls, media_type: str, value: Any) -> DataView | None:
        """The view of a data part of ``media_type`` holding ``value``; None
        when no view knows the type, or its view does not know the value."""
        view = cls.VIEWS.get(media_type.split(";", 1)[0].strip().lower())
        return view(value) if view is not None else None


def _adds_something(value: Any) -> bool:
    return value not in (None, "", [], {})


#: Finding severities → table cell levels.
_LEVELS = {"high": "error", "medium": "warning", "low": "note"}


def _findings_table(findings: list[Any]) -> DataView.Table:
    """File, line, rule, severity, issue and, when a finding has one, recommendation."""
    columns = ["file", "line", "rule", "severity", "issue"]
    if any(isinstance(f, dict) and f.get("recommendation") for f in findings):
        columns.append("recommendation")
    rows: list[tuple[str | DataView.Cell, ...]] = []
    for f in findings:
        if not isinstance(f, dict):
            rows.append(("",) * (len(columns) - 1) + (json.dumps(f),))
            continue
        line = f.get("line", "")
        severity = str(f.get("severity", ""))
        cells: list[str | DataView.Cell] = [
            str(f.get("file", "")),
            str(int(line)) if isinstance(line, float) and line.is_integer() else str(line),
            str(f.get("rule", "")),
            DataView.Cell(severity, _LEVELS.get(severity.lower(), "")),
            str(f.get("issue", "")),
        ]
        if len(columns) > 5:
            cells.append(str(f.get("recommendation", "")))
        rows.append(tuple(cells))
    title = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
    return DataView.Table(title, tuple(columns), tuple(rows), frozenset({"line", "rule", "severity"}))


def findings_view(value: Any) -> DataView | None:
    """The findings as a table, then the summary, then the skipped files
    unless the summary names them, then any other member that adds something
    as JSON; ``plain_text`` is the summary (the text part's first line)."""
    findings = value.get("findings") if isinstance(value, dict) else None
    if not isinstance(findings, list):
        return None
    blocks: list[DataView.Table | DataView.Text | DataView.Json] = [_findings_table(findings)]
    rest = {k: v for k, v in value.items() if k != "findings" and _adds_something(v)}
    summary = rest.pop("summary", None)
    if isinstance(summary, str):
        blocks.append(DataView.Text(summary))
    elif summary is not None:
        rest["summary"] = summary
    skipped = rest.pop("skipped", None)
    if isinstance(skipped, list) and all(isinstance(s, dict) and "file" in s for s in skipped):
        listed = ", ".join(f"{s['file']} ({s.get('reason', 'skipped')})" for s in skipped)
        blocks.append(DataView.Text(f"skipped: {listed}", unless_said=tuple(str(s["file"]) for s in skipped)))
    elif skipped is not None:
        rest["skipped"] = skipped
    if rest:
        blocks.append(DataView.Json(rest))
    return DataView(tuple(blocks), plain_text=summary if isinstance(summary, str) else "")


def _fn_line(f: dict[str, Any]) -> str:
    doc = f" — {f['docstring']}" if f["docstring"] else ""
    return f"{f['signature']}  [line {f['line']}, complexity {f['complexity']}]{doc}"


def outline_text(modules: list[dict[str, Any]]) -> str:
    """The explain agent's outline as plain text (its text part): per module,
    its path and docstring, imports, classes with their methods, functions,
    complexity (whole numbers written as integers, as they come back from
    JSON). Raises KeyError or TypeError for modules of another shape."""
    out: list[str] = []
    for m in modules:
        out.append(f"{m['path']}" + (f" — {m['docstring']}" if m["docstring"] else ""))
        if m["imports"]:
            out.append("  imports: " + "; ".join(m["imports"]))
        for c in m["classes"]:
            bases = f"({', '.join(c['bases'])})" if c["bases"] else ""
            out.append(
                f"  class {c['name']}{bases}  [line {c['line']}]"
                + (f" — {c['docstring']}" if c["docstring"] else "")
            )
            out.extend(f"    {_fn_line(f)}" for f in c["methods"])
        out.extend(f"  {_fn_line(f)}" for f in m["functions"])
        average = m["complexity"]["average"]
        average = int(average) if isinstance(average, float) and average.is_integer() else average
        out.append(f"  complexity: average {average}, max {m['complexity']['max']}")
    return "\n".join(out) or "no Python modules found"


def outline_view(value: Any) -> DataView | None:
    """The outline as the text the explain agent also sends, shown once
    (``plain_text``: its first line, the first module's path)."""
    modules = value.get("modules") if isinstance(value, dict) else None
    if not isinstance(modules, list):
        return None
    try:
        text = outline_text(modules)
    except (KeyError, TypeError, AttributeError):
        return None
    return DataView((DataView.Text(text),), plain_text=text.split("\n", 1)[0])


DataView.VIEWS.update({REVIEW_FINDINGS: findings_view, OUTLINE: outline_view})
