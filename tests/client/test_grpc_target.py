"""The card's GRPC interface URL: bare host:port (design.md) or a URL with a scheme."""

from __future__ import annotations

import pytest

from a2a_grpc.client._grpc import grpc_target


@pytest.mark.parametrize(
    ("url", "target", "tls"),
    [
        ("127.0.0.1:50051", "127.0.0.1:50051", False),
        ("agent.example.com:443", "agent.example.com:443", True),
        ("grpc://127.0.0.1:50051", "127.0.0.1:50051", False),
        ("http://h:8081/", "h:8081", False),
        ("grpcs://agent.example.com", "agent.example.com:443", True),
        ("https://agent.example.com:8443", "agent.example.com:8443", True),
        ("grpc://[::1]:50051", "[::1]:50051", False),
    ],
)
def test_grpc_target(url: str, target: str, tls: bool) -> None:
    assert grpc_target(url) == (target, tls)
