"""Which skill a task needs, and what the delegate is sent.

A :data:`Planner` is any callable taking the caller's ``pb.Message`` and
returning a :class:`Plan` (the skill id and the message for the delegate),
or None when it cannot tell. :class:`RulePlanner`, the default, reads:

1. a data part ``{"skill": "<id>", ...}``: that skill; the part goes on to
   the delegate without its ``skill`` member (dropped when nothing else is
   left);
2. else its rules in order: the first whose predicate holds. The default
   rules send a unified diff (a ``text/x-diff`` part, or text with
   ``--- ``/``+++ ``/``@@`` lines) to ``review-diff`` (the code-review agent's skill) and Python source (text
   that parses, with a ``def``, ``class`` or ``import``) to ``explain``.

An LLM-backed planner is just another callable (``OrchestratorAgent(planner=...)``);
it may be a coroutine function.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["DEFAULT_RULES", "Plan", "Planner", "Rule", "RulePlanner", "is_diff", "is_python"]


@dataclass(frozen=True, slots=True)
class Plan:
    """The skill to delegate to and the message to send the delegate."""

    skill: str
    message: pb.Message


Planner = Callable[[pb.Message], "Plan | Awaitable[Plan | None] | None"]


@dataclass(frozen=True, slots=True)
class Rule:
    """``skill`` when ``applies(message)``."""

    skill: str
    applies: Callable[[pb.Message], bool]


_DIFF = re.compile(r"^--- .*\n\+\+\+ .*\n@@ ", re.MULTILINE)


def _texts(message: pb.Message) -> list[str]:
    return [p.text for p in message.parts if p.WhichOneof("content") == "text"]


def is_diff(message: pb.Message) -> bool:
    """A ``text/x-diff`` part, or text holding a unified diff header."""
    if any(p.media_type in ("text/x-diff", "text/x-patch") for p in message.parts):
        return True
    return any(_DIFF.search(t) for t in _texts(message))


def is_python(message: pb.Message) -> bool:
    """Text that parses as Python and defines or imports something."""
    for text in _texts(message):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        if any(isinstance(node, kinds) for node in tree.body):
            return True
    return False


DEFAULT_RULES: tuple[Rule, ...] = (Rule("review-diff", is_diff), Rule("explain", is_python))


class RulePlanner:
    """The default planner (see the module docstring)."""

    def __init__(self, rules: Sequence[Rule] = DEFAULT_RULES) -> None:
        self.rules = tuple(rules)

    def __call__(self, message: pb.Message) -> Plan | None:
        """The plan for ``message``, or None when no rule applies."""
        for i, part in enumerate(message.parts):
            if part.WhichOneof("content") != "data" or part.data.WhichOneof("kind") != "struct_value":
                continue
            fields = part.data.struct_value.fields
            if "skill" in fields and fields["skill"].WhichOneof("kind") == "string_value":
                return Plan(fields["skill"].string_value, _without_skill(message, i))
        for rule in self.rules:
            if rule.applies(message):
                return Plan(rule.skill, _copy(message))
        return None


def _copy(message: pb.Message) -> pb.Message:
    out = pb.Message()
    out.CopyFrom(message)
    return out


def _without_skill(message: pb.Message, index: int) -> pb.Message:
    """``message`` with the routing member ``skill`` taken out of part ``index``."""
    out = _copy(message)
    value = protojson.json_value(out.parts[index].data)
    value.pop("skill", None)
    if value:
        out.parts[index].data.struct_value.Clear()
        out.parts[index].data.struct_value.update(value)
    else:
        del out.parts[index]
    return out
