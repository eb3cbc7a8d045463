"""Page tokens (a2a_grpc.protocol._paging): round trips, bound to their query, garbage refused."""

from __future__ import annotations

import base64

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import _paging as paging


def test_a_task_token_round_trips_for_its_filters() -> None:
    filters = paging.task_filters("acme", "alice", "ctx-1", 3, 1_700_000_000_000)
    token = paging.task_token((1_700_000_000_123, "task-9"), filters)
    assert "=" not in token
    assert paging.decode_task_token(token, filters) == (1_700_000_000_123, "task-9")


def test_the_task_token_format_is_unchanged() -> None:
    # On the wire since the first release: unpadded URL-safe base64 of a JSON array.
    assert paging.task_token((5, "t"), "ab") == base64.urlsafe_b64encode(b'[5,"t","ab"]').decode().rstrip("=")
    assert paging.task_filters("", "", "", 0, None) == paging.task_filters("", "", "", 0, None)
    assert len(paging.task_filters("", "", "", 0, None)) == 16


@pytest.mark.parametrize(
    "other",
    [
        ("acme", "bob", "ctx-1", 3, None),  # another caller
        ("globex", "alice", "ctx-1", 3, None),  # another tenant
        ("acme", "alice", "ctx-2", 3, None),  # another context filter
        ("acme", "alice", "ctx-1", 4, None),  # another state filter
        ("acme", "alice", "ctx-1", 3, 1),  # another timestamp filter
    ],
)
def test_a_task_token_is_refused_for_another_query(other: tuple[str, str, str, int, int | None]) -> None:
    token = paging.task_token((1, "t"), paging.task_filters("acme", "alice", "ctx-1", 3, None))
    with pytest.raises(A2AError) as excinfo:
        paging.decode_task_token(token, paging.task_filters(*other))
    assert excinfo.value.code is ErrorCode.INVALID_PARAMS
    assert excinfo.value.field_violations[0].field == "page_token"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "token",
    [
        "%%%",
        "not-a-token",
        _b64(b"{}"),
        _b64(b'["1","t","f"]'),
        _b64(b'[1,2,"f"]'),
        _b64(b'[1,"t"]'),
        _b64(b"\xff"),
    ],
)
def test_garbage_task_tokens_are_refused(token: str) -> None:
    filters = "f"
    with pytest.raises(A2AError) as excinfo:
        paging.decode_task_token(token, filters)
    assert excinfo.value.code is ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("config_id", ["c1", "a-b_c.d", "日本"])
def test_a_config_token_round_trips(config_id: str) -> None:
    token = paging.config_token(config_id)
    assert "=" not in token
    assert paging.decode_config_token(token) == config_id


@pytest.mark.parametrize("token", ["%%%", "a b", _b64(b"\xff\xfe"), _b64(b"bad\x00id"), "===="])
def test_garbage_config_tokens_are_refused(token: str) -> None:
    with pytest.raises(A2AError) as excinfo:
        paging.decode_config_token(token)
    assert excinfo.value.code is ErrorCode.INVALID_PARAMS
    assert excinfo.value.field_violations[0].field == "page_token"
