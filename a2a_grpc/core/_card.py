"""Building the public Agent Card an A2AServer serves (spec §8).

The agent supplies its card without interfaces; the server adds one
``AgentInterface`` per binding it listens on, in the configured preference
order, and fills the capabilities it implements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from a2a_grpc.types import pb

__all__ = ["BINDINGS", "PROTOCOL_VERSION", "build_card"]

#: A2A protocol version served by every interface (spec §3.6: Major.Minor).
PROTOCOL_VERSION = "1.0"
#: The three core protocol bindings, as spelled in AgentInterface.protocol_binding.
BINDINGS = ("GRPC", "JSONRPC", "HTTP+JSON")


def build_card(
    agent_card: pb.AgentCard,
    urls: Mapping[str, str],
    *,
    order: Sequence[str] = BINDINGS,
    push: bool = False,
    extended: bool = False,
    streaming: bool | None = None,
) -> pb.AgentCard:
    """A copy of ``agent_card`` with ``supported_interfaces`` listing
    ``urls[binding]`` for each binding of ``order`` that has a URL (gRPC as a
    bare ``host:port``, design.md), ``pushNotifications`` set from ``push``,
    ``extendedAgentCard`` true exactly when an extended card is configured
    (``extended``; an agent's explicit false is kept), and ``streaming`` when
    given."""
    card = pb.AgentCard()
    card.CopyFrom(agent_card)
    del card.supported_interfaces[:]
    for binding in order:
        if binding not in BINDINGS:
            raise ValueError(f"unknown protocol binding {binding!r}; expected one of {', '.join(BINDINGS)}")
        url = urls.get(binding)
        if url:
            card.supported_interfaces.append(
                pb.AgentInterface(url=url, protocol_binding=binding, protocol_version=PROTOCOL_VERSION)
            )
    card.capabilities.push_notifications = push
    if extended:
        card.capabilities.extended_agent_card = True
    elif card.capabilities.extended_agent_card:
        # Never claim an extended card that is not there: clients fetch it.
        card.capabilities.ClearField("extended_agent_card")
    if streaming is not None:
        card.capabilities.streaming = streaming
    return card
