"""The layers of docs/architecture.md, checked on the source.

Every module of ``a2a_grpc`` belongs to one room of :data:`ROOMS`; a room may
import its own package and the rooms its row lists, nothing else of the
library. Imports are read with ``ast`` (nothing is imported) wherever they
are — at module level, inside functions, under ``if TYPE_CHECKING:`` — since
each is a dependency. Optional extras are the one exception with a softer
rule: they may be imported at module level only by their own feature (a
function that imports an extra when called is how a feature stays optional).

Applications (the CLI, the built-in agents, the registry) sit on top and use
the library's public surface only: public modules (no ``_``-prefixed part in
the dotted name) and the names in their ``__all__``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

L0 = ("a2a_grpc.types", "a2a_grpc.errors", "a2a_grpc.context", "a2a_grpc.principal", "a2a_grpc.gen")
L1 = ("a2a_grpc.protocol",)
L2 = ("a2a_grpc.core",)
STORE = ("a2a_grpc.store",)
FEATURES = ("a2a_grpc.auth", "a2a_grpc.telemetry", "a2a_grpc.cluster", "a2a_grpc.push")
BINDINGS = ("a2a_grpc.bindings",)
DIALECTS = ("a2a_grpc.dialects",)
APPS = ("a2a_grpc.cli", "a2a_grpc.agents", "a2a_grpc.registry", "a2a_grpc.console")
LIBRARY = (*L0, *L1, *L2, *STORE, *FEATURES, *BINDINGS, *DIALECTS, "a2a_grpc.client", "a2a_grpc.server")

#: room -> (its layer, what of the library it may import besides its own package)
ROOMS: dict[str, tuple[str, tuple[str, ...]]] = {
    **{room: ("L0 vocabulary", L0) for room in L0},
    "a2a_grpc.protocol": ("L1 protocol", L0),
    "a2a_grpc.core": ("L2 core", (*L0, *L1)),
    "a2a_grpc.store": ("L3 adapter", (*L0, *L1, *L2)),
    "a2a_grpc.auth": ("L3 feature", (*L0, *L1, *L2)),
    "a2a_grpc.telemetry": ("L3 feature", (*L0, *L1, *L2)),
    "a2a_grpc.push": ("L3 feature", (*L0, *L1, *L2)),
    "a2a_grpc.cluster": ("L3 feature", (*L0, *L1, *L2, *STORE)),
    "a2a_grpc.bindings": ("L4 bindings", (*L0, *L1, *L2)),
    "a2a_grpc.dialects": ("L5 dialects", (*L0, *L1, *L2, *BINDINGS)),
    # The client speaks every dialect the server does, from the same tables.
    "a2a_grpc.client": ("client", (*L0, *L1, "a2a_grpc.bindings.tls", *DIALECTS)),
    "a2a_grpc.server": ("L6 composition root", LIBRARY),
    # The package's own __init__: the public surface, re-exported lazily.
    "a2a_grpc": ("public surface", LIBRARY),
    **{room: ("application", ()) for room in APPS},
}

#: Transports the vocabulary, the protocol rules and the kernel never import.
TRANSPORTS = ("aiohttp", "grpc.aio", "grpc_health", "grpc_reflection")
TRANSPORT_FREE = (*L0, *L1, *L2)
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
    "unidiff": ("a2a_grpc.agents._code_review", "a2a_grpc.agents._review"),
    "ruff": ("a2a_grpc.agents._review",),
    "opentelemetry": ("a2a_grpc.telemetry",),
    "prometheus_client": ("a2a_grpc.telemetry",),
    "jwt": ("a2a_grpc.auth",),
    "tomlkit": ("a2a_grpc.auth", "a2a_grpc.cli"),
    "limits": ("a2a_grpc.auth",),
}
#: The most names the public modules' ``__all__`` lists may hold together.
PUBLIC_NAME_BUDGET = 150
#: Where the count stands while the surface shrinks to the budget (a ratchet:
#: lowered by each commit that trims it, never raised).
PUBLIC_NAMES_NOW = 158

#: Wrong arrows still on the way out, each removed by the commit that fixes it
#: (every entry must still be a violation: see test_debts_are_real).
DEBTS: frozenset[str] = frozenset(
    {
        "a2a_grpc.agents (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.agents._code_review (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.agents._echo (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.agents._explain (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.agents._orchestration.delegate (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.agents._orchestrator (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.agents._orchestrator (application) imports the private a2a_grpc.registry._client",
        "a2a_grpc.agents._orchestrator (application) imports the private a2a_grpc.registry._types",
        "a2a_grpc.bindings._http.app (L4 bindings) imports a2a_grpc.dialects._jsonrpc",
        "a2a_grpc.bindings._http.app (L4 bindings) imports a2a_grpc.dialects._tutorial",
        "a2a_grpc.bindings._http.app (L4 bindings) imports a2a_grpc.dialects._v01",
        "a2a_grpc.bindings._http.app (L4 bindings) imports a2a_grpc.dialects._v01calls",
        "a2a_grpc.bindings._http.app (L4 bindings) imports a2a_grpc.dialects._v03",
        "a2a_grpc.bindings._http.app (L4 bindings) imports a2a_grpc.dialects._v03rest",
        "a2a_grpc.bindings._servicer (L4 bindings) imports a2a_grpc.auth._interceptors",
        "a2a_grpc.bindings._servicer (L4 bindings) imports a2a_grpc.auth._limits",
        "a2a_grpc.bindings._servicer (L4 bindings) imports a2a_grpc.auth._policy",
        "a2a_grpc.bindings._servicer (L4 bindings) imports a2a_grpc.auth._scopes",
        "a2a_grpc.cli._admin (application) imports the private a2a_grpc.store._retention",
        "a2a_grpc.cli._auth_cmd (application) imports the private a2a_grpc.auth._apikeys",
        "a2a_grpc.cli._auth_cmd (application) imports the private a2a_grpc.auth._base",
        "a2a_grpc.cli._auth_cmd (application) imports the private a2a_grpc.auth._policy",
        "a2a_grpc.cli._client_cmds (application) imports the private a2a_grpc.client._auth",
        "a2a_grpc.cli._client_cmds (application) imports the private a2a_grpc.client._card",
        "a2a_grpc.cli._client_cmds (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.cli._cluster_opts (application) imports the private a2a_grpc.cluster._leases",
        "a2a_grpc.cli._conn_opts (application) imports the private a2a_grpc.bindings._connlimits",
        "a2a_grpc.cli._ops (application) imports the private a2a_grpc.store._retention",
        "a2a_grpc.cli._ops (application) imports the private a2a_grpc.telemetry._logs",
        "a2a_grpc.cli._registry_cmd (application) imports the private a2a_grpc.registry._client",
        "a2a_grpc.cli._registry_cmd (application) imports the private a2a_grpc.registry._server",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.auth._audit",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.auth._policy",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.bindings._connlimits",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.cluster._leases",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.cluster._store",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.cluster._workers",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.core._card",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.core._executor",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.core._handler",
        "a2a_grpc.cli._serve (application) imports the private a2a_grpc.registry._client",
        "a2a_grpc.push._dispatcher (L3 feature) imports a2a_grpc.dialects._v01",
        "a2a_grpc.push._dispatcher (L3 feature) imports a2a_grpc.dialects._v03",
        "a2a_grpc.registry._catalog (application) imports the private a2a_grpc.client._card",
        "a2a_grpc.registry._fetch (application) imports the private a2a_grpc.client._card",
        "a2a_grpc.registry._fetch (application) imports the private a2a_grpc.push._ssrf",
        "a2a_grpc.registry._health (application) imports the private a2a_grpc.core._background",
        "a2a_grpc.registry._health (application) imports the private a2a_grpc.push._ssrf",
        "a2a_grpc.registry._query (application) imports the private a2a_grpc.client._card",
        "a2a_grpc.registry._server (application) imports the private a2a_grpc.bindings._http.jsonrpc",
        "a2a_grpc.registry._server (application) imports the private a2a_grpc.bindings._http.rest",
        "a2a_grpc.registry._server (application) imports the private a2a_grpc.protocol._httprule",
        "a2a_grpc.registry._servicer (application) imports the private a2a_grpc.bindings._servicer",
        "a2a_grpc.registry._store (application) imports the private a2a_grpc.store._sql.engine",
    }
)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Iterator[tuple[str, Path]]:
    for path in sorted((REPO / "a2a_grpc").rglob("*.py")):
        if "gen" not in path.relative_to(REPO).parts:
            yield _module_name(path), path


def _room(module: str) -> str | None:
    """The most specific room ``module`` lives in."""
    rooms = [room for room in ROOMS if _under(module, room)]
    return max(rooms, key=len) if rooms else None


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module) -> Iterator[tuple[str, str | None]]:
    """Every import in the module as (module, imported name or None)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.module, alias.name


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


