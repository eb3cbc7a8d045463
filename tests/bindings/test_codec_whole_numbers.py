"""Whole numbers inside Struct/Value fields keep their integer form in JSON."""

from __future__ import annotations

import json

from a2a_grpc.core._executor import data_part
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb


def test_integral_numbers_in_data_parts_are_written_as_integers() -> None:
    part = data_part({"line": 18, "ratio": 1.5, "nested": [1, 2.0, {"a": 3}], "big": 2.0**60})
    text = protojson.to_json(pb.Message(parts=[part]))
    assert '"line":18,' in text and '"nested":[1,2,{"a":3}]' in text and '"ratio":1.5' in text
    assert json.loads(text)["parts"][0]["data"]["big"] == 2.0**60  # beyond 2**53 stays a double


def test_integral_numbers_in_metadata_are_written_as_integers() -> None:
    task = pb.Task(id="t")
    task.metadata.update({"count": 2})
    assert protojson.to_json(task) == '{"id":"t","metadata":{"count":2}}'
