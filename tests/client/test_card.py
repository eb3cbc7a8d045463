"""Agent Card validation and interface choice (spec §8.3.2, digest §8.2)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_grpc.client._card import binding_key, card_url, matching_interfaces, parse_card
from a2a_grpc.errors import A2AError, ErrorCode


def card_json(*interfaces: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    return {
        "name": "agent",
        "description": "",
        "version": "1.0.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": []}],
        "supportedInterfaces": [
            {"url": url, "protocolBinding": binding, "protocolVersion": version}
            for binding, url, version in interfaces
        ],
        **extra,
    }


def test_valid_card_parses_and_ignores_unknown_members() -> None:
    raw = card_json(("GRPC", "127.0.0.1:1", "1.0"), url="http://legacy", preferredTransport="JSONRPC")
    card = parse_card(raw)
    assert card.name == "agent"
    assert card.supported_interfaces[0].protocol_binding == "GRPC"


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda c: c.pop("name"), "name"),
        (lambda c: c.pop("version"), "version"),
        (lambda c: c.pop("capabilities"), "capabilities"),
        (lambda c: c.pop("description"), "description"),
        (
            lambda c: c["supportedInterfaces"][0].pop("protocolVersion"),
            "supportedInterfaces[0].protocolVersion",
        ),
        (lambda c: c["skills"][0].pop("id"), "skills[0].id"),
        (lambda c: c.update(supportedInterfaces=[]), "supportedInterfaces"),
        (lambda c: c.update(name=5), "name"),
    ],
)
def test_invalid_cards_are_rejected_with_the_field_named(mutate: Any, needle: str) -> None:
    raw = card_json(("GRPC", "127.0.0.1:1", "1.0"))
    mutate(raw)
    with pytest.raises(A2AError) as info:
        parse_card(raw)
    assert info.value.code is ErrorCode.INVALID_AGENT_RESPONSE
    assert needle in info.value.message


def test_not_an_object() -> None:
    with pytest.raises(A2AError) as info:
        parse_card(["not", "a", "card"])
    assert info.value.code is ErrorCode.INVALID_AGENT_RESPONSE


def test_choice_follows_the_card_order_filtered_by_allowed_bindings_and_version() -> None:
    card = parse_card(
        card_json(
            ("HTTP+JSON", "http://h/rest", "1.0"),
            ("JSONRPC", "http://h/old", "0.3"),
            ("GRPC", "h:1", "1.0"),
            ("JSONRPC", "http://h/rpc", "1.0.2"),
            ("https://example.com/bindings/custom", "http://h/x", "1.0"),
        )
    )
    urls = [i.url for i in matching_interfaces(card, ["grpc", "jsonrpc", "rest"])]
    assert urls == ["http://h/rest", "h:1", "http://h/rpc"]
    # the caller's order does not reorder the card's preference
    assert [i.url for i in matching_interfaces(card, ["jsonrpc", "grpc"])] == ["h:1", "http://h/rpc"]
    assert [i.url for i in matching_interfaces(card, ["JSONRPC"])] == ["http://h/rpc"]
    assert matching_interfaces(card, ["jsonrpc"], version="0.3")[0].url == "http://h/old"


def test_binding_names_and_card_url() -> None:
    assert binding_key("HTTP+JSON") == "rest"
    assert binding_key("GRPC") == "grpc"
    with pytest.raises(ValueError):
        binding_key("soap")
    assert card_url("http://h:1") == "http://h:1/.well-known/agent-card.json"
    assert card_url("h:1/") == "http://h:1/.well-known/agent-card.json"
    assert card_url("http://h/custom/card.json") == "http://h/custom/card.json"
