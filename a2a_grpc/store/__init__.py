"""Task storage: the TaskStore protocol and its implementations.

``open_store(url)`` turns a ``--store`` value into a store: ``memory`` or an
SQLAlchemy URL such as ``sqlite:///PATH`` or ``postgresql://...``.
"""

from a2a_grpc.store.base import (
    ListPage,
    ListQuery,
    OutboxEntry,
    OutboxRecord,
    StoredTask,
    TaskExistsError,
    TaskStore,
    VersionConflictError,
)

__all__ = [
    "ListPage",
    "ListQuery",
    "OutboxEntry",
    "OutboxRecord",
    "StoredTask",
    "TaskExistsError",
    "TaskStore",
    "VersionConflictError",
]
