"""Authentication and authorization as call interceptors (issue 11).

:func:`load_policy` reads the TOML auth configuration (docs/auth.md) into an
:class:`AuthPolicy`: its authenticators (API keys, bearer JWTs) describe the
Agent Card's security schemes and enforce them in the chain's authentication
slot; the authorization slot binds tenants and filters the extended card.
Pass the policy as ``ServerConfig(auth=...)`` or ``a2a-grpc serve --auth FILE``.

PyJWT is needed only for ``type = "jwt"`` schemes (extra ``a2a-grpc[auth]``).
"""

from a2a_grpc.auth._apikeys import ApiKey, ApiKeyAuthenticator
from a2a_grpc.auth._base import AuthConfigError, Authenticator, BadCredential, Unauthenticated
from a2a_grpc.auth._bearer import JwksCache, JwtAuthenticator
from a2a_grpc.auth._interceptors import Authentication, Authorization
from a2a_grpc.auth._policy import SCHEME_TYPES, AuthPolicy, Requirement, load_policy

__all__ = [
    "SCHEME_TYPES",
    "ApiKey",
    "ApiKeyAuthenticator",
    "AuthConfigError",
    "AuthPolicy",
    "Authentication",
    "Authenticator",
    "Authorization",
    "BadCredential",
    "JwksCache",
    "JwtAuthenticator",
    "Requirement",
    "Unauthenticated",
    "load_policy",
]
