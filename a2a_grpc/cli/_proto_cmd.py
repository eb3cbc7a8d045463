"""``a2a-grpc proto``: write the A2A schema as a self-contained tree for ``protoc``.

The tree holds this package's ``lf/a2a/v1/a2a.proto`` (shipped as package
data, the same file as the repository's ``proto/``) and every ``google/api``
file it imports, directly or not, read from the installed
``googleapis-common-protos`` package. The ``google/protobuf`` well-known types
are left out: ``protoc``, ``grpc_tools.protoc`` and ``buf`` all ship them.
Nothing is fetched from the network.
"""

from __future__ import annotations

import importlib.resources
import re
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

import click

__all__ = ["SCHEMA", "proto", "proto_tree"]

#: The schema's path inside the tree (its name in ``import`` statements).
SCHEMA = "lf/a2a/v1/a2a.proto"
#: Imports every protoc ships, so they are not written.
BUILT_IN = "google/protobuf/"
_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;', re.M)


def _ours() -> Traversable:
    return importlib.resources.files("a2a_grpc") / "proto"


def _locate(name: str) -> Traversable:
    """The installed copy of an imported file: ours, or googleapis-common-protos'."""
    path = PurePosixPath(name)
    ours = _ours().joinpath(*path.parts)
    if ours.is_file():
        return ours
    try:
        found = importlib.resources.files(".".join(path.parent.parts)) / path.name
    except (ModuleNotFoundError, ValueError):  # no such package, or no directory at all
        found = None
    if found is None or not found.is_file():
        raise click.ClickException(
            f"{name} is imported but is neither in a2a_grpc nor googleapis-common-protos"
        )
    return found


def proto_tree(*, imports_only: bool = False) -> dict[str, str]:
    """The tree's files, path -> text: ``lf/a2a/v1/a2a.proto`` and its imports' closure.

    ``imports_only`` leaves out the schema itself (for a tool that reads
    ``proto/`` from the repository). Raises ``click.ClickException`` when an
    import is in neither package.
    """
    tree: dict[str, str] = {}
    pending = [SCHEMA]
    while pending:
        name = pending.pop()
        if name in tree or name.startswith(BUILT_IN):
            continue
        tree[name] = _locate(name).read_text(encoding="utf-8")
        pending.extend(_IMPORT.findall(tree[name]))
    if imports_only:
        del tree[SCHEMA]
    return dict(sorted(tree.items()))


@click.command()
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write the tree into (created; files already there are overwritten).",
)
@click.option(
    "--imports-only", is_flag=True, help="Write only the google/api imports, not lf/a2a/v1/a2a.proto."
)
def proto(out: Path, imports_only: bool) -> None:
    """Write the A2A .proto files and their google/api imports under --out, for protoc.

    Then e.g.: protoc -I OUT --go_out=gen lf/a2a/v1/a2a.proto
    """
    for name, text in proto_tree(imports_only=imports_only).items():
        target = out.joinpath(*PurePosixPath(name).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(target)
