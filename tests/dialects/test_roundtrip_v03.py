"""Conversion round trip of the v0.3 table, over random v1.0 objects of every
type it has a rule for (300 seeds each, ``tests/randmsg.py``).

For a v1.0 object ``x``: ``up(down(x))`` is ``x`` minus exactly what
docs/dialects.md says v0.3 cannot carry (:func:`documented_loss`), and that
loss is invisible in v0.3 — ``down(loss(x)) == down(x)``, so the loss function
clears nothing v0.3 does carry. Each lossy rule must have fired on some seed,
so a rule that stops mattering (or a generator that stops reaching it) fails
here too. The reverse-only loss C1 (several v0.3 schemes → one) is checked
from random v0.3 objects.

A round trip cannot see a mistake made the same way in both directions (a
v1.0 name written and read back unchanged, a state misspelt both ways), so
the official ``a2a-sdk`` 0.3 models read what the table writes, in their own
virtualenv (``sdk03_read.py``), and must read every field of it.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google.api import field_behavior_pb2
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.dialects._v03 import DIALECT, WRAPPED_KEY, legacy_card
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb
from tests.interop.conftest import sdk03_python  # noqa: F401 - the fixture, for the SDK check
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
        if isinstance(m, pb.ListTaskPushNotificationConfigsRequest):  # C12: v0.3 lists have no pages
            _clear(m, "page_size", fired, "C12 push-config list pages")
            _clear(m, "page_token", fired, "C12 push-config list pages")
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
    "C12 push-config list pages",
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


# ------------------------------------------------ what the official v0.3 SDK reads
#: Fields v0.3 requires beyond the v1.0 REQUIRED ones (legacy digest §2.4, §2.6).
V03_REQUIRED = {
    "Task": {"context_id"},
    "AgentExtension": {"uri"},
    "TaskPushNotificationConfig": {"task_id"},
    "ImplicitOAuthFlow": {"authorization_url", "scopes"},
    "PasswordOAuthFlow": {"token_url", "scopes"},
}
_REQUIRED = field_behavior_pb2.REQUIRED


def with_required(msg: ProtoMessage) -> ProtoMessage:
    """Sets every unset REQUIRED field of ``msg`` (v1.0's and v0.3's), all the
    way down, then :func:`repair`: an object both versions call complete."""
    for fd in msg.DESCRIPTOR.fields:
        behavior = fd.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        if _REQUIRED not in behavior and fd.name not in V03_REQUIRED.get(msg.DESCRIPTOR.name, ()):
            continue
        value = getattr(msg, fd.name)
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            if not value:
                value["k"] = "v"
        elif fd.is_repeated:
            if not value:
                value.add() if fd.message_type is not None else value.append("r")
        elif fd.message_type is not None:
            value.SetInParent()
        elif fd.type == fd.TYPE_STRING and not value:
            setattr(msg, fd.name, "r")
    for fd, value in msg.ListFields():
        if fd.message_type is not None and not fd.message_type.GetOptions().map_entry:
            for item in value if fd.is_repeated else [value]:
                if item.DESCRIPTOR.full_name.startswith("lf.a2a.v1."):
                    with_required(item)
        elif fd.message_type is not None and fd.message_type.fields_by_name["value"].message_type is not None:
            for item in value.values():
                if item.DESCRIPTOR.full_name.startswith("lf.a2a.v1."):
                    with_required(item)
    for m in _messages(msg):
        if isinstance(m, pb.APIKeySecurityScheme) and m.location not in ("header", "query", "cookie"):
            m.location = "header"  # v0.3 has an enum where v1.0 has a string
    return repair(msg)


def _legacy_of(type_name: str, v1: dict[str, Any]) -> dict[str, Any]:
    """What we send a v0.3 peer: the table's form; ``final`` as the stream
    adapter adds it; the card as :func:`legacy_card` writes it."""
    if type_name == "AgentCard":
        return legacy_card(v1, "http://127.0.0.1/")
    legacy = DIALECT.down(type_name, v1)
    if legacy.get("kind") == "status-update":
        legacy["final"] = False
    return legacy


@pytest.mark.interop
def test_what_the_official_v03_sdk_reads_is_what_we_wrote(sdk03_python: str) -> None:  # noqa: F811
    """Every v0.3 object the table writes (60 seeds of each type, complete
    objects) is valid for the official ``a2a-sdk`` 0.3 models and read back
    field for field: a v1.0 name leaking into the v0.3 form (one the SDK
    drops) or a wrong shape fails here even where the round trip is exact."""
    lines: list[tuple[str, int, dict[str, Any]]] = []
    for type_name in sorted(DIALECT.rules):
        if type_name == "GetExtendedAgentCardRequest":  # v0.3 sends no params for it
            assert DIALECT.down(type_name, {"tenant": "t"}) == {}
            continue
        for seed in range(60):
            msg = with_required(fill(PB_TYPE[type_name](), random.Random(f"sdk/{type_name}/{seed}")))
            try:
                v1 = protojson.to_dict(msg)
            except ValueError:
                continue
            lines.append((type_name, seed, _legacy_of(type_name, v1)))
    script = Path(__file__).with_name("sdk03_read.py")
    feed = "".join(json.dumps({"type": t, "value": v}) + "\n" for t, _, v in lines)
    proc = subprocess.run(
        [sdk03_python, str(script)], input=feed, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(lines) > 1200
    wrong: dict[str, Any] = {}  # the first wrong object of each type
    for (type_name, seed, legacy), answer in zip(lines, answers, strict=True):
        if not answer["ok"] or answer["dump"] != legacy:
            wrong.setdefault(type_name, (seed, legacy, answer.get("error") or answer["dump"]))
    assert not wrong, wrong