def _is_public(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


def _public_names() -> dict[str, tuple[str, ...]]:
    """Each public module's ``__all__`` (a module without one: its public top-level names)."""
    names: dict[str, tuple[str, ...]] = {}
    for module, path in _sources():
        if not _is_public(module):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        listed = None
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None:  # type: ignore[attr-defined]
                listed = tuple(ast.literal_eval(node.value))  # type: ignore[attr-defined]
        if listed is None:
            listed = tuple(
                n.name
                for n in tree.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and not n.name.startswith("_")
            )
        names[module] = listed
    return names


def _resolve(module: str, name: str | None) -> str:
    """``from module import name``: the module it names, when name is one."""
    if name is not None and (
        (REPO / Path(*module.split(".")) / f"{name}.py").exists()
        or (REPO / Path(*module.split(".")) / name).is_dir()
    ):
        return f"{module}.{name}"
    return module


def _layer_violations(module: str, tree: ast.Module, public: dict[str, tuple[str, ...]]) -> Iterator[str]:
    room = _room(module)
    if room is None:
        return
    layer, allowed = ROOMS[room]
    home = room if room != "a2a_grpc" else module
    for imported, name in _imports(tree):
        target = _resolve(imported, name)
        if not _under(target, "a2a_grpc") or _under(target, home):
            continue
        if layer == "application":
            if _under(target, "a2a_grpc.gen"):
                continue
            if not _is_public(target):
                yield f"{module} ({layer}) imports the private {target}"
            elif name is not None and target == imported and name not in public.get(imported, ()):
                yield f"{module} ({layer}) imports {imported}.{name}, not in its __all__"
            continue
        if target == "a2a_grpc" or not any(_under(target, ok) for ok in allowed):
            yield f"{module} ({layer}) imports {target}"


def _violations() -> Iterator[str]:
    public = _public_names()
    for module, path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        yield from _layer_violations(module, tree, public)
        if any(_under(module, room) for room in TRANSPORT_FREE):
            for imported, _name in _imports(tree):
                hit = next((t for t in TRANSPORTS if _under(imported, t)), None)
                if hit is not None:
                    yield f"{module} ({_room(module)}) imports the transport {hit}"
        level = set(_module_level_imports(tree))
        for extra in EXTRAS:
            if any(_under(name, extra) for name in level) and not any(
                _under(module, home) for home in EXTRA_HOMES.get(extra, ())
            ):
                yield f"{module} imports the optional {extra} at import time"


def test_every_room_keeps_its_imports() -> None:
    assert sorted(set(_violations()) - DEBTS) == []


def test_debts_are_real() -> None:
    """Each listed debt is still a wrong arrow (a fixed one leaves the list)."""
    assert sorted(DEBTS - set(_violations())) == []


def test_every_module_has_a_room() -> None:
    """A new module lands in a room of docs/architecture.md (or the table grows)."""
    homeless = [m for m, _ in _sources() if _room(m) is None]
    assert homeless == []


def test_the_public_surface_is_small() -> None:
    """Private machinery is private: the public modules' ``__all__`` lists
    together name at most PUBLIC_NAME_BUDGET names."""
    public = _public_names()
    total = sum(len(names) for names in public.values())
    assert total <= max(PUBLIC_NAME_BUDGET, PUBLIC_NAMES_NOW), sorted(
        ((len(v), k) for k, v in public.items()), reverse=True
    )


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("a2a_grpc.core._handler", "import aiohttp\n", "imports the transport aiohttp"),
        (
            "a2a_grpc.core._drive",
            "from a2a_grpc.telemetry import NO_OBSERVER\n",
            "imports a2a_grpc.telemetry",
        ),
        (
            "a2a_grpc.core._execution",
            "def f():\n    from a2a_grpc.cluster import _leases\n",
            "imports a2a_grpc.cluster",
        ),
        ("a2a_grpc.telemetry._x", "from a2a_grpc.auth import Principal\n", "imports a2a_grpc.auth"),
        ("a2a_grpc.bindings._http.app", "from a2a_grpc.dialects import _v01\n", "imports a2a_grpc.dialects"),
        ("a2a_grpc.push._dispatcher", "from a2a_grpc.dialects import _v03\n", "imports a2a_grpc.dialects"),
        (
            "a2a_grpc.context",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a2a_grpc.auth import Principal\n",
            "imports a2a_grpc.auth",
        ),
        ("a2a_grpc.cli._serve", "from a2a_grpc.core._handler import HandlerConfig\n", "imports the private"),
        ("a2a_grpc.cli._serve", "from a2a_grpc.store import _memory\n", "imports the private"),
        ("a2a_grpc.cli._serve", "from a2a_grpc.errors import _table\n", "not in its __all__"),
        ("a2a_grpc.core._events", "import uvloop\n", "imports the optional uvloop at import time"),
    ],
)
def test_a_wrong_arrow_is_found(
    module: str, source: str, expected: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The checker itself catches what the table forbids: the wrong arrows of
    the old layout among them (core → telemetry, a lazy core → feature import,
    gateway ↔ dialects, push → dialects, context → auth, an application
    reaching past the public surface)."""
    fake = tmp_path / "fake.py"
    fake.write_text(source)
    monkeypatch.setattr("tests.core.test_architecture._sources", lambda: iter([(module, fake)]))
    found = list(_violations())
    assert len(found) == 1 and expected in found[0], found
