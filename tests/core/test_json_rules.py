"""The free-form JSON rules of request validation (finite numbers, bounded
nesting): the fast path on the binary form gives the walk's answer."""

from __future__ import annotations

import random

import pytest
from google.protobuf import struct_pb2

from a2a_grpc.protocol._validation import MAX_JSON_DEPTH, _json_problem, _walk_json
from tests.randmsg import fill


def _nested(levels: int, leaf: float, *, lists: bool) -> struct_pb2.Value:
    root = struct_pb2.Value()
    node = root
    for _ in range(levels):
        node = node.list_value.values.add() if lists else node.struct_value.fields["k"]
    node.number_value = leaf
    return root


@pytest.mark.parametrize("lists", [True, False])
def test_depth_limit(lists: bool) -> None:
    assert _json_problem(_nested(MAX_JSON_DEPTH, 1.0, lists=lists)) is None
    problem = _json_problem(_nested(MAX_JSON_DEPTH + 1, 1.0, lists=lists))
    assert problem is not None and "deeper than 32" in problem


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf"), -float("nan")])
def test_non_finite_anywhere(number: float) -> None:
    value = _nested(3, number, lists=False)
    assert "finite" in (_json_problem(value) or "")
    struct = struct_pb2.Struct()
    struct.fields["a"].list_value.values.add().number_value = number
    assert "finite" in (_json_problem(struct) or "")


def test_bytes_that_look_non_finite_are_walked() -> None:
    # A string holding the pattern is no number: the walk says so.
    value = struct_pb2.Value(string_value="\x11" + "\x00" * 6 + "\u00ff\u007f")
    assert _json_problem(value) is None


def test_fast_path_agrees_with_the_walk() -> None:
    rng = random.Random(10)
    for _ in range(2000):
        value = fill(struct_pb2.Value(), rng, depth=rng.randrange(1, 6), nan_in_values=rng.random() < 0.3)
        if rng.random() < 0.2:
            node = value
            for _ in range(rng.randrange(MAX_JSON_DEPTH - 5, MAX_JSON_DEPTH + 5)):
                node = node.list_value.values.add()
            node.number_value = rng.choice([1.0, float("nan"), float("inf")])
        assert (_json_problem(value) is None) == (_walk_json(value) is None), value
