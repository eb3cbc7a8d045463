"""Conversion round trip of the v0.3 table, over random v1.0 objects of every
type it has a rule for (300 seeds each, ``tests/randmsg.py``).

For a v1.0 object ``x``: ``up(down(x))`` is ``x`` minus exactly what
docs/dialects.md says v0.3 cannot carry (:func:`documented_loss`), and that
loss is invisible in v0.3 — ``down(loss(x)) == down(x)``, so the loss function
clears nothing v0.3 does carry. Each lossy rule must have fired on some seed,
so a rule that stops mattering (or a generator that stops reaching it) fails
here too. The reverse-only loss C1 (several v0.3 schemes → one) is checked
from random v0.3 objects.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc import protojson
from a2a_grpc.compat.v03 import DIALECT, WRAPPED_KEY
from a2a_grpc.types import pb
from tests.randmsg import fill

SEEDS = range(300)
#: The pb message of each rule (a rule is named after its v1.0 message, but one).
PB_TYPE = {name: getattr(pb, name, None) for name in DIALECT.rules}
PB_TYPE["PushNotificationConfig"] = pb.TaskPushNotificationConfig  # without its task (v0.3 has no slot)


def _messages(msg: ProtoMessage) -> list[ProtoMessage]:
    """``msg`` and every lf.a2a.v1 message inside it (map values included)."""
    out = [msg]
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        if fd.message_type.GetOptions().map_entry:
            items = list(value.values()) if fd.message_type.fields_by_name["value"].message_type else []
        else:
            items = list(value) if fd.is_repeated else [value]
        for item in items:
            if item.DESCRIPTOR.full_name.startswith("lf.a2a.v1."):
                out.extend(_messages(item))
    return out


def repair(msg: ProtoMessage) -> ProtoMessage:
    """Makes a random object one the v1.0 server can produce: a Part has
    content, a role or state is a named, specified one, a SecurityScheme is
    of some type, a response has a payload (no v0.3 string or shape exists
    for the others; v1.0 requires each of them)."""
    if isinstance(msg, pb.StreamResponse | pb.SendMessageResponse) and msg.WhichOneof("payload") is None:
        msg.message.parts.add(text="x")
    for m in _messages(msg):
        if isinstance(m, pb.Part) and m.WhichOneof("content") is None:
            m.text = "x"
        elif isinstance(m, pb.Message) and m.role not in (pb.ROLE_USER, pb.ROLE_AGENT):
            m.role = pb.ROLE_USER
        elif isinstance(m, pb.TaskStatus) and m.state not in range(1, 9):
            m.state = pb.TASK_STATE_WORKING
        elif isinstance(m, pb.SecurityScheme) and m.WhichOneof("scheme") is None:
            m.mtls_security_scheme.SetInParent()
    return msg


def _clear(m: ProtoMessage, name: str, fired: Counter[str], rule: str, *, when: bool = True) -> None:
    has = m.HasField(name) if m.DESCRIPTOR.fields_by_name[name].has_presence else bool(getattr(m, name))
    if has and when:
        m.ClearField(name)
        fired[rule] += 1


def documented_loss(
    type_name: str, msg: ProtoMessage, fired: Counter[str], *, c7: bool = True
) -> ProtoMessage:
    """A copy of ``msg`` without what docs/dialects.md says the v0.3 JSON-RPC
    form cannot carry; ``fired`` counts each rule that removed something.
    ``c7=False`` keeps a ``historyLength`` of 0: v0.3 has the slot (the value
    goes down as 0) but reads 0 as "unlimited", so it comes back unset."""
    out = type(msg)()
    out.CopyFrom(msg)
    if type_name == "PushNotificationConfig":  # the v0.3 PushNotificationConfig names no task
        _clear(out, "task_id", fired, "push config in SendMessageConfiguration: taskId")
    for m in _messages(out):
        fields = m.DESCRIPTOR.fields_by_name
        if isinstance(m, pb.Part):  # C5
            _clear(m, "media_type", fired, "C5", when=m.WhichOneof("content") in ("text", "data"))
            _clear(m, "filename", fired, "C5", when=m.WhichOneof("content") in ("text", "data"))
        if "tenant" in fields and not isinstance(m, pb.AgentInterface):  # C12
            _clear(m, "tenant", fired, "C12 tenant")
        if "history_length" in fields:  # C7: v0.3 0 means unlimited, so a v1.0 0 comes back unset
            _clear(
                m,
                "history_length",
                fired,
                "C7",
                when=c7 and m.HasField("history_length") and m.history_length == 0,
            )
        if isinstance(m, pb.SendMessageConfiguration) and m.HasField("task_push_notification_config"):
            # the proto: "its task_id is left empty here"; v0.3 PushNotificationConfig has no slot
            _clear(
                m.task_push_notification_config,
                "task_id",
                fired,
                "push config in SendMessageConfiguration: taskId",
            )
        if isinstance(m, pb.AgentCard):  # C10: the v0.3 endpoint fields are written by legacy_card
            _clear(m, "supported_interfaces", fired, "C10 supportedInterfaces")
        if isinstance(m, pb.AgentCapabilities):  # C12 → supportsAuthenticatedExtendedCard (card level)
            _clear(m, "extended_agent_card", fired, "C12 extendedAgentCard")
        if isinstance(m, pb.OAuthFlows):
            _clear(m, "device_code", fired, "C12 deviceCode")
        if "pkce_required" in fields:
            _clear(m, "pkce_required", fired, "C12 pkceRequired")
    return out


#: Rules that must remove something on some seed of some type.
LOSSY_RULES = {
    "C5",
    "C7",
    "C10 supportedInterfaces",
    "C12 tenant",
    "C12 extendedAgentCard",
    "C12 deviceCode",
    "C12 pkceRequired",
    "push config in SendMessageConfiguration: taskId",
}


def _random(type_name: str, seed: int) -> tuple[ProtoMessage, dict[str, Any]] | None:
    cls = PB_TYPE[type_name]
    assert cls is not None, type_name
    msg = repair(fill(cls(), random.Random(f"{type_name}/{seed}")))
    try:
        return msg, protojson.to_dict(msg)
    except ValueError:  # a random object with no ProtoJSON (out-of-range timestamp …)
        return None


def _walk_parts(legacy: Any) -> list[dict[str, Any]]:
    if isinstance(legacy, list):
        return [p for item in legacy for p in _walk_parts(item)]
    if not isinstance(legacy, dict):
        return []
    own = [legacy] if legacy.get("kind") == "data" else []
    return own + [p for value in legacy.values() for p in _walk_parts(value)]


@pytest.mark.parametrize("type_name", sorted(DIALECT.rules))
def test_round_trip_loses_exactly_what_the_doc_says(type_name: str) -> None:
    checked = 0
    for seed in SEEDS:
        made = _random(type_name, seed)
        if made is None:
            continue
        msg, v1 = made
        legacy = DIALECT.down(type_name, v1)
        back = protojson.parse(DIALECT.up(type_name, legacy), PB_TYPE[type_name]())
        kept = documented_loss(type_name, msg, Counter())
        # compared as ProtoJSON: the wire both dialects share (-0.0 in a Struct is 0 in JSON)
        assert protojson.to_dict(back) == protojson.to_dict(kept), (seed, legacy)
        unslotted = protojson.to_dict(documented_loss(type_name, msg, Counter(), c7=False))
        assert DIALECT.down(type_name, unslotted) == legacy, seed  # what is lost has no v0.3 slot
        checked += 1
    assert checked >= 250, checked


def test_every_lossy_rule_is_exercised() -> None:
    """The random objects reach every lossy rule (and C4's wrapping), so the
    round trip above is not identity only because nothing lossy came up."""
    fired: Counter[str] = Counter()
    for type_name in DIALECT.rules:
        for seed in SEEDS:
            made = _random(type_name, seed)
            if made is not None:
                documented_loss(type_name, made[0], fired)
                legacy = DIALECT.down(type_name, made[1])
                fired["C4"] += sum(1 for p in _walk_parts(legacy) if WRAPPED_KEY in p.get("metadata", {}))
    missing = sorted((LOSSY_RULES | {"C4"}) - {rule for rule, n in fired.items() if n})
    assert not missing, f"lossy rules never exercised: {missing}"


def test_c1_v03_schemes_come_back_as_the_first_one() -> None:
    rng = random.Random(1)
    for _ in SEEDS:
        schemes = rng.sample(["Bearer", "Basic", "Digest", "HOBA"], rng.randrange(5))
        legacy = {"schemes": schemes, **({"credentials": "c"} if rng.random() < 0.5 else {})}
        v1 = protojson.parse(DIALECT.up("AuthenticationInfo", legacy), pb.AuthenticationInfo())
        again = DIALECT.down("AuthenticationInfo", protojson.to_dict(v1))
        assert again == {**legacy, "schemes": schemes[:1]}
