"""Request validation derived from the proto itself.

REQUIRED fields are found through their ``google.api.field_behavior``
annotation, so a field added to the proto is validated with no code change
(spec §5.7: REQUIRED fields must be present, REQUIRED repeated fields need at
least one element). On top of that: a Part must carry content, enum values must
be known, ids must be routable over REST (no ``/``, ``:`` or control
characters, spec §2 notes; a tenant no literal segment of the HTTP+JSON paths,
such as ``tasks``), history lengths must not be negative, and free-form JSON
(Struct/Value) must hold finite numbers only and nest at most
:data:`MAX_JSON_DEPTH` levels — on every binding, gRPC included.
Failures are INVALID_PARAMS with one ``google.rpc.BadRequest`` field violation
per problem, using proto field paths such as ``message.parts[0]``.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from google.protobuf import descriptor
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.protocol._typecache import TypeCache
from a2a_grpc.types import is_required

__all__ = ["ID_FIELDS", "JSON_TYPES", "MAX_JSON_DEPTH", "check_id", "route_words", "validate_request"]

_FD = descriptor.FieldDescriptor
#: Fields holding ids that travel in REST paths or identify resources.
ID_FIELDS = frozenset({"id", "task_id", "context_id", "tenant"})
_WELL_KNOWN = ("google.protobuf.",)
_MAX_VIOLATIONS = 20
_NON_NEGATIVE = frozenset({"history_length", "page_size"})


@cache
def _required(desc: descriptor.Descriptor) -> tuple[descriptor.FieldDescriptor, ...]:
    return tuple(fd for fd in desc.fields if is_required(fd))


#: Any character :func:`check_id` refuses.
_NOT_IN_IDS = re.compile(r"[/:\x00-\x1f\x7f]")


def check_id(value: str) -> str | None:
    """Why ``value`` cannot be used as an id in a REST path, or None."""
    if len(value) <= 256 and _NOT_IN_IDS.search(value) is None:
        return None  # the common case, in one regex scan
    if "/" in value or ":" in value:
        return "must not contain '/' or ':' (it could not be routed over HTTP+JSON)"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return "must not contain control characters"
    if len(value) > 256:
        return "must be at most 256 characters"
    return None


#: Types holding free-form JSON (``google.protobuf.Struct`` and friends).
JSON_TYPES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})
#: How deep objects and arrays may nest in one Struct/Value/ListValue: each
#: level is two messages, and the answers wrap a request's JSON in a few more
#: (a Task in a StreamResponse or ListTasksResponse), which must stay within
#: the 100 nested messages protobuf parsers accept.
MAX_JSON_DEPTH = 32


#: In the binary form, a ``number_value`` is the tag byte 0x11 and 8 bytes
#: of IEEE double; NaN and infinities have all exponent bits set.
_NON_FINITE_BYTES = re.compile(rb"\x11.{6}[\xf0-\xff][\x7f\xff]", re.DOTALL)
#: Tag bytes of ``Value.struct_value`` (5) and ``Value.list_value`` (6):
#: each nested object or array needs one.
_CONTAINER_TAGS = (b"\x2a", b"\x32")


def _json_problem(value: ProtoMessage) -> str | None:
    """Why a Struct/Value/ListValue cannot be a request's JSON, or None: a
    number that is NaN or infinite (JSON has no form for it: ProtoJSON
    cannot write it, and no JSON binding could answer it back), or objects
    and arrays nested deeper than :data:`MAX_JSON_DEPTH`.

    The binary form answers most values at C speed: no byte sequence that
    a non-finite number needs and fewer container tags than the depth limit
    (each nested object or array needs one) leave nothing to find; the
    walk below runs only when either may be there."""
    data = value.SerializeToString()
    if not _NON_FINITE_BYTES.search(data) and sum(map(data.count, _CONTAINER_TAGS)) < MAX_JSON_DEPTH:
        return None
    return _walk_json(value)


def _walk_json(value: ProtoMessage) -> str | None:
    """:func:`_json_problem` the slow way, Value by Value."""
    name = value.DESCRIPTOR.full_name
    if name == "google.protobuf.Value":
        items: Any = (value,)
    elif name == "google.protobuf.Struct":
        items = value.fields.values()  # type: ignore[attr-defined]
    else:
        items = value.values  # type: ignore[attr-defined]
    # (the Values of one object or array, how deep it is)
    stack: list[tuple[Any, int]] = [(items, 0 if name == "google.protobuf.Value" else 1)]
    isfinite = math.isfinite
    while stack:
        items, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"must not nest objects and arrays deeper than {MAX_JSON_DEPTH} levels"
        for v in items:
            kind = v.WhichOneof("kind")
            if kind == "number_value":
                if not isfinite(v.number_value):
                    return f"must hold finite numbers only ({v.number_value} has no JSON form)"
            elif kind == "struct_value":
                stack.append((v.struct_value.fields.values(), depth + 1))
            elif kind == "list_value":
                stack.append((v.list_value.values, depth + 1))
    return None


def _check_json(fd: descriptor.FieldDescriptor, value: Any, name: str, out: list[FieldViolation]) -> None:
    """The JSON rules (:func:`_json_problem`) for a set Struct/Value/ListValue
    field, one violation per field."""
    for i, item in enumerate(value) if fd.is_repeated else ((None, value),):
        problem = _json_problem(item)
        if problem:
            out.append(FieldViolation(name if i is None else f"{name}[{i}]", problem))
            return


@cache
def route_words() -> frozenset[str]:
    """The literal path segments of the A2A service's HTTP+JSON routes
    (``tasks``, ``message``, ``extendedAgentCard``,
    ``pushNotificationConfigs``), read from its ``google.api.http`` rules."""
    from a2a_grpc.protocol._httprule import compile_service
    from a2a_grpc.types import pb

    table = compile_service(pb.DESCRIPTOR.services_by_name["A2AService"])
    return table.literals


def _check_ids(fname: str, value: str) -> str | None:
    """Why ``value`` cannot be the id field ``fname``, or None. A tenant is
    the first path segment of the HTTP+JSON routes that have one
    (``/{tenant}/tasks``): one equal to a literal segment (``tasks``) would
    make ``/tasks/tasks`` mean two things, so it is refused (docs/decisions.md)."""
    reason = check_id(value)
    if reason is None and fname == "tenant" and value in route_words():
        words = ", ".join(sorted(route_words()))
        reason = f"must not be a word of the HTTP+JSON paths ({words}): it could not be routed"
    return reason


def _check_field(fd: descriptor.FieldDescriptor, value: Any, name: str, out: list[FieldViolation]) -> None:
    """The per-field rules for one set field (any type): the generic form of a
    :class:`_Plan`'s checks, used when a plan cannot be (see :func:`_walk`)."""
    if fd.type == _FD.TYPE_ENUM:
        enum = fd.enum_type
        assert enum is not None
        values = list(value) if fd.is_repeated else [value]
        out.extend(
            FieldViolation(name, f"unknown {enum.name} value {v}")
            for v in values
            if enum.values_by_number.get(v) is None
        )
    elif fd.type == _FD.TYPE_STRING and fd.name in ID_FIELDS and not fd.is_repeated:
        reason = _check_ids(fd.name, value)
        if reason:
            out.append(FieldViolation(name, reason))
    elif fd.type in (_FD.TYPE_INT32, _FD.TYPE_INT64) and fd.name in _NON_NEGATIVE:
        if value < 0:
            out.append(FieldViolation(name, "must not be negative"))
    elif fd.type == _FD.TYPE_MESSAGE:
        if fd.message_type is None or fd.message_type.GetOptions().map_entry:
            return
        if fd.message_type.full_name in JSON_TYPES:
            _check_json(fd, value, name, out)
        elif fd.is_repeated:
            for i, item in enumerate(value):
                _walk(item, f"{name}[{i}]", out)
        else:
            _walk(value, name, out)


