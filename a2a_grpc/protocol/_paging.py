"""The opaque page tokens of the two paginated operations; pure.

- ListTasks (spec §3.1.4): the position (status timestamp in ms, task id) of
  the last task of the page, bound to a fingerprint of the caller and the
  filters, so that a token is only accepted for the query that issued it.
- ListTaskPushNotificationConfigs (spec §3.1.9): the id of the last config.

Both are unpadded URL-safe base64. A token that is malformed, or issued for
another query, raises ``A2AError(INVALID_PARAMS)`` on ``page_token``.
"""

from __future__ import annotations

import base64
import hashlib
import json

from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.protocol._validation import check_id

__all__ = [
    "config_token",
    "decode_config_token",
    "decode_task_token",
    "task_filters",
    "task_token",
]


def task_filters(tenant: str, user: str, context_id: str, state: int, after_ms: int | None) -> str:
    """The fingerprint a ListTasks token is bound to: who asks, and the filters."""
    raw = json.dumps([tenant, user, context_id, state, after_ms]).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def task_token(position: tuple[int, str], filters: str) -> str:
    """The token of the ListTasks page after ``position`` (timestamp ms, task id)."""
    raw = json.dumps([position[0], position[1], filters], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_task_token(token: str, filters: str) -> tuple[int, str]:
    """The position in a ListTasks token. Raises INVALID_PARAMS when ``token``
    is malformed or was issued for other ``filters``."""
    bad = A2AError.invalid_params(FieldViolation("page_token", "is not a page token issued for this query"))
    try:
        ts, task_id, fp = json.loads(base64.urlsafe_b64decode(token.encode() + b"=="))
    except (ValueError, TypeError):
        raise bad from None
    if fp != filters or not isinstance(ts, int) or not isinstance(task_id, str):
        raise bad
    return ts, task_id


def config_token(config_id: str) -> str:
    """The token of the push-config page after the config ``config_id``."""
    return base64.urlsafe_b64encode(config_id.encode()).decode().rstrip("=")


def decode_config_token(token: str) -> str:
    """The config id in a push-config page token. Raises INVALID_PARAMS when
    ``token`` is not one."""
    raw = token.encode()
    try:
        # Strict: the lenient urlsafe_b64decode drops foreign bytes, turning
        # garbage into "" (= first page) instead of an error.
        after = base64.b64decode(raw + b"=" * (-len(raw) % 4), altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        after = ""
    if not after or check_id(after) is not None:
        raise A2AError.invalid_params(FieldViolation("page_token", "is not a valid page token"))
    return after
