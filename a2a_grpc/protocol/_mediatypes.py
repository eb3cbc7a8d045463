"""Incoming media types against the Agent Card's input modes (spec §4.4.1
``defaultInputModes``, §4.4.5 ``AgentSkill.inputModes``; §3.3.2
ContentTypeNotSupportedError).

Before an agent runs, every part of the client's message must have a media
type the card accepts: one of ``default_input_modes`` or of any skill's
``input_modes`` (a message names no skill, so any skill's modes will do). A
card that declares no modes accepts anything. A part's media type is its
``media_type``, or what its content implies: ``text/plain`` for text,
``application/json`` for data, ``application/octet-stream`` for a file
(``raw`` or ``url``). Modes match case-insensitively, without parameters
(``text/plain; charset=utf-8`` is ``text/plain``), and a mode may be a
wildcard (``*/*``, ``text/*``).

An agent that inspects parts itself opts out with
``AgentExecutor.check_input_modes = False``.
"""

from __future__ import annotations

from collections.abc import Iterable

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["accepted_input_modes", "check_input_modes", "mode_matches", "part_media_type"]


def accepted_input_modes(card: pb.AgentCard) -> tuple[str, ...]:
    """The card's default input modes, then each skill's that are new, in order."""
    seen: dict[str, None] = dict.fromkeys(card.default_input_modes)
    for skill in card.skills:
        seen.update(dict.fromkeys(skill.input_modes))
    return tuple(m for m in seen if m.strip())


def part_media_type(part: pb.Part) -> str:
    """The part's media type: ``media_type`` when set, else what its content implies."""
    if part.media_type:
        return part.media_type
    kind = part.WhichOneof("content")
    if kind == "text":
        return "text/plain"
    if kind == "data":
        return "application/json"
    return "application/octet-stream"


def _essence(media_type: str) -> tuple[str, str]:
    base = media_type.split(";", 1)[0].strip().lower()
    kind, _, sub = base.partition("/")
    return kind, sub


def mode_matches(media_type: str, modes: Iterable[str]) -> bool:
    """Whether ``media_type`` is one of ``modes`` (wildcards allowed on either side)."""
    kind, sub = _essence(media_type)
    for mode in modes:
        mkind, msub = _essence(mode)
        if mkind in ("*", kind) and msub in ("*", sub):
            return True
        if kind == "*" and sub in ("*", msub):
            return True
    return False


def check_input_modes(message: pb.Message, card: pb.AgentCard) -> None:
    """Raises CONTENT_TYPE_NOT_SUPPORTED (spec §3.3.2) naming the first part
    whose media type the card does not accept, and the accepted list
    (message and ``acceptedInputModes`` metadata, comma-separated)."""
    modes = accepted_input_modes(card)
    if not modes:
        return
    for i, part in enumerate(message.parts):
        media_type = part_media_type(part)
        if not mode_matches(media_type, modes):
            accepted = ", ".join(modes)
            raise A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"message.parts[{i}] has media type {media_type}, which this agent does not accept; "
                f"accepted input modes: {accepted}",
                metadata={"mediaType": media_type, "acceptedInputModes": ",".join(modes)},
            )