# What a plan does with one field: the kinds below, in field-number order.
_ENUM, _ENUM_LIST, _ID, _NON_NEG, _CHILD, _CHILD_LIST, _JSON = range(7)
# What a REQUIRED field must hold: non-empty (repeated), presence (message), non-zero (enum), truthy.
_REQ_LIST, _REQ_MESSAGE, _REQ_ENUM, _REQ_VALUE = range(4)


@dataclass(slots=True)
class _Plan:
    """What :func:`_walk` checks in one message type, derived once from its
    descriptor: the REQUIRED fields, whether it is ``lf.a2a.v1.Part``, and the
    fields with a rule (enums, ids, non-negative counts, and message children
    whose own plan is not empty), in field-number order (``ListFields``'s)."""

    required: list[tuple[str, int]] = field(default_factory=list)  # (proto name, _REQ_*)
    part: bool = False
    # (proto name, kind, known enum numbers or child plan)
    checks: list[tuple[str, int, Any]] = field(default_factory=list)
    building: bool = True

    def empty(self) -> bool:
        return not (self.building or self.required or self.part or self.checks)


_EMPTY = _Plan(building=False)


def _plan(desc: Any) -> _Plan:
    """The plan of ``desc``, built once per type (see :mod:`a2a_grpc.protocol._typecache`)."""
    return _PLANS.get(desc)


