"""Extracts the A2A v0.3 gRPC tables of the legacy digest into JSON.

Reads section 4 of ``legacy-digest.md`` (the shared wire digest of A2A v0.3.0
and older): the RPC table of §4.2 (name, request, response, streaming, the
``google.api.http`` rule, ``method_signature``) and, from §4.3, every message
table (field number, proto name, JSON name, type, label, REQUIRED) and the two
enums. ``tests/proto/test_legacy_descriptor.py`` compares the v0.3 schema in
``proto/a2a/v1/a2a.proto`` with the committed output of this script.

Usage: python scripts/legacy_fields.py [PATH_TO_DIGEST] > tests/proto/legacy_fields.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "legacy-digest.md"
_TICK = re.compile(r"`([^`]+)`")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _ticked(cell: str) -> str:
    m = _TICK.search(cell)
    return m.group(1) if m else cell.strip()


def _section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def parse_messages(text: str) -> dict[str, Any]:
    """{"messages": {name: {number: field}}, "enums": {name: {value: number}}} of §4.3."""
    section = _section(text, "\n### 4.3", "\n### 4.4")
    messages: dict[str, dict[str, dict[str, Any]]] = {}
    enums: dict[str, dict[str, int]] = {}
    current = ""
    for line in section.splitlines():
        heading = re.match(r"\*\*`(\w+)`\*\*", line)
        if heading:
            current = heading.group(1)
            messages[current] = {}
            continue
        prose_enum = re.match(r"`(\w+)`: (`\w+` = \d+(?:, `\w+` = \d+)*)", line)
        if prose_enum:
            enums[prose_enum.group(1)] = {n: int(v) for n, v in re.findall(r"`(\w+)` = (\d+)", line)}
            continue
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if cells[0].endswith(" value") and cells[1] == "#":
            current = _ticked(cells[0])
            enums[current] = {}
            continue
        if current in enums and len(cells) >= 2 and cells[1].isdigit():
            enums[current][_ticked(cells[0])] = int(cells[1])
            continue
        if current in messages and cells[0].isdigit():
            label = cells[4].split(" ", 1)[0]
            messages[current][cells[0]] = {
                "name": _ticked(cells[1]),
                "json_name": _ticked(cells[2]),
                "type": _ticked(cells[3]),
                "label": label,
                "required": cells[5] == "REQ",
            }
    return {"messages": messages, "enums": enums}


def parse_rpcs(text: str) -> dict[str, Any]:
    """{rpc: {request, response, streaming, http: [verb, path, body], signature}} of §4.2."""
    section = _section(text, "\n### 4.2", "\n### 4.3")
    rpcs: dict[str, Any] = {}
    for line in section.splitlines():
        cells = _cells(line)
        if len(cells) < 7 or not cells[0].isdigit():
            continue
        request, response = (_ticked(p) for p in cells[2].split("→"))
        rule = _TICK.findall(cells[4])
        verb, path = rule[0].split(": ", 1)
        body = rule[1].split(": ", 1)[1].strip('"') if len(rule) > 1 else ""
        rpcs[_ticked(cells[1])] = {
            "request": request,
            "response": response.removeprefix("stream ").strip(),
            "streaming": cells[3] == "server",
            "http": [verb, path.strip('"'), body],
            "signature": _ticked(cells[5]).strip('"') if cells[5] != "—" else "",
        }
    return rpcs


def parse(text: str) -> dict[str, Any]:
    return {**parse_messages(text), "rpcs": parse_rpcs(text)}


if __name__ == "__main__":
    digest = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    print(json.dumps(parse(digest.read_text()), indent=1, sort_keys=True))
