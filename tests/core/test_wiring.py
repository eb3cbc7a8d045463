"""Nothing is wired by mutating a built object (docs/architecture.md).

The composition root (``a2a_grpc/server.py``) gives every part what it
needs in its constructor. These checks read the package's source with
``ast`` (nothing is imported) and fail when an old way of wiring comes back:

* an assignment to one of the kernel's wiring attributes (:data:`WIRED`:
  ``handler.card = ...``, ``handler.bus = ...``, ``handler.executions = ...``,
  ``x.observer = ...``, ``executions.time_limit = ...``, the relay's hooks)
  anywhere but ``self.<name> = ...`` inside that object's own ``__init__``;
* a function that wires by reaching into a built object: ``attach`` (the
  old ``telemetry.attach`` and ``Cluster.attach``), ``describe_card`` (the
  old in-place card mutation), a ``watch(self, handler, ...)`` (the old
  ``Metrics.watch``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.test_architecture import _sources

#: Attributes the root sets through constructors only.
WIRED = frozenset(
    {
        "card",
        "extended_card",
        "bus",
        "writer",
        "executions",
        "observer",
        "time_limit",
        "control",
        "on_cancel",
        "on_health",
        "peer_identities",
    }
)
#: Functions that wired by reaching into built objects.
FORBIDDEN_FUNCTIONS = frozenset({"attach", "describe_card"})


def _targets(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from _flatten(target)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        yield from _flatten(node.target)


def _flatten(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _flatten(element)
    else:
        yield target


def _wiring(module: str, tree: ast.Module) -> Iterator[str]:
    """Every post-build wiring in ``tree`` (see the module docstring)."""

    def visit(node: ast.AST, function: str | None) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            inner = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = child.name
                args = [a.arg for a in child.args.args]
                if child.name in FORBIDDEN_FUNCTIONS or (child.name == "watch" and args[1:2] == ["handler"]):
                    yield f"{module}:{child.lineno} defines {child.name}()"
            for target in _targets(child):
                if isinstance(target, ast.Attribute) and target.attr in WIRED:
                    owner = ast.unparse(target.value)
                    if owner != "self" or function != "__init__":
                        yield f"{module}:{child.lineno} assigns {owner}.{target.attr} outside a constructor"
            yield from visit(child, inner)

    yield from visit(tree, None)


#: Not the server's object graph: the client's ``card`` is the card it last read.
NOT_WIRING = ("a2a_grpc.client",)


def _all_wiring() -> list[str]:
    return [
        w
        for module, path in _sources()
        if not module.startswith(NOT_WIRING)
        for w in _wiring(module, ast.parse(path.read_text("utf-8")))
    ]


def test_nothing_is_wired_after_it_is_built() -> None:
    assert _all_wiring() == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(handler):\n    handler.card = make()\n", "assigns handler.card outside"),
        ("def f(h):\n    h.writer.bus = bus\n", "assigns h.writer.bus outside"),
        ("class C:\n    def start(self):\n        self.executions = x\n", "assigns self.executions outside"),
        ("def f(ex, o):\n    ex.observer, ex.count = o, 3\n", "assigns ex.observer outside"),
        (
            "class C:\n    def __init__(self, relay):\n        relay.on_cancel = f\n",
            "assigns relay.on_cancel",
        ),
        ("def attach(observer, handler):\n    pass\n", "defines attach()"),
        ("class M:\n    def watch(self, handler, push):\n        pass\n", "defines watch()"),
        ("class P:\n    def describe_card(self, card):\n        pass\n", "defines describe_card()"),
    ],
)
def test_a_wiring_is_found(source: str, expected: str, tmp_path: Path) -> None:
    """The check catches each old way of wiring (and its ``self`` form
    outside ``__init__``)."""
    found = list(_wiring("a2a_grpc.x", ast.parse(source)))
    assert len(found) == 1 and expected in found[0], found


def test_a_constructor_may_set_its_own_parts() -> None:
    source = (
        "class C:\n    def __init__(self, bus, observer):\n        self.bus, self.observer = bus, observer\n"
    )
    assert list(_wiring("a2a_grpc.x", ast.parse(source))) == []
