"""The engine of the dialect tables: JSON objects of one dialect ↔ another.

A dialect is described by a table of :class:`Rule` objects, one per object
type, keyed by name. A rule is declarative — field renames, enum maps,
nested types (single, list or map values), fields dropped in one direction,
an inverted boolean, "0 means unset" fields, a ``kind`` discriminator, a
nesting of flat fields under one key, a union by wrapper key, and at most one
structural :class:`Hook` for what a rename cannot say (the Part shapes, the
card's interfaces). :class:`Dialect` walks a ProtoJSON dict of the v1.0
message (``down``: v1.0 → legacy) or a legacy JSON object (``up``: legacy →
v1.0, then parsed into the proto by the caller, so an unknown legacy field is
an INVALID_PARAMS error with its path).

Nothing here knows a transport; the tables are pure data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a_grpc.errors import A2AError, FieldViolation

__all__ = ["Dialect", "Hook", "Rule"]

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Hook:
    """A structural rewrite of one object: ``down`` runs after the rule's
    field mapping (v1.0 → legacy), ``up`` before it (legacy → v1.0)."""

    down: Callable[[Json], Json]
    up: Callable[[Json], Json]


@dataclass(frozen=True, slots=True)
class Rule:
    """How one v1.0 object type looks in the legacy dialect.

    All names are JSON names. ``rename`` maps v1.0 → legacy; ``types`` gives
    the rule of a nested field (lists are mapped element-wise), ``maps`` of
    the values of a map field; ``enums`` maps v1.0 enum strings → legacy ones;
    ``drop`` lists v1.0 fields with no legacy slot (removed going down),
    ``ignore`` legacy fields with no v1.0 slot (removed going up);
    ``invert`` maps a v1.0 boolean to the legacy one meaning its opposite
    (going down it is always written; going up an absent one stays absent);
    ``zero_unset`` lists legacy integer fields whose 0 means "unset";
    ``kind`` is the legacy ``kind`` discriminator; ``nest`` = (key, fields)
    moves those v1.0 fields under one legacy object; ``union`` maps wrapper
    keys of a v1.0 oneof to the rule of the bare legacy object (told apart by
    its ``kind``).
    """

    rename: Mapping[str, str] = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)
    maps: Mapping[str, str] = field(default_factory=dict)
    enums: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    drop: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    invert: Mapping[str, str] = field(default_factory=dict)
    zero_unset: frozenset[str] = frozenset()
    kind: str = ""
    nest: tuple[str, frozenset[str]] | None = None
    union: Mapping[str, str] = field(default_factory=dict)
    hook: Hook | None = None


def _bad(path: str, text: str) -> A2AError:
    return A2AError.invalid_params(FieldViolation(path, text))


class Dialect:
    """A named table of rules and the two walks over it."""

    def __init__(self, name: str, rules: Mapping[str, Rule]) -> None:
        self.name = name
        self.rules = dict(rules)
        for rule in self.rules.values():
            for target in (*rule.types.values(), *rule.maps.values(), *rule.union.values()):
                if target not in self.rules:
                    raise ValueError(f"{name}: no rule {target!r}")

    # ------------------------------------------------------------ v1.0 → legacy
    def down(self, type_name: str, value: Json) -> Json:
        """The legacy form of ``value`` (ProtoJSON of the v1.0 ``type_name``)."""
        rule = self.rules[type_name]
        if rule.union:
            for key, target in rule.union.items():
                if key in value:
                    return self.down(target, value[key])
            return {}
        out: Json = {}
        for key, item in value.items():
            if key in rule.drop:
                continue
            if key in rule.invert:
                continue
            out[rule.rename.get(key, key)] = self._down_value(rule, key, item)
        for key, legacy in rule.invert.items():
            out[legacy] = not bool(value.get(key, False))
        if rule.nest is not None:
            inner_key, inner = rule.nest
            nested = {k: out.pop(k) for k in list(out) if k in inner}
            out[inner_key] = nested
        if rule.kind:
            out["kind"] = rule.kind
        return rule.hook.down(out) if rule.hook is not None else out

    def _down_value(self, rule: Rule, key: str, item: Any) -> Any:
        if key in rule.types:
            target = rule.types[key]
            return [self.down(target, v) for v in item] if isinstance(item, list) else self.down(target, item)
        if key in rule.maps:
            return {k: self.down(rule.maps[key], v) for k, v in item.items()}
        if key in rule.enums:
            return rule.enums[key].get(item, item)
        return item

    # ------------------------------------------------------------ legacy → v1.0
    def up(self, type_name: str, value: Any, path: str = "params") -> Json:
        """The v1.0 ProtoJSON dict of legacy ``value``; INVALID_PARAMS (with
        ``path``) when it is not an object, or its ``kind`` is wrong. A null
        nested object is left unset (ProtoJSON's reading of null)."""
        rule = self.rules[type_name]
        if not isinstance(value, dict):
            raise _bad(path, "must be a JSON object")
        if rule.union:
            return self._up_union(rule, value, path)
        obj = dict(value)
        if rule.kind and obj.pop("kind", rule.kind) != rule.kind:
            raise _bad(f"{path}.kind", f"must be {rule.kind!r}")
        if rule.hook is not None:
            obj = rule.hook.up(obj)
        if rule.nest is not None:
            inner = obj.pop(rule.nest[0], None)
            if inner is not None:
                if not isinstance(inner, dict):
                    raise _bad(f"{path}.{rule.nest[0]}", "must be a JSON object")
                obj.update(inner)
        back = {legacy: v1 for v1, legacy in rule.rename.items()}
        inverted = {legacy: v1 for v1, legacy in rule.invert.items()}
        out: Json = {}
        for key, item in obj.items():
            if key in rule.ignore:
                continue
            if key in inverted:
                if item is not None and not isinstance(item, bool):
                    raise _bad(f"{path}.{key}", "must be true or false")
                if item is not None:
                    out[inverted[key]] = not item
                continue
            if key in rule.zero_unset and item == 0:
                continue
            name = back.get(key, key)
            if item is None and (name in rule.types or name in rule.maps):
                continue  # JSON null is "not set", as in ProtoJSON (clients that dump every field send it)
            out[name] = self._up_value(rule, name, item, f"{path}.{key}")
        return out

    def _up_union(self, rule: Rule, value: Json, path: str) -> Json:
        kind = value.get("kind")
        for key, target in rule.union.items():
            if self.rules[target].kind == kind:
                return {key: self.up(target, value, path)}
        raise _bad(f"{path}.kind", f"unknown kind {kind!r}")

    def _up_value(self, rule: Rule, name: str, item: Any, path: str) -> Any:
        if name in rule.types:
            target = rule.types[name]
            if isinstance(item, list):
                return [self.up(target, v, f"{path}[{i}]") for i, v in enumerate(item)]
            return self.up(target, item, path)
        if name in rule.maps:
            if not isinstance(item, dict):
                raise _bad(path, "must be a JSON object")
            return {k: self.up(rule.maps[name], v, f"{path}.{k}") for k, v in item.items()}
        if name in rule.enums:
            back = {legacy: v1 for v1, legacy in rule.enums[name].items()}
            if not isinstance(item, str) or item not in back:
                raise _bad(path, f"unknown value {item!r}; expected one of {sorted(back)}")
            return back[item]
        return item
