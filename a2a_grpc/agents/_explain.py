"""The built-in ``explain`` agent: Python source or a diff in, an outline out.

``a2a-grpc serve --agent explain`` (needs the ``explain`` extra: radon, and
unidiff for diffs). The message's text parts (or file parts of type
``text/x-python`` / ``text/x-diff``) are read as a unified diff when they
hold one — each changed Python file is outlined from the post-image of its
hunks (:func:`a2a_grpc.agents._review.rebuild.rebuild`) — and as one Python
module otherwise. The outline of each module:

* ``imports`` (``import x`` / ``from x import y`` as written);
* ``classes`` with bases, first docstring line and methods;
* ``functions`` (and methods) with their signature (``def name(args) ->
  returns``), line, first docstring line and cyclomatic complexity (radon);
* ``docstring`` (the module's first docstring line) and
  ``complexity`` (average and maximum over its functions).

The answer is one artifact ``outline`` with a data part ``{"modules":
[...]}`` (media type ``application/vnd.a2a-grpc.outline+json``) and the same
outline as text, then COMPLETED. Source that does not
parse FAILS the task naming the line; a message with no text REJECTS it.
"""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from typing import Any

from a2a_grpc.agents._orchestration.planner import is_diff
from a2a_grpc.agents._views import OUTLINE, outline_text
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext, data_part
from a2a_grpc.types import Event, pb

__all__ = ["ExplainAgent", "outline_source"]

_DIFF_TYPES = ("text/x-diff", "text/x-patch")


def _first_line(node: ast.AST) -> str:
    doc = (
        ast.get_docstring(node)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        else None
    )
    return doc.strip().splitlines()[0] if doc and doc.strip() else ""


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, complexity: dict[int, int]) -> dict[str, Any]:
    return {
        "name": node.name,
        "line": node.lineno,
        "signature": _signature(node),
        "docstring": _first_line(node),
        "complexity": complexity.get(node.lineno, 1),
    }


def _import(node: ast.Import | ast.ImportFrom) -> str:
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
    if isinstance(node, ast.Import):
        return f"import {names}"
    return f"from {'.' * node.level}{node.module or ''} import {names}"


def _complexities(source: str) -> dict[int, int]:
    """Cyclomatic complexity (radon) of each function and method, by its line."""
    from radon.complexity import cc_visit

    out: dict[int, int] = {}
    for block in cc_visit(source):
        out[block.lineno] = block.complexity
        for method in getattr(block, "methods", ()):
            out[method.lineno] = method.complexity
    return out


def outline_source(source: str, path: str = "<source>", *, imports_from: int = 1) -> dict[str, Any]:
    """The outline of one Python module (see the module docstring); imports
    above line ``imports_from`` are left out (a diff snippet's implied
    imports). Raises SyntaxError when ``source`` does not parse."""
    tree = ast.parse(source, filename=path)
    complexity = _complexities(source)
    found = (
        n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) and n.lineno >= imports_from
    )
    imports = [_import(n) for n in sorted(found, key=lambda n: n.lineno)]
    classes: list[dict[str, Any]] = []
    functions: list[dict[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(_function(node, complexity))
        elif isinstance(node, ast.ClassDef):
            methods = [
                _function(n, complexity)
                for n in node.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
            classes.append(
                {
                    "name": node.name,
                    "line": node.lineno,
                    "bases": [ast.unparse(b) for b in node.bases],
                    "docstring": _first_line(node),
                    "methods": methods,
                }
            )
    scores = [f["complexity"] for f in functions] + [m["complexity"] for c in classes for m in c["methods"]]
    return {
        "path": path,
        "docstring": _first_line(tree),
        "imports": imports,
        "classes": classes,
        "functions": functions,
        "complexity": {
            "average": round(sum(scores) / len(scores), 2) if scores else 0,
            "max": max(scores, default=0),
        },
    }


def _outline_diff(text: str) -> list[dict[str, Any]]:
    """The outlines of the Python files a unified diff changes (the
    post-image of each hunk; a file added in full is outlined whole)."""
    from unidiff import PatchSet

    from a2a_grpc.agents._review.rebuild import is_python_path, rebuild

    modules: list[dict[str, Any]] = []
    for patched in PatchSet(text):
        if patched.is_removed_file or not is_python_path(patched.path):
            continue
        for snippet in rebuild(patched):
            try:
                start = 1 if snippet.whole_file else snippet.first_line
                module = outline_source(snippet.text, snippet.file, imports_from=start)
            except SyntaxError:
                continue
            module["lines"] = (
                f"{snippet.first_line}-" if snippet.whole_file else f"hunk at {snippet.first_line}"
            )
            modules.append(module)
    return modules


def _inputs(message: pb.Message) -> tuple[str, bool, str]:
    """The message's text, whether it is a diff, and a file name given."""
    texts: list[str] = []
    name = ""
    diff = False
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "raw" and (
            part.media_type.startswith("text/") or part.filename.endswith((".py", ".diff", ".patch"))
        ):
            texts.append(part.raw.decode("utf-8", errors="replace"))
            name = name or part.filename
        else:
            continue
        diff = diff or part.media_type in _DIFF_TYPES or part.filename.endswith((".diff", ".patch"))
    text = "\n".join(texts)
    return text, diff or is_diff(pb.Message(parts=[pb.Part(text=text)])), name


class ExplainAgent(AgentExecutor):
    """Outlines Python source or the Python files of a diff."""

    card = pb.AgentCard(
        name="Explain Code Agent",
        description=(
            "Explains Python code: modules, classes, functions with signatures and first docstring lines, "
            "imports and cyclomatic complexity, from source or from a unified diff."
        ),
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "text/x-python", "text/x-diff"],
        default_output_modes=["application/json", "text/plain"],
        skills=[
            pb.AgentSkill(
                id="explain",
                name="Explain code",
                description="A structured outline of Python source or of the Python files a diff changes.",
                tags=["python", "outline", "explain", "complexity"],
                examples=["def add(a: int, b: int) -> int: ...", "a unified diff of Python files"],
            )
        ],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        """Outlines the message (see the module docstring)."""
        text, diff, name = _inputs(ctx.message)
        if not text.strip():
            yield ctx.status(pb.TASK_STATE_REJECTED, "send Python source or a unified diff as text")
            return
        yield ctx.status(pb.TASK_STATE_WORKING, "outlining the diff" if diff else "outlining the source")
        try:
            modules = _outline_diff(text) if diff else [outline_source(text, name or "<source>")]
        except SyntaxError as exc:
            yield ctx.status(pb.TASK_STATE_FAILED, f"the source does not parse: line {exc.lineno}: {exc.msg}")
            return
        except Exception as exc:  # unidiff's parse errors
            yield ctx.status(pb.TASK_STATE_FAILED, f"the diff cannot be read: {exc}")
            return
        yield ctx.artifact(
            [data_part({"modules": modules}, media_type=OUTLINE), outline_text(modules)],
            name="outline",
            last_chunk=True,
        )
        yield ctx.status(pb.TASK_STATE_COMPLETED)
