"""Push bodies of the legacy dialects (legacy digest C21).

A webhook registered through a legacy dialect gets its notifications in
that dialect's shape: :data:`PUSH_BODIES` maps the dialect a push config was
recorded with to the encoder of its body, given the ProtoJSON dict of the
stored ``StreamResponse`` (:mod:`a2a_grpc.push._dispatcher` delivers them;
docs/dialects.md lists the choices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from a2a_grpc.dialects import _v01 as v01
from a2a_grpc.dialects import _v03 as v03
from a2a_grpc.protocol import protojson

__all__ = ["PUSH_BODIES"]

#: The Content-Type of every legacy push body.
_JSON = "application/json"


def _v03_body(event: dict[str, Any]) -> tuple[str, bytes]:
    """The bare v0.3 event, ``final`` set as the v0.3 stream would (C2, C21)."""
    legacy = v03.DIALECT.down("StreamResponse", event)
    if legacy.get("kind") == "status-update":
        legacy["final"] = v03.final_of(legacy, closes_on_interrupt=True)
    return _JSON, protojson.dumps(legacy).encode()


def _v01_body(event: dict[str, Any]) -> tuple[str, bytes]:
    """The oldest shape's body (C21): a Task snapshot as the v0.1 Task
    (without history), a status or artifact update as the v0.1 event that
    ``tasks/sendSubscribe`` streams (``{id, status, final}``, ``{id,
    artifact}``). A webhook call has no stream to number artifacts in, so an
    artifact's ``index`` is 0 there; its ``name`` tells artifacts apart."""
    if "task" in event:
        return _JSON, protojson.dumps(v01.push_body(event["task"])).encode()
    legacy = v01.Events().down(event)
    return _JSON, protojson.dumps(legacy[-1] if legacy else {}).encode()


#: Dialect → its push body encoder.
PUSH_BODIES: Mapping[str, Callable[[dict[str, Any]], tuple[str, bytes]]] = {
    "0.3": _v03_body,
    "0.1": _v01_body,
}