def _build_plan(desc: Any) -> _Plan:
    if desc.full_name.startswith(_WELL_KNOWN):
        _PLANS.building(desc, _EMPTY)
        return _EMPTY
    plan = _PLANS.building(desc, _Plan())
    for fd in _required(desc):
        if fd.is_repeated:
            kind = _REQ_LIST
        elif fd.type == _FD.TYPE_MESSAGE:
            kind = _REQ_MESSAGE
        elif fd.type == _FD.TYPE_ENUM:
            kind = _REQ_ENUM
        else:
            kind = _REQ_VALUE
        plan.required.append((fd.name, kind))
    plan.part = desc.name == "Part" and desc.full_name == "lf.a2a.v1.Part"
    for fd in sorted(desc.fields, key=lambda f: f.number):
        if fd.type == _FD.TYPE_ENUM:
            assert fd.enum_type is not None
            known = frozenset(fd.enum_type.values_by_number)
            plan.checks.append((fd.name, _ENUM_LIST if fd.is_repeated else _ENUM, (fd.enum_type.name, known)))
        elif fd.type == _FD.TYPE_STRING and fd.name in ID_FIELDS and not fd.is_repeated:
            plan.checks.append((fd.name, _ID, None))
        elif fd.type in (_FD.TYPE_INT32, _FD.TYPE_INT64) and fd.name in _NON_NEGATIVE:
            plan.checks.append((fd.name, _NON_NEG, None))
        elif fd.type == _FD.TYPE_MESSAGE:
            child_desc = fd.message_type
            if child_desc is None or child_desc.GetOptions().map_entry:
                continue
            if child_desc.full_name in JSON_TYPES:
                plan.checks.append((fd.name, _JSON, fd))
                continue
            child = _plan(child_desc)
            if not child.empty():
                plan.checks.append((fd.name, _CHILD_LIST if fd.is_repeated else _CHILD, child))
    plan.building = False
    return plan


def _walk(msg: ProtoMessage, path: str, out: list[FieldViolation]) -> None:
    _walk_plan(msg, _plan(msg.DESCRIPTOR), path, out)


def _check_required(msg: ProtoMessage, plan: _Plan, prefix: str, out: list[FieldViolation]) -> None:
    """The REQUIRED fields of a plan."""
    for fname, req in plan.required:
        if req == _REQ_LIST:
            if len(getattr(msg, fname)) == 0:
                out.append(FieldViolation(prefix + fname, "is required and must not be empty"))
        elif req == _REQ_MESSAGE:
            if not msg.HasField(fname):
                out.append(FieldViolation(prefix + fname, "is required"))
        elif req == _REQ_ENUM:
            if getattr(msg, fname) == 0:
                out.append(FieldViolation(prefix + fname, "is required (UNSPECIFIED is not a value)"))
        elif not getattr(msg, fname):
            out.append(FieldViolation(prefix + fname, "is required"))


