"""Runs ``ruff check`` once over a set of files, as an asyncio subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import subprocess
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


def _spawn(args: Sequence[str]) -> subprocess.Popen[bytes]:
    """Starts the process; returns at once (posix_spawn does not wait for the child)."""
    return subprocess.Popen(
        args,
        close_fds=False,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


async def run_ruff(
    files: Sequence[str],
    select: Sequence[str],
    *,
    target_version: str = "py312",
    timeout: float = 60.0,
) -> list[dict[str, Any]]:
    """Lints ``files`` (absolute paths) with only the rule families ``select`` and returns ruff's
    JSON diagnostics (``code``, ``message``, ``location.row``, ``filename``, ``url``, ``fix``...).

    Runs ``ruff check --output-format json --no-cache --isolated`` (no configuration file is read,
    so the reviewed code cannot change the rules) without blocking the event loop: the process is
    started by :class:`subprocess.Popen` with no ``cwd`` and ``close_fds=False`` (Python's own
    descriptors are close-on-exec anyway), which makes CPython use ``posix_spawn`` rather than
    ``fork`` — under uvloop, ``asyncio.create_subprocess_exec`` forks the whole server and trips
    gRPC's fork handlers — and its output is collected in a worker thread. Raises
    :class:`RuffError` when ruff is missing, fails, or takes longer than ``timeout`` seconds;
    cancellation kills the process.
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
        proc = _spawn(args)
    except OSError as exc:
        raise RuffError(f"cannot start ruff: {exc}") from exc
    try:
        out, err = await asyncio.to_thread(proc.communicate, timeout=timeout)
    except BaseException as exc:  # timeout or cancellation: do not leave ruff running
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        if isinstance(exc, subprocess.TimeoutExpired):
            await asyncio.to_thread(proc.communicate)  # reap it and close the pipes
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
