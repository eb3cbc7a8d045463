"""protobuf behind two doors: ``json_format`` only through :mod:`a2a_grpc.protocol.protojson`,
protobuf's private names only in :mod:`a2a_grpc.protocol._pbcompat` — and each private name the
shim uses still exists and still does what the codec relies on (a protobuf upgrade that removes or
changes one fails here, naming it, rather than somewhere in the codec)."""

from __future__ import annotations

import ast
import importlib
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format, wrappers_pb2

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "a2a_grpc"
SHIM = PACKAGE / "protocol" / "_pbcompat.py"
CODEC = PACKAGE / "protocol" / "protojson"
#: Modules of protobuf that are internal as a whole.
INTERNAL_MODULES = ("google.protobuf.internal", "google.protobuf.pyext", "google._upb")


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO)
        if "gen" not in rel.parts:
            yield str(rel), ast.parse(path.read_text(encoding="utf-8"))


def _protobuf_bindings(tree: ast.Module) -> dict[str, str]:
    """Local name -> the protobuf module or object it names, from the module's imports."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            ("google.protobuf", "google._upb")
        ):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("google.protobuf") and alias.asname:
                    bound[alias.asname] = alias.name
    return bound


def _private_uses(tree: ast.Module) -> Iterator[str]:
    """Every private protobuf name the module uses: internal modules, ``_``-prefixed
    imports, and ``_``-prefixed attributes of a protobuf module."""
    bound = _protobuf_bindings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            yield from (n for n in names if n.startswith(INTERNAL_MODULES))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("google.protobuf"):
                yield from (f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_"))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            yield f"{bound[node.value.id]}.{node.attr}"


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
    """Encoding and decoding go through the codec; only it (and the shim of private names)
    imports json_format."""
    shim = str(SHIM.relative_to(REPO))
    codec = str(CODEC.relative_to(REPO))
    outside = [
        name
        for name, tree in _sources()
        if _imports_json_format(tree) and name != shim and not name.startswith(codec)
    ]
    assert outside == []


def test_private_protobuf_names_only_in_the_shim() -> None:
    shim = str(SHIM.relative_to(REPO))
    found = {name: sorted(set(_private_uses(tree))) for name, tree in _sources() if name != shim}
    assert {name: uses for name, uses in found.items() if uses} == {}


def _shim_names() -> list[str]:
    return sorted(set(_private_uses(ast.parse(SHIM.read_text(encoding="utf-8")))))


def test_the_checker_sees_what_the_shim_uses() -> None:
    assert _shim_names() == [
        "google.protobuf.internal",
        "google.protobuf.json_format._ConvertFloat",
        "google.protobuf.json_format._ConvertInteger",
        "google.protobuf.json_format._Printer",
        "google.protobuf.json_format._UNPAIRED_SURROGATE_PATTERN",
        "google.protobuf.json_format._VALID_EXTENSION_NAME",
    ]


@pytest.mark.parametrize("dotted", [n for n in _shim_names() if n.count(".") > 2])
def test_each_private_name_of_the_shim_still_exists(dotted: str) -> None:
    """Read from protobuf itself (not through the shim, whose import would fail first)."""
    module, _, name = dotted.rpartition(".")
    assert hasattr(importlib.import_module(module), name), f"protobuf no longer has {dotted}: see _pbcompat"


def test_enum_names_are_read_as_the_running_json_format_reads_them() -> None:
    """``json_enum_option`` is the one optional name: json_format reads custom enum JSON names
    from protobuf 7.36 on (``_Printer._GetJsonEnumValueOption``); before, the shim gives None,
    as json_format then does. Either way the codec names every enum value as json_format does."""
    from a2a_grpc.protocol import _pbcompat as pbc
    from a2a_grpc.protocol import protojson
    from a2a_grpc.types import pb

    assert (pbc._ENUM_OPTION is not None) == hasattr(json_format._Printer(), "_GetJsonEnumValueOption")  # type: ignore[attr-defined]
    for state in pb.TaskState.values()[1:]:
        for role in pb.Role.values()[1:]:
            status = pb.TaskStatus(state=state, message=pb.Message(role=role))
            ours, theirs = protojson.to_dict(status), json_format.MessageToDict(status)
            assert (ours["state"], ours["message"]["role"]) == (theirs["state"], theirs["message"]["role"])


def test_the_shim_behaves_as_the_codec_relies_on() -> None:
    from a2a_grpc.protocol import _pbcompat as pbc
    from a2a_grpc.types import pb

    assert pbc.UNPAIRED_SURROGATE.search("a\ud800b") and pbc.UNPAIRED_SURROGATE.search("\udc00")
    assert not pbc.UNPAIRED_SURROGATE.search("🙂 ok")
    assert pbc.EXTENSION_KEY.match("[pkg.ext_1]") and not pbc.EXTENSION_KEY.match("pkg")
    assert [pbc.convert_integer(v) for v in ("7", 7.0, "-3", "1e3")] == [7, 7, -3, 1000]
    for bad in ("x", 7.5, "7.5", True):
        with pytest.raises((json_format.ParseError, ValueError)):
            pbc.convert_integer(bad)
    double = wrappers_pb2.DoubleValue.DESCRIPTOR.fields_by_name["value"]
    single = wrappers_pb2.FloatValue.DESCRIPTOR.fields_by_name["value"]
    assert math.isnan(pbc.convert_float("NaN", double)) and pbc.convert_float("1.5", double) == 1.5
    assert pbc.convert_float("-Infinity", double) == -math.inf
    with pytest.raises(json_format.ParseError):
        pbc.convert_float(1e39, single)  # beyond a 32-bit float
    assert pbc.shortest_float(0.10000000149011612) == 0.1  # float32(0.1), printed as 0.1
    value = pb.TaskState.DESCRIPTOR.values_by_name["TASK_STATE_COMPLETED"]
    assert pbc.json_enum_option(value) is None  # no custom JSON name: its proto name is used
