"""ListAgents filters and page tokens; pure.

:func:`matches` says whether a registered agent passes every filter of a
``ListAgentsRequest``; :func:`page` cuts the matching agents (sorted by
agent id) into pages. A page token is the last agent id of the page bound to
a fingerprint of the filters, unpadded URL-safe base64 like ListTasks'
tokens (:mod:`a2a_grpc.protocol._paging`): a token given with other filters, or not
issued by the registry, raises ``A2AError(INVALID_PARAMS)`` on
``page_token``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable

from a2a_grpc.client._card import BINDINGS, binding_key
from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.registry._types import rpb
from a2a_grpc.types import pb

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "matches", "page"]

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def _modes(card: pb.AgentCard, skill: pb.AgentSkill, which: str) -> list[str]:
    own = list(getattr(skill, which))
    return own or list(getattr(card, f"default_{which}"))


def _text(card: pb.AgentCard) -> str:
    words = [card.name, card.description]
    for s in card.skills:
        words.extend([s.id, s.name, s.description, *s.tags])
    return " ".join(words).lower()


def _binding(name: str) -> str:
    try:
        return BINDINGS[binding_key(name)]
    except ValueError:
        raise A2AError.invalid_params(FieldViolation("binding", f"unknown binding {name!r}")) from None


def matches(agent: rpb.RegisteredAgent, req: rpb.ListAgentsRequest) -> bool:
    """True when ``agent`` passes every filter set in ``req``. A skill-level
    filter (skill, tag, media types) must hold for one and the same skill.
    Raises INVALID_PARAMS for an unknown ``binding``."""
    card = agent.card
    if req.healthy_only and agent.health != rpb.HEALTH_STATE_HEALTHY:
        return False
    if req.binding:
        wanted = _binding(req.binding)
        if not any(i.protocol_binding.upper() == wanted for i in card.supported_interfaces):
            return False
    if req.query and not all(word in _text(card) for word in req.query.lower().split()):
        return False
    if not (req.skill or req.tag or req.input_mode or req.output_mode):
        return True
    tag = req.tag.lower()
    return any(
        (not req.skill or s.id == req.skill)
        and (not tag or tag in (t.lower() for t in s.tags))
        and (not req.input_mode or req.input_mode in _modes(card, s, "input_modes"))
        and (not req.output_mode or req.output_mode in _modes(card, s, "output_modes"))
        for s in card.skills
    )


def _fingerprint(req: rpb.ListAgentsRequest) -> str:
    raw = json.dumps(
        [req.skill, req.tag, req.input_mode, req.output_mode, req.binding, req.healthy_only, req.query]
    )
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _token(after: str, fp: str) -> str:
    raw = json.dumps([after, fp], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _after(token: str, fp: str) -> str:
    bad = A2AError.invalid_params(FieldViolation("page_token", "is not a page token issued for this query"))
    try:
        after, got = json.loads(base64.urlsafe_b64decode(token.encode() + b"=="))
    except (ValueError, TypeError):
        raise bad from None
    if got != fp or not isinstance(after, str):
        raise bad
    return after


def page(agents: Iterable[rpb.RegisteredAgent], req: rpb.ListAgentsRequest) -> rpb.ListAgentsResponse:
    """The page of ``agents`` that ``req`` asks for. Raises INVALID_PARAMS
    for a page size outside 1..100 or a foreign page token."""
    size = req.page_size if req.HasField("page_size") else DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise A2AError.invalid_params(FieldViolation("page_size", f"must be 1 to {MAX_PAGE_SIZE}"))
    fp = _fingerprint(req)
    after = _after(req.page_token, fp) if req.page_token else ""
    found = sorted((a for a in agents if matches(a, req)), key=lambda a: a.agent_id)
    rest = [a for a in found if a.agent_id > after]
    chunk = rest[:size]
    token = _token(chunk[-1].agent_id, fp) if len(rest) > size else ""
    return rpb.ListAgentsResponse(agents=chunk, next_page_token=token, page_size=size, total_size=len(found))
