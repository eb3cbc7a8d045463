"""What every authenticator implements, and the errors authentication raises.

An :class:`Authenticator` serves one security scheme of the Agent Card (spec
§4.5, §7): it describes itself as a ``pb.SecurityScheme`` for the card, says
how a caller should authenticate (a ``WWW-Authenticate`` challenge), and turns
the credential a call carries into a :class:`~a2a_grpc.principal.Principal`.
The card's schemes and their enforcement come from the same objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from a2a_grpc.context import CallContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.principal import Principal
from a2a_grpc.types import pb

__all__ = ["WWW_AUTHENTICATE", "AuthConfigError", "Authenticator", "BadCredential", "Unauthenticated"]

#: The gRPC trailer (and, through the gateway, HTTP header) naming how to authenticate.
WWW_AUTHENTICATE = "www-authenticate"


class AuthConfigError(ValueError):
    """The auth configuration is wrong (raised at start-up, never per call)."""


class BadCredential(Exception):
    """A credential was presented and is not valid. ``reason`` is a short text
    in our own words (never the credential, never a decoder's message);
    ``error`` is the RFC 6750 error code for bearer challenges."""

    def __init__(self, reason: str, *, error: str = "invalid_token") -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


class Unauthenticated(A2AError):
    """UNAUTHENTICATED (gRPC 16, HTTP 401) with the challenges to send back:
    the servicer puts them in the ``www-authenticate`` trailer, the gateway in
    the ``WWW-Authenticate`` header of a 401 (spec §7.4, §13)."""

    def __init__(self, message: str, challenges: Sequence[str]) -> None:
        super().__init__(ErrorCode.UNAUTHENTICATED, message)
        self.trailing_metadata: tuple[tuple[str, str], ...] = (
            ((WWW_AUTHENTICATE, ", ".join(challenges)),) if challenges else ()
        )


class Authenticator(Protocol):
    """One security scheme, named ``name`` in the card's ``securitySchemes``."""

    name: str

    def security_scheme(self) -> pb.SecurityScheme:
        """How the Agent Card declares this scheme (spec §4.5)."""
        ...

    def challenge(self, bad: BadCredential | None = None) -> str:
        """The ``WWW-Authenticate`` challenge for a call that lacked (``bad``
        None) or failed this scheme's credential."""
        ...

    def presented(self, call: CallContext) -> bool:
        """True when ``call`` carries a credential of this scheme."""
        ...

    async def authenticate(self, call: CallContext) -> Principal:
        """The principal of the credential ``call`` carries (only called when
        :meth:`presented`). Raises BadCredential when it is not valid, and
        A2AError(UNAVAILABLE) when it cannot be checked now (keys unknown)."""
        ...

    async def start(self) -> None:
        """Prepares (e.g. fetches signing keys); called once by the server."""
        ...

    async def close(self) -> None:
        """Releases what :meth:`start` acquired."""
        ...

    def summary(self) -> str:
        """A few words for the start-up line (``apiKey: X-API-Key, 2 keys``)."""
        ...
