"""Runs ``ruff check`` once over a set of files, as an asyncio subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["RuffError", "ruff_command", "run_ruff"]


class RuffError(RuntimeError):
    """ruff could not be run or answered something that is not its JSON report."""


@functools.cache
def ruff_command() -> tuple[str, ...]:
    """The command that starts ruff: the binary shipped with the ``ruff`` wheel, else ``ruff`` on
    PATH, else ``python -m ruff``."""
    try:
        from ruff.__main__ import find_ruff_bin

        return (os.fspath(find_ruff_bin()),)
    except (ImportError, FileNotFoundError):
        found = shutil.which("ruff")
        return (found,) if found else (sys.executable, "-m", "ruff")


async def run_ruff(
    files: Sequence[str],
    select: Sequence[str],
    *,
    cwd: str,
    target_version: str = "py312",
    timeout: float = 60.0,
) -> list[dict[str, Any]]:
    """Lints ``files`` with only the rule families ``select`` and returns ruff's JSON diagnostics
    (``code``, ``message``, ``location.row``, ``filename``, ``url``, ``fix``...).

    Runs ``ruff check --output-format json --no-cache --isolated`` (no configuration file is read,
    so the reviewed code cannot change the rules). Raises :class:`RuffError` when ruff is missing,
    fails, or takes longer than ``timeout`` seconds; cancellation kills the process.
    """
    if not files:
        return []
    args = [
        *ruff_command(),
        "check",
        "--output-format",
        "json",
        "--no-cache",
        "--isolated",
        "--exit-zero",
        "--target-version",
        target_version,
        "--select",
        ",".join(select),
        "--",
        *files,
    ]
    try:
        proc = await asyncio.create_subprocess_exec(
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise RuffError(f"cannot start ruff: {exc}") from exc
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    except BaseException as exc:  # timeout or cancellation: do not leave ruff running
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await proc.wait()
        if isinstance(exc, TimeoutError):
            raise RuffError(f"ruff did not finish within {timeout:g} s") from exc
        raise
    if proc.returncode != 0:
        detail = err.decode(errors="replace").strip().splitlines()
        raise RuffError(f"ruff exited with status {proc.returncode}: {detail[-1] if detail else 'no output'}")
    try:
        report = json.loads(out or b"[]")
    except ValueError as exc:
        raise RuffError(f"ruff printed something that is not JSON: {exc}") from exc
    if not isinstance(report, list):
        raise RuffError("ruff's JSON report is not a list")
    return report