def _walk_plan(msg: ProtoMessage, plan: _Plan, path: str, out: list[FieldViolation]) -> None:
    prefix = f"{path}." if path else ""
    if plan.required:
        _check_required(msg, plan, prefix, out)
    if plan.part and msg.WhichOneof("content") is None:
        out.append(FieldViolation(path or "part", "must have content: one of text, raw, url or data"))
    if len(out) >= _MAX_VIOLATIONS:
        # The violation cap is checked after each set field, so with the cap
        # already reached only the first set field is still looked at.
        listed = msg.ListFields()
        if listed:
            fd, value = listed[0]
            _check_field(fd, value, prefix + fd.name, out)
        return
    for fname, kind, arg in plan.checks:
        if kind == _CHILD:
            if not msg.HasField(fname):
                continue
            _walk_plan(getattr(msg, fname), arg, prefix + fname, out)
        elif kind == _CHILD_LIST:
            items = getattr(msg, fname)
            if not items:
                continue
            name = prefix + fname
            for i, item in enumerate(items):
                _walk_plan(item, arg, f"{name}[{i}]", out)
        elif kind == _JSON:
            if arg.is_repeated or msg.HasField(fname):
                _check_json(arg, getattr(msg, fname), prefix + fname, out)
        elif kind == _ID:
            value = getattr(msg, fname)
            if not value:
                continue
            reason = _check_ids(fname, value)
            if reason:
                out.append(FieldViolation(prefix + fname, reason))
        elif kind == _ENUM:
            value = getattr(msg, fname)
            if value in arg[1]:
                continue
            out.append(FieldViolation(prefix + fname, f"unknown {arg[0]} value {value}"))
        elif kind == _ENUM_LIST:
            enum_name, known = arg
            out.extend(
                FieldViolation(prefix + fname, f"unknown {enum_name} value {v}")
                for v in getattr(msg, fname)
                if v not in known
            )
        elif getattr(msg, fname) < 0:  # _NON_NEG
            out.append(FieldViolation(prefix + fname, "must not be negative"))
        if len(out) >= _MAX_VIOLATIONS:
            return


def _walk_reference(msg: ProtoMessage, path: str, out: list[FieldViolation]) -> None:
    """The descriptor-walking form of :func:`_walk` (no plans), kept for the
    equivalence tests."""
    desc = msg.DESCRIPTOR
    if desc.full_name.startswith(_WELL_KNOWN):
        return
    prefix = f"{path}." if path else ""
    for fd in _required(desc):
        name = prefix + fd.name
        if fd.is_repeated:
            if len(getattr(msg, fd.name)) == 0:
                out.append(FieldViolation(name, "is required and must not be empty"))
        elif fd.type == _FD.TYPE_MESSAGE:
            if not msg.HasField(fd.name):
                out.append(FieldViolation(name, "is required"))
        elif fd.type == _FD.TYPE_ENUM:
            if getattr(msg, fd.name) == 0:
                out.append(FieldViolation(name, "is required (UNSPECIFIED is not a value)"))
        elif not getattr(msg, fd.name):
            out.append(FieldViolation(name, "is required"))
    if desc.name == "Part" and desc.full_name == "lf.a2a.v1.Part" and msg.WhichOneof("content") is None:
        out.append(FieldViolation(path or "part", "must have content: one of text, raw, url or data"))
    for fd, value in msg.ListFields():
        name = prefix + fd.name
        if (
            fd.type == _FD.TYPE_MESSAGE
            and fd.message_type is not None
            and not fd.message_type.GetOptions().map_entry
            and fd.message_type.full_name not in JSON_TYPES
        ):
            if fd.is_repeated:
                for i, item in enumerate(value):
                    _walk_reference(item, f"{name}[{i}]", out)
            else:
                _walk_reference(value, name, out)
        else:
            _check_field(fd, value, name, out)
        if len(out) >= _MAX_VIOLATIONS:
            return


