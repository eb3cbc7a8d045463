"""What the SQL store keeps in memory about tasks: only facts that stay true.

Two bounded LRU maps, both safe when several processes share the database:

- the terminal tasks (spec §9.1: a terminal task never changes again), so a
  GetTask or a subscription on a finished task needs no query;
- per task (owner and id), the (version, state, contextId, chunks) of its
  last write or read: a task's content at one version never changes, so an
  update at that expected version knows which task counts it moves (and
  whether artifact chunks are to be folded) without reading the row.
"""

from __future__ import annotations

from collections import OrderedDict

from a2a_grpc.core.ports import TaskKey
from a2a_grpc.types import is_terminal

__all__ = ["TERMINAL_CACHE_BYTES", "TERMINAL_CACHE_SIZE", "Meta", "TaskMemory"]

#: Terminal tasks kept in memory per store (spec §9.1: they never change
#: again): at most this many, and this many bytes of serialized tasks (a task
#: larger than 1/16 of it is not kept).
TERMINAL_CACHE_SIZE = 4096
TERMINAL_CACHE_BYTES = 32 * 1024 * 1024
#: Task metas remembered (see :class:`TaskMemory`).
_META_CACHE_SIZE = 16384

#: (version, state, contextId, artifact chunks kept apart) of a task at one version.
Meta = tuple[int, int, str, int]


class TaskMemory:
    """The terminal-task cache and the per-task metas of one store.

    ``terminal`` maps a :data:`TaskKey` to (serialized ``pb.Task``, version),
    least recently used first; ``terminal_bytes`` is the sum of those sizes."""

    def __init__(self) -> None:
        self.terminal: OrderedDict[TaskKey, tuple[bytes, int]] = OrderedDict()
        self.terminal_bytes = 0
        self._meta: OrderedDict[TaskKey, Meta] = OrderedDict()

    def record(
        self, key: TaskKey, version: int, state: int, context_id: str, data: bytes, chunks: int = 0
    ) -> None:
        """Records a task just written or read: its meta at ``version`` (with
        the number of artifact chunks stored apart), and its serialized bytes
        ``data`` when ``state`` is terminal (a task that is not terminal
        leaves the terminal cache)."""
        self._remember(key, (version, state, context_id, chunks))
        if is_terminal(state):
            self._remember_terminal(key, data, version)
        else:
            self._drop_terminal(key)

    def _remember(self, key: TaskKey, meta: Meta) -> None:
        self._meta[key] = meta
        self._meta.move_to_end(key)
        if len(self._meta) > _META_CACHE_SIZE:
            self._meta.popitem(last=False)

    def known(self, key: TaskKey, version: int) -> tuple[int, str, int] | None:
        """The (state, contextId, chunks) the task ``key`` had at ``version``,
        or None when not remembered for that version."""
        meta = self._meta.get(key)
        if meta is None or meta[0] != version:
            return None
        return meta[1], meta[2], meta[3]

    def cached_terminal(self, key: TaskKey) -> tuple[bytes, int] | None:
        """(serialized task, version) of a remembered terminal task, or None."""
        cached = self.terminal.get(key)
        if cached is not None:
            self.terminal.move_to_end(key)
        return cached

    def _remember_terminal(self, key: TaskKey, data: bytes, version: int) -> None:
        """Keeps a terminal task's bytes, evicting the least recently used
        beyond :data:`TERMINAL_CACHE_SIZE` tasks or :data:`TERMINAL_CACHE_BYTES`."""
        self._drop_terminal(key)
        if len(data) > TERMINAL_CACHE_BYTES // 16:
            return
        self.terminal[key] = (data, version)
        self.terminal_bytes += len(data)
        while len(self.terminal) > TERMINAL_CACHE_SIZE or self.terminal_bytes > TERMINAL_CACHE_BYTES:
            _key, (old, _version) = self.terminal.popitem(last=False)
            self.terminal_bytes -= len(old)

    def _drop_terminal(self, key: TaskKey) -> None:
        entry = self.terminal.pop(key, None)
        if entry is not None:
            self.terminal_bytes -= len(entry[0])

    def clear(self) -> None:
        """Forgets everything (the store closed, or its tables were dropped)."""
        self.terminal.clear()
        self.terminal_bytes = 0
        self._meta.clear()
