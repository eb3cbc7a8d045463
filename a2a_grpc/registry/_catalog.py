"""``/.well-known/api-catalog``: the registry's healthy agents as an RFC 9727
API catalog, a linkset (RFC 9264, ``application/linkset+json``).

The first link context is the catalog itself, with one ``item`` link per
healthy agent to its Agent Card; then each agent's base URL is a context of
its own with a ``service-desc`` link to the card (title: the card's name,
type ``application/json``). Unhealthy agents are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from a2a_grpc.client._card import card_url
from a2a_grpc.registry._types import rpb

__all__ = ["CATALOG_PATH", "LINKSET_TYPE", "linkset"]

CATALOG_PATH = "/.well-known/api-catalog"
LINKSET_TYPE = "application/linkset+json"


def linkset(catalog_url: str, agents: Iterable[rpb.RegisteredAgent]) -> dict[str, Any]:
    """The linkset of the healthy ``agents``, anchored at ``catalog_url``."""
    healthy = sorted((a for a in agents if a.health == rpb.HEALTH_STATE_HEALTHY), key=lambda a: a.agent_id)
    items = [
        {"href": card_url(a.base_url), "type": "application/json", "title": a.card.name} for a in healthy
    ]
    contexts: list[dict[str, Any]] = [{"anchor": catalog_url, "item": items}]
    contexts.extend(
        {
            "anchor": a.base_url,
            "service-desc": [
                {"href": card_url(a.base_url), "type": "application/json", "title": a.card.name}
            ],
        }
        for a in healthy
    )
    return {"linkset": contexts}