def validate_request(request: ProtoMessage) -> None:
    """Raises INVALID_PARAMS with field violations if ``request`` breaks a
    REQUIRED annotation or one of the rules in the module docstring."""
    if _passes(request.DESCRIPTOR)(request):
        return
    out: list[FieldViolation] = []
    _walk(request, "", out)
    if out:
        raise A2AError.invalid_params(*out)


def _attr(fname: str) -> str:
    """The expression reading field ``fname`` of ``m`` in generated code."""
    return f"m.{fname}" if fname.isidentifier() and not keyword.iskeyword(fname) else f"getattr(m, {fname!r})"


_REQUIRED_TEST = {
    _REQ_LIST: "not len({v})",
    _REQ_MESSAGE: "not m.HasField({f!r})",
    _REQ_ENUM: "{v} == 0",
    _REQ_VALUE: "not {v}",
}


def _plan_lines(plan: _Plan, name: str, env: dict[str, Any], child_name: Callable[[_Plan], str]) -> str:
    """The source of ``name(m) -> bool``: True when ``m`` breaks no rule of ``plan``.
    A repeated field is looped over as a list (``[:]``): a protobuf
    container has no iterator, so a loop over it ends in an IndexError."""
    body: list[str] = []
    for fname, req in plan.required:
        body.append(f"if {_REQUIRED_TEST[req].format(v=_attr(fname), f=fname)}: return False")
    if plan.part:
        body.append("if m.WhichOneof('content') is None: return False")
    for fname, kind, arg in plan.checks:
        v, has = _attr(fname), f"m.HasField({fname!r})"
        if kind == _CHILD:
            body.append(f"if {has} and not {child_name(arg)}({v}): return False")
        elif kind == _CHILD_LIST:
            body.append(f"for x in {v}[:]:\n        if not {child_name(arg)}(x): return False")
        elif kind == _JSON and arg.is_repeated:
            body.append(f"for x in {v}[:]:\n        if _json_problem(x): return False")
        elif kind == _JSON:
            body.append(f"if {has} and _json_problem({v}): return False")
        elif kind == _ID:
            body.append(f"v = {v}\n    if v and _check_ids({fname!r}, v) is not None: return False")
        elif kind in (_ENUM, _ENUM_LIST):
            ref = f"_known{len(env)}"
            env[ref] = arg[1]  # the enum's known numbers
            test = f"if {v} not in {ref}" if kind == _ENUM else f"for x in {v}[:]:\n        if x not in {ref}"
            body.append(test + ": return False")
        else:  # _NON_NEG
            body.append(f"if {v} < 0: return False")
    return f"def {name}(m):\n" + "".join(f"    {line}\n" for line in body) + "    return True\n"


@cache
def _passes(desc: descriptor.Descriptor) -> Callable[[ProtoMessage], bool]:
    """A function generated once per request type from its plans: True when
    the message breaks no rule (the answer of :func:`_walk` finding nothing,
    without building a field path or a violation). Only when it says False
    does :func:`validate_request` walk the message for the violations."""
    names: dict[int, str] = {}
    sources: list[str] = []
    env: dict[str, Any] = {"_json_problem": _json_problem, "_check_ids": _check_ids}

    def child_name(plan: _Plan) -> str:
        if id(plan) not in names:  # named before it is generated: plans may refer to themselves
            names[id(plan)] = f"_ok{len(names)}"
            sources.append(_plan_lines(plan, names[id(plan)], env, child_name))
        return names[id(plan)]

    root = child_name(_plan(desc))
    env["__source__"] = source = "\n".join(sources)
    exec(source, env)  # our own source, built from the proto's descriptors
    fn: Callable[[ProtoMessage], bool] = env[root]
    return fn


_PLANS: TypeCache[_Plan] = TypeCache(_build_plan)
