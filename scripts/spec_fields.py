"""Extracts the field tables of the A2A spec digest into JSON.

Reads section 3 of ``spec-digest.md`` (the shared A2A v1.0.1 digest: one table
or one prose line per message, ``name``=number forms for the small ones) and
prints, for every message and enum, what the digest says of each field:
number, proto name and, where the digest states them, JSON name, label
(repeated / optional / oneof / map) and REQUIRED. ``tests/proto`` compares the
generated descriptors with the committed output of this script.

Usage: python scripts/spec_fields.py [PATH_TO_DIGEST] > tests/proto/spec_fields.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "spec-digest.md"
_TICK = re.compile(r"`([^`]+)`")
_PROSE = re.compile(r"`(\w+)`=(\d+)(?: \(([^)]*)\))?")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _ticked(cell: str) -> str:
    m = _TICK.search(cell)
    return m.group(1) if m else cell.strip()


def _label(cell: str) -> str:
    cell = cell.strip()
    if cell.startswith("oneof"):
        return "oneof"
    return {"repeated": "repeated", "optional": "optional", "map": "map"}.get(cell, "")


def parse(text: str) -> dict[str, Any]:
    """{"messages": {name: {number: field}}, "enums": {name: {value: number}}}."""
    section = text.split("\n## 3.", 1)[1].split("\n## 4.", 1)[0]
    messages: dict[str, dict[str, dict[str, Any]]] = {}
    enums: dict[str, dict[str, int]] = {}
    current: list[str] = []
    header: list[str] | None = None
    for line in section.splitlines():
        if line.startswith("### 3."):
            current = [n for n in _TICK.findall(line) if n[0].isupper()]
            header = None
            continue
        if line.startswith("|"):
            cells = _cells(line)
            if set(cells[0]) <= {"-", ":"}:
                continue
            if header is None:
                header = [c.lower() for c in cells]
                continue
            if not current:
                continue
            row = dict(zip(header, cells, strict=False))
            if "value" in header and "number" in header:
                enums.setdefault(current[0], {})[_ticked(row["value"])] = int(row["number"])
                continue
            if "#" not in row or not row["#"].isdigit():
                continue
            field: dict[str, Any] = {"name": _ticked(row.get("proto name") or row.get("proto", ""))}
            json_cell = row.get("json") or row.get("json member")
            if json_cell:
                field["json_name"] = _ticked(json_cell)
            if "label" in row:
                field["label"] = _label(row["label"])
            if "req" in row:
                field["required"] = row["req"].strip() == "REQ"
            messages.setdefault(current[0], {})[row["#"]] = field
            continue
        header = None if not line.strip() else header
        # Prose forms: "* `Msg`: `a`=1 (...), `b`=2" or, under a heading, "`a`=1 (...)".
        target = None
        m = re.match(r"\* `(\w+)`(?: \([^)]*\))?: (.*)", line)
        if m and "=" in m.group(2):
            target, body = m.group(1), m.group(2)
        elif current and len(current) == 1 and _PROSE.match(line.strip()):
            target, body = current[0], line
        if target is None:
            continue
        for name, number, note in _PROSE.findall(body):
            note = note or ""
            field = {"name": name, "required": bool(re.search(r"\bREQ\b", note))}
            if "repeated" in note:
                field["label"] = "repeated"
            elif "map" in note:
                field["label"] = "map"
            messages.setdefault(target, {})[number] = field
    # 3.22 is written as "same shape as 3.21".
    if "DeleteTaskPushNotificationConfigRequest" not in messages:
        messages["DeleteTaskPushNotificationConfigRequest"] = dict(
            messages["GetTaskPushNotificationConfigRequest"]
        )
    return {"messages": messages, "enums": enums}


def parse_http(text: str) -> dict[str, list[list[str]]]:
    """Digest §2's service table: per RPC, the [verb, path, body] of the
    primary HTTP rule followed by its additional binding."""
    section = text.split("\n## 2.", 1)[1].split("\n## 3.", 1)[0]
    out: dict[str, list[list[str]]] = {}
    for line in section.splitlines():
        cells = _cells(line)
        if len(cells) < 7 or not cells[0].isdigit():
            continue
        rpc = _ticked(cells[1])
        verb, path = _ticked(cells[4]).split(" ", 1)
        body = "*" if _ticked(cells[5]) == "*" else ""
        extra_verb, extra_path = _ticked(cells[6]).split(" ", 1)
        extra_body = "*" if "body `*`" in cells[6] else ""
        out[rpc] = [[verb.lower(), path, body], [extra_verb.lower(), extra_path, extra_body]]
    return out


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    text = path.read_text()
    json.dump({**parse(text), "http": parse_http(text)}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
