"""The credentials a client holds, and which headers they become for a card.

A :class:`Credentials` holds an API key and/or a bearer token.
:meth:`Credentials.headers_for` reads the Agent Card's ``securityRequirements``
(alternatives, in order) and ``securitySchemes`` (spec §4.5, §7) and returns
the headers of the first requirement whose every scheme it can satisfy: an
``APIKeySecurityScheme`` in a header (or cookie) gets the API key under the
scheme's name; ``HTTPAuthSecurityScheme`` Bearer, ``OpenIdConnectSecurityScheme``
and ``OAuth2SecurityScheme`` get ``Authorization: Bearer <token>``. A card that
declares nothing gets nothing: a secret is not sent to an agent that did not
ask for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from a2a_grpc.types import pb

__all__ = ["API_KEY_ENV", "TOKEN_ENV", "Credentials"]

#: Environment variables the CLI reads (``--api-key``, ``--token``).
API_KEY_ENV = "A2A_GRPC_API_KEY"
TOKEN_ENV = "A2A_GRPC_TOKEN"
_DEFAULT_KEY_HEADER = "X-API-Key"


@dataclass(frozen=True, slots=True)
class Credentials:
    """An API key and/or a bearer token (either may be empty)."""

    api_key: str = ""
    token: str = ""

    @classmethod
    def from_env(cls) -> Credentials:
        """From ``A2A_GRPC_API_KEY`` and ``A2A_GRPC_TOKEN``."""
        return cls(os.environ.get(API_KEY_ENV, ""), os.environ.get(TOKEN_ENV, ""))

    def __bool__(self) -> bool:
        return bool(self.api_key or self.token)

    def _scheme_headers(self, scheme: pb.SecurityScheme) -> dict[str, str] | None:
        kind = scheme.WhichOneof("scheme")
        if kind == "api_key_security_scheme" and self.api_key:
            api = scheme.api_key_security_scheme
            if api.location.lower() == "header":
                return {api.name or _DEFAULT_KEY_HEADER: self.api_key}
            if api.location.lower() == "cookie":
                return {"Cookie": f"{api.name}={self.api_key}"}
            return None  # query: not carried by every binding (gRPC has none)
        bearer = (
            kind == "http_auth_security_scheme"
            and scheme.http_auth_security_scheme.scheme.lower() == "bearer"
        )
        if (bearer or kind in ("open_id_connect_security_scheme", "oauth2_security_scheme")) and self.token:
            return {"Authorization": f"Bearer {self.token}"}
        return None

    def headers_for(self, card: pb.AgentCard) -> dict[str, str]:
        """The headers meeting the card's first satisfiable requirement (or,
        when the card lists schemes but no requirements, every scheme these
        credentials fit); ``{}`` when none fits."""
        schemes: Mapping[str, pb.SecurityScheme] = card.security_schemes
        requirements = [list(r.schemes) for r in card.security_requirements] or [[n] for n in schemes]
        for names in requirements:
            out: dict[str, str] = {}
            for name in names:
                got = self._scheme_headers(schemes[name]) if name in schemes else None
                if got is None:
                    break
                out.update(got)
            else:
                if out:
                    return out
        return {}

    def default_headers(self) -> dict[str, str]:
        """Headers without a card (``grpc://`` targets, ``for_interface``):
        ``X-API-Key`` and ``Authorization: Bearer``, as given."""
        out: dict[str, str] = {}
        if self.api_key:
            out[_DEFAULT_KEY_HEADER] = self.api_key
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out
