"""The import rules of docs/architecture.md, checked on the source.

Each module belongs to a room; a room may not import what the table in
docs/architecture.md forbids it. Imports are read with ``ast`` (nothing is
imported), at module level — a function that imports an optional extra when
it is called is how optional features stay optional. ``if TYPE_CHECKING:``
blocks are ignored (they never run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: The transport-free core: everything an operation needs, no transport.
CORE = (
    "a2a_grpc.types",
    "a2a_grpc.errors",
    "a2a_grpc.context",
    "a2a_grpc.typecache",
    "a2a_grpc.protojson",
    "a2a_grpc.validation",
    "a2a_grpc.httprule",
    "a2a_grpc.paging",
    "a2a_grpc.taskupdate",
    "a2a_grpc.events",
    "a2a_grpc.execution",
    "a2a_grpc.drive",
    "a2a_grpc.executor",
    "a2a_grpc.card",
    "a2a_grpc.interceptors",
    "a2a_grpc.background",
    "a2a_grpc.handler",
    "a2a_grpc.pushconfigs",
    "a2a_grpc.store",
    "a2a_grpc.cluster",
    "a2a_grpc.mediatypes",
    "a2a_grpc.memtrim",
)
#: The gRPC server's own pieces, beside A2AServer: they may use everything server-side.
ASSEMBLY = ("a2a_grpc.server", "a2a_grpc.connlimits", "a2a_grpc.health", "a2a_grpc.reflection")
#: Transport security and card signatures: used by the server, the gateway and the client alike.
SECURITY = ("a2a_grpc.tls", "a2a_grpc.cardsign", "a2a_grpc.auth")
SERVER_SIDE = ("a2a_grpc.server", "a2a_grpc.servicer", "a2a_grpc.gateway", "a2a_grpc.push")
OUTER = ("a2a_grpc.client", "a2a_grpc.cli", "a2a_grpc.agents")
TRANSPORTS = ("aiohttp", "grpc.aio", "grpc_health", "grpc_reflection")
#: Optional extras: imported at module level only by the modules of their own feature.
EXTRAS = (
    "asyncpg",
    "uvloop",
    "click",
    "rich",
    "ruff",
    "unidiff",
    "opentelemetry",
    "prometheus_client",
    "cryptography",
    "rfc8785",
    "jwt",
    "tomlkit",
    "redis",
    "limits",
)
EXTRA_HOMES = {
    "click": ("a2a_grpc.cli",),
    "rich": ("a2a_grpc.cli",),
    "unidiff": ("a2a_grpc.agents.code_review", "a2a_grpc.agents.review"),
    "ruff": ("a2a_grpc.agents.review",),
    "opentelemetry": ("a2a_grpc.telemetry",),
    "prometheus_client": ("a2a_grpc.telemetry",),
    "jwt": ("a2a_grpc.auth",),
    "tomlkit": ("a2a_grpc.auth", "a2a_grpc.cli"),
    "limits": ("a2a_grpc.auth",),
}

#: room prefix -> what it may not import
RULES: dict[str, tuple[str, ...]] = {
    **{room: (*TRANSPORTS, *SERVER_SIDE, *OUTER) for room in CORE},
    "a2a_grpc.servicer": (*TRANSPORTS, "a2a_grpc.gateway", "a2a_grpc.server", "a2a_grpc.push", *OUTER),
    "a2a_grpc.gateway": ("a2a_grpc.handler", "a2a_grpc.server", "a2a_grpc.push", *OUTER),
    # dialect adapters sit in front of the gateway's servicer, like the gateway
    "a2a_grpc.compat": ("a2a_grpc.handler", "a2a_grpc.server", "a2a_grpc.push", *OUTER),
    "a2a_grpc.push": ("a2a_grpc.gateway", "a2a_grpc.server", "a2a_grpc.servicer", "a2a_grpc.handler", *OUTER),
    **{
        room: (
            "aiohttp",
            "a2a_grpc.gateway",
            "a2a_grpc.server",
            "a2a_grpc.servicer",
            "a2a_grpc.handler",
            *OUTER,
        )
        for room in SECURITY
    },
    "a2a_grpc.client": (
        "a2a_grpc.gateway",
        "a2a_grpc.server",
        "a2a_grpc.servicer",
        "a2a_grpc.handler",
        "a2a_grpc.execution",
        "a2a_grpc.drive",
        "a2a_grpc.store",
        "a2a_grpc.push",
        "a2a_grpc.cli",
    ),
}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Iterator[tuple[str, Path]]:
    for root in ("a2a_grpc",):
        for path in sorted((REPO / root).rglob("*.py")):
            if "gen" not in path.relative_to(REPO).parts:
                yield _module_name(path), path


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _module_level_imports(tree: ast.Module) -> Iterator[str]:
    """Imports that run when the module is imported (not in functions or classes)."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.If | ast.Try) and not _is_type_checking(node):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, block, []):
                    pending.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])


def _violations() -> Iterator[str]:
    for module, path in _sources():
        imported = set(_module_level_imports(ast.parse(path.read_text(encoding="utf-8"))))
        for room, forbidden in RULES.items():
            if not _under(module, room):
                continue
            for banned in forbidden:
                hits = sorted(name for name in imported if _under(name, banned))
                if hits:
                    yield f"{module} ({room}) imports {hits[0]}"
        for extra in EXTRAS:
            if any(_under(name, extra) for name in imported) and not any(
                _under(module, home) for home in EXTRA_HOMES.get(extra, ())
            ):
                yield f"{module} imports the optional {extra} at import time"


def test_every_room_keeps_its_imports() -> None:
    assert list(_violations()) == []


def test_the_rules_cover_every_module() -> None:
    """A new module lands in a room of docs/architecture.md (or the rules grow)."""
    rooms = (
        *RULES,
        *OUTER,
        *ASSEMBLY,
        "a2a_grpc.gen",
        "a2a_grpc.telemetry",
        "a2a_grpc.auth",
        "a2a_grpc.registry",
    )
    homeless = [m for m, _ in _sources() if m != "a2a_grpc" and not any(_under(m, r) for r in rooms)]
    assert homeless == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("a2a_grpc.handler", "import aiohttp\n", "a2a_grpc.handler (a2a_grpc.handler) imports aiohttp"),
        ("a2a_grpc.store.memory", "from a2a_grpc.gateway import app\n", "imports a2a_grpc.gateway"),
        ("a2a_grpc.events", "import uvloop\n", "imports the optional uvloop at import time"),
    ],
)
def test_a_forbidden_import_is_found(
    module: str, source: str, expected: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The checker itself catches what the rules forbid (and ignores lazy imports)."""
    fake = tmp_path / "fake.py"
    fake.write_text(source + "def lazy() -> None:\n    import asyncpg\n")
    monkeypatch.setattr(
        "tests.core.test_architecture._sources",
        lambda: iter([(module, fake)]),
    )
    found = list(_violations())
    assert len(found) == 1 and expected in found[0], found
