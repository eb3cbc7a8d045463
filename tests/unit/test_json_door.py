"""json_format only through :mod:`a2a_grpc.protocol.protojson`: the one door to protobuf's JSON
codec (the tests use json_format as the independent oracle)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "a2a_grpc"
CODEC = PACKAGE / "protocol" / "protojson"


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO)
        if "gen" not in rel.parts:
            yield str(rel), ast.parse(path.read_text(encoding="utf-8"))


def _imports_json_format(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "google.protobuf.json_format":
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "google.protobuf"
            and any(a.name == "json_format" for a in node.names)
        ):
            return True
        if isinstance(node, ast.Import) and any(a.name == "google.protobuf.json_format" for a in node.names):
            return True
    return False


def test_json_format_only_through_protojson() -> None:
    """Encoding and decoding go through the codec; only it imports json_format."""
    codec = str(CODEC.relative_to(REPO))
    outside = [name for name, tree in _sources() if _imports_json_format(tree) and not name.startswith(codec)]
    assert outside == []
