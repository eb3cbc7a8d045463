"""The public Agent Card a server serves (spec §8), as decorated cards.

The agent supplies its card without interfaces; the server's card is that
card through a chain of *card decorators* — pure ``card -> card`` functions
(:data:`CardDecorator`): the capabilities the server implements, the
features' decorators (the auth schemes), the interfaces it listens on (known
once its ports are bound) and last a signature. No decorator changes the
card it is given, and nothing changes a card once it is served:
:class:`ServedCard` computes a new one when the interfaces are known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from a2a_grpc.types import pb

__all__ = [
    "BINDINGS",
    "PROTOCOL_VERSION",
    "CardDecorator",
    "ServedCard",
    "build_card",
    "capabilities",
    "decorate",
    "interfaces",
]

#: A2A protocol version served by every interface (spec §3.6: Major.Minor).
PROTOCOL_VERSION = "1.0"
#: The three core protocol bindings, as spelled in AgentInterface.protocol_binding.
BINDINGS = ("GRPC", "JSONRPC", "HTTP+JSON")

#: A pure ``card -> card`` function: returns a new card, never changes its argument.
CardDecorator = Callable[[pb.AgentCard], pb.AgentCard]


def _copy(card: pb.AgentCard) -> pb.AgentCard:
    out = pb.AgentCard()
    out.CopyFrom(card)
    return out


def decorate(card: pb.AgentCard, decorators: Sequence[CardDecorator]) -> pb.AgentCard:
    """``card`` through ``decorators`` in order: always a new card."""
    out = card
    for decorator in decorators:
        out = decorator(out)
    return _copy(card) if out is card else out


def interfaces(
    urls: Mapping[str, str], order: Sequence[str] = BINDINGS, extra: Sequence[pb.AgentInterface] = ()
) -> CardDecorator:
    """The decorator that lists ``urls[binding]`` for each binding of
    ``order`` that has a URL (gRPC as a bare ``host:port``, docs/decisions.md),
    then ``extra``, as the card's ``supported_interfaces``. Raises ValueError
    for a binding that is not one of :data:`BINDINGS`."""
    unknown = [b for b in order if b not in BINDINGS]
    if unknown:
        raise ValueError(f"unknown protocol binding {unknown[0]!r}; expected one of {', '.join(BINDINGS)}")
    listed = [
        pb.AgentInterface(url=urls[b], protocol_binding=b, protocol_version=PROTOCOL_VERSION)
        for b in order
        if urls.get(b)
    ]

    def with_interfaces(card: pb.AgentCard) -> pb.AgentCard:
        out = _copy(card)
        del out.supported_interfaces[:]
        out.supported_interfaces.extend([*listed, *extra])
        return out

    return with_interfaces


def capabilities(*, push: bool, extended: bool, streaming: bool | None = None) -> CardDecorator:
    """The decorator that sets ``pushNotifications`` from ``push``,
    ``extendedAgentCard`` true exactly when an extended card is configured
    (``extended``; an agent's explicit false is kept), and ``streaming`` when
    given."""

    def with_capabilities(card: pb.AgentCard) -> pb.AgentCard:
        out = _copy(card)
        caps = out.capabilities
        caps.push_notifications = push
        if extended:
            caps.extended_agent_card = True
        elif caps.extended_agent_card:
            # Never claim an extended card that is not there: clients fetch it.
            caps.ClearField("extended_agent_card")
        if streaming is not None:
            caps.streaming = streaming
        return out

    return with_capabilities


def build_card(
    agent_card: pb.AgentCard,
    urls: Mapping[str, str],
    *,
    order: Sequence[str] = BINDINGS,
    push: bool = False,
    extended: bool = False,
    streaming: bool | None = None,
) -> pb.AgentCard:
    """A copy of ``agent_card`` with the :func:`interfaces` of ``urls`` in
    ``order`` and the :func:`capabilities` ``push``, ``extended`` and
    ``streaming``."""
    with_urls = interfaces(urls, order)
    return decorate(agent_card, [with_urls, capabilities(push=push, extended=extended, streaming=streaming)])


class ServedCard:
    """The public card a server serves; call it for the card served now.

    ``base`` is ``agent_card`` through ``decorators`` (the capabilities and
    the features' decorators): the card the handler and the built-in steps
    read, and the one served until :meth:`publish`. ``publish(with_urls)``,
    once the server's ports are bound, makes the served card ``agent_card``
    through ``with_urls`` (:func:`interfaces`), ``decorators`` and then
    ``last`` (a signature covers everything before it). A new card each
    time: a card already served is never changed."""

    __slots__ = ("_agent", "_card", "_decorators", "_last", "base")

    def __init__(
        self,
        agent_card: pb.AgentCard,
        decorators: Sequence[CardDecorator] = (),
        *,
        last: Sequence[CardDecorator] = (),
    ) -> None:
        self._agent = agent_card
        self._decorators = tuple(decorators)
        self._last = tuple(last)
        self.base = decorate(agent_card, self._decorators)
        self._card = self.base

    def __call__(self) -> pb.AgentCard:
        return self._card

    def publish(self, with_urls: CardDecorator) -> None:
        """Serves from now on the card with the interfaces ``with_urls`` adds."""
        self._card = decorate(self._agent, (with_urls, *self._decorators, *self._last))
