"""Dead letters: push notifications the dispatcher gave up on.

A dead letter is an outbox row in state ``dead`` (``max_attempts`` attempts
failed, or the webhook answered a non-retryable status). It stays in the
store until an operator drops it or sends it again: :class:`DeadLetters` is
what the memory and SQL stores offer for that, and ``a2a-grpc admin
dead-letters list|show|redrive|drop`` the command line over it.

A redriven row is pending again, due now, with its attempts reset: a running
dispatcher of that store sends it at its next poll (within a second), after
any earlier pending row of the same task and config.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from a2a_grpc.core.ports import OutboxRecord

__all__ = ["DeadLetters"]


@runtime_checkable
class DeadLetters(Protocol):
    """Reading and handling the dead rows of a push outbox."""

    async def dead_letters(self, limit: int = 100, after_seq: int = 0) -> list[OutboxRecord]:
        """Dead rows with ``seq > after_seq``, lowest first, at most ``limit``."""
        ...

    async def dead_letter(self, seq: int) -> OutboxRecord | None:
        """The dead row ``seq``, or None."""
        ...

    async def redrive_dead_letter(self, seq: int) -> bool:
        """Makes the dead row pending again (due now, attempts reset); False if absent."""
        ...

    async def drop_dead_letter(self, seq: int) -> bool:
        """Deletes the dead row; False if absent."""
        ...
