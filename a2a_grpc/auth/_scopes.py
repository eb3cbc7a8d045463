"""Skill scopes (issue 11 item 4): a skill may require scopes of its caller.

The auth file's ``[skills.ID]`` tables (docs/auth.md) name the scopes a skill
needs (``scopes = ["admin"]``); the Agent Card's skill then declares them as
its ``securityRequirements`` (one alternative per scheme), written from the
same table by :meth:`AuthPolicy.with_schemes`.

Before a message runs, the agent names the skill it will use: the
:class:`~a2a_grpc.core._executor.AgentExecutor` method ``select_skill(message)``
(plain or async; returns a skill id or None), or the policy's
``select_skill`` hook set in Python. :class:`SkillScopes` (the chain's
*authorization* slot, ahead of the operation) refuses a caller without the
skill's scopes with PERMISSION_DENIED (``skill`` and ``missingScopes`` in the
ErrorInfo metadata) — nothing is stored, no execution starts.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.auth._base import AuthConfigError
from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["SelectSkill", "SkillScopes", "skill_scopes_from_mapping"]

#: Names the skill a message will use (None: none that needs a scope).
SelectSkill = Callable[[pb.Message], "str | Awaitable[str | None] | None"]


def skill_scopes_from_mapping(table: Any) -> dict[str, frozenset[str]]:
    """The ``[skills.ID]`` tables → skill id → required scopes. Raises AuthConfigError."""
    if not isinstance(table, Mapping):
        raise AuthConfigError("skills must be tables ([skills.ID] with scopes = [...])")
    out: dict[str, frozenset[str]] = {}
    for skill_id, entry in table.items():
        if not isinstance(entry, Mapping) or set(entry) - {"scopes"}:
            raise AuthConfigError(f"skills.{skill_id} takes only scopes = [...]")
        scopes = entry.get("scopes", [])
        if not isinstance(scopes, list) or not scopes or not all(isinstance(s, str) for s in scopes):
            raise AuthConfigError(f"skills.{skill_id}.scopes must be a non-empty list of scopes")
        out[str(skill_id)] = frozenset(scopes)
    return out


class SkillScopes(CallInterceptor):
    """Checks the scopes of the skill ``select`` names for each SendMessage
    and SendStreamingMessage of an authenticated caller (see the module)."""

    def __init__(self, scopes: Mapping[str, frozenset[str]], select: SelectSkill) -> None:
        self.scopes = scopes
        self.select = select

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        principal = call.principal
        if principal is None or not isinstance(request, pb.SendMessageRequest):
            return
        chosen = self.select(request.message)
        skill = await chosen if inspect.isawaitable(chosen) else chosen
        if not isinstance(skill, str):
            return
        needed = self.scopes.get(skill)
        if needed and not principal.has_scopes(needed):
            missing = ",".join(sorted(needed - principal.scopes))
            raise A2AError(
                ErrorCode.PERMISSION_DENIED,
                f"the skill {skill!r} needs the scope(s) {missing.replace(',', ', ')}",
                metadata={"skill": skill, "missingScopes": missing},
            )


def skill_interceptor(policy: Any, executor: Any, skills: list[str]) -> list[CallInterceptor]:
    """The :class:`SkillScopes` step for ``policy`` (none without ``[skills]``
    or without a selector). Raises AuthConfigError for a configured skill id
    none of ``skills`` (the cards' skill ids) has, or when skills need scopes
    and neither the agent nor the policy can name one."""
    scopes: Mapping[str, frozenset[str]] = policy.skill_scopes
    if not scopes:
        return []
    unknown = sorted(set(scopes) - set(skills))
    if unknown:
        raise AuthConfigError(f"skills.{unknown[0]}: the Agent Card has no skill with that id")
    select = policy.select_skill or getattr(executor, "select_skill", None)
    if select is None:
        raise AuthConfigError(
            "[skills] need the agent to name the skill of a message: define select_skill(message) on the agent"
            " or set AuthPolicy.select_skill"
        )
    return [SkillScopes(scopes, select)]


def describe_skills(card: pb.AgentCard, scopes: Mapping[str, frozenset[str]], schemes: list[str]) -> None:
    """Writes each scoped skill's ``securityRequirements`` (each scheme alone with the scopes)."""
    for skill in card.skills:
        needed = scopes.get(skill.id)
        if not needed:
            continue
        del skill.security_requirements[:]
        for name in schemes:
            skill.security_requirements.add().schemes[name].list.extend(sorted(needed))
