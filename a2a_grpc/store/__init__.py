"""Task storage: the store protocols and their implementations.

``open_store(url)`` turns a ``--store`` value into a store: ``memory`` or an
SQLAlchemy URL such as ``sqlite:///PATH`` or ``postgresql://...``.
``default_store_url()`` is the embedded SQLite database ``a2a-grpc serve``
uses when no store is given.
"""

from __future__ import annotations

import os
from pathlib import Path

from a2a_grpc.core.ports import (
    ListPage,
    ListQuery,
    OutboxEntry,
    OutboxRecord,
    PushConfigStore,
    PushOutbox,
    Store,
    StoredTask,
    StoreLifecycle,
    TaskExistsError,
    TaskStore,
    VersionConflictError,
)
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.store._sql import SqlTaskStore

__all__ = [
    "DATA_DIR_ENV",
    "InMemoryTaskStore",
    "ListPage",
    "ListQuery",
    "OutboxEntry",
    "OutboxRecord",
    "PushConfigStore",
    "PushOutbox",
    "SqlTaskStore",
    "Store",
    "StoreLifecycle",
    "StoredTask",
    "TaskExistsError",
    "TaskStore",
    "VersionConflictError",
    "default_store_url",
    "open_store",
]

#: Environment variable naming the data directory of the embedded store.
DATA_DIR_ENV = "A2A_GRPC_DATA_DIR"


def default_store_url() -> str:
    """``sqlite:///<data dir>/a2a-grpc.db`` with an absolute path; the data
    directory is ``$A2A_GRPC_DATA_DIR``, or ``./data`` when unset. The file
    (and directory) is created by the store's ``open()``."""
    data_dir = Path(os.environ.get(DATA_DIR_ENV) or "data").expanduser().absolute()
    return f"sqlite:///{data_dir / 'a2a-grpc.db'}"


def open_store(url: str) -> Store:
    """The store a ``--store`` value names, not yet opened (await ``open()``):

    - ``memory``: :class:`InMemoryTaskStore` (nothing survives a restart);
    - ``sqlite:///PATH``: :class:`SqlTaskStore` on an SQLite file (aiosqlite);
    - ``postgresql://USER@HOST[:PORT]/DB``: :class:`SqlTaskStore` on PostgreSQL (asyncpg).

    Raises ValueError for any other value.
    """
    value = url.strip()
    if value == "memory":
        return InMemoryTaskStore()
    scheme = value.split(":", 1)[0].lower() if ":" in value else ""
    if scheme.split("+", 1)[0] in ("sqlite", "postgresql", "postgres"):
        return SqlTaskStore(value)
    raise ValueError(
        f"unsupported store {url!r}: use 'memory', 'sqlite:///PATH' or 'postgresql://USER@HOST[:PORT]/DB'"
    )
