"""A cache of values derived once per protobuf type (the ProtoJSON codec's
plans, encoders, decoders, classes, field and enum-name tables; validation
plans), safe to fill from several threads. Keyed by the type's full name, so a
message type's cache and an enum type's cache work alike.

Building a value may need the values of the types it contains, which may
contain the type being built (``Message`` → ``Part`` → ``Struct``…, or a type
that refers to itself). A builder therefore registers its value with
:meth:`TypeCache.building` *before* filling it in. The values of one build are
published together, under a lock, once every one of them is complete: another
thread never sees a value being filled (a missing entry in a codec table would
read as an unknown field, a missing check would let a bad request through).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["TypeCache"]

V = TypeVar("V")


class TypeCache(Generic[V]):
    """Values per type (keyed by full name), built by ``build``."""

    def __init__(self, build: Callable[[Any], V]) -> None:
        self._build = build
        self._done: dict[str, V] = {}
        self._pending: dict[str, V] = {}
        self._lock = threading.RLock()

    def get(self, desc: Any) -> V:
        """The value of type ``desc`` (a Descriptor or EnumDescriptor), built on first use."""
        value = self._done.get(desc.full_name)
        if value is not None:
            return value
        with self._lock:
            value = self._done.get(desc.full_name) or self._pending.get(desc.full_name)
            if value is not None:
                return value
            outermost = not self._pending
            try:
                value = self._build(desc)
            except BaseException:
                if outermost:
                    self._pending.clear()
                raise
            # A builder that did not register its value (no recursion) is kept too.
            self._pending.setdefault(desc.full_name, value)
            if outermost:
                self._done.update(self._pending)
                self._pending.clear()
            return value

    def building(self, desc: Any, value: V) -> V:
        """Registers ``value`` for ``desc`` while it is being filled in (for
        builders of recursive types); returns it."""
        self._pending[desc.full_name] = value
        return value
