"""Giving freed memory back to the operating system after large tasks.

glibc keeps freed heap memory in its arenas: after ten concurrent 75 MiB
chunked artifacts the server still held ~485 MiB although nothing referenced
them. :func:`release_after` asks glibc to return it (``malloc_trim(0)``, in
a worker thread, at most once a second) when an execution whose task grew
beyond :data:`LARGE_TASK_BYTES` ends; with it the same run ends at ~90 MiB
(``python -m bench.chunked --mib 75 --streams 10``). A no-op without glibc.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import time
from typing import Any

__all__ = ["LARGE_TASK_BYTES", "release_after"]

#: Tasks at least this large (serialized) trigger a trim when their execution ends.
LARGE_TASK_BYTES = 16 * 1024 * 1024
_MIN_INTERVAL = 1.0


def _load_trim() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _load_trim()
_last = [0.0]


def release_after(task_bytes: int) -> bool:
    """Schedules a ``malloc_trim`` when ``task_bytes`` is large and none ran
    in the last second; True when one was scheduled. Needs a running loop."""
    now = time.monotonic()
    if _TRIM is None or task_bytes < LARGE_TASK_BYTES or now - _last[0] < _MIN_INTERVAL:
        return False
    _last[0] = now
    task = asyncio.get_running_loop().run_in_executor(None, _TRIM, 0)
    task.add_done_callback(lambda f: f.exception())
    return True
