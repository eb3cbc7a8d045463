"""Prints the official ``a2a-sdk``'s canonical form of a card (its signing payload).

Run ONLY as its own process (the SDK's protos clash with ours in one process):

    python tests/tls/sdk_canonical.py < card.json

The SDK's ``a2a.utils.signing`` imports PyJWT, which this project does not
install; only its canonicalisation is called, so stand-in modules satisfy the
imports.
"""

from __future__ import annotations

import sys
import types


def _stub_pyjwt() -> None:
    names = {
        "jwt": {},
        "jwt.api_jws": {},
        "jwt.api_jwk": {"PyJWK": type("PyJWK", (), {})},
        "jwt.exceptions": {"PyJWTError": type("PyJWTError", (Exception,), {})},
        "jwt.utils": {"base64url_decode": None, "base64url_encode": None},
    }
    for name, attrs in names.items():
        if name in sys.modules:
            continue
        module = types.ModuleType(name)
        for key, value in attrs.items():
            setattr(module, key, value)
        sys.modules[name] = module
    jwt = sys.modules["jwt"]
    jwt.api_jws = sys.modules["jwt.api_jws"]  # type: ignore[attr-defined]


def main() -> None:
    try:
        import jwt  # noqa: F401
    except ImportError:
        _stub_pyjwt()
    from a2a.types import AgentCard
    from a2a.utils.signing import _canonicalize_agent_card
    from google.protobuf import json_format

    card = json_format.Parse(sys.stdin.read(), AgentCard(), ignore_unknown_fields=True)
    sys.stdout.write(_canonicalize_agent_card(card))


if __name__ == "__main__":
    main()
