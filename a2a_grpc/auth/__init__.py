"""Authentication and authorization as call interceptors (issue 11).

:func:`load_policy` reads the TOML auth configuration (docs/auth.md) into an
:class:`AuthPolicy`: its authenticators (API keys, bearer JWTs) describe the
Agent Card's security schemes and enforce them in the chain's authentication
slot; the authorization slot binds tenants and filters the extended card.
Pass the policy as ``ServerConfig(auth=...)`` or ``a2a-grpc serve --auth FILE``.

PyJWT is needed only for ``type = "jwt"`` schemes (extra ``a2a-grpc[auth]``).
"""

from a2a_grpc.auth.apikeys import ApiKey, ApiKeyAuthenticator
from a2a_grpc.auth.base import AuthConfigError, Authenticator, BadCredential, Unauthenticated
from a2a_grpc.auth.bearer import JwksCache, JwtAuthenticator
from a2a_grpc.auth.interceptors import Authentication, Authorization
from a2a_grpc.auth.policy import SCHEME_TYPES, AuthPolicy, Requirement, load_policy
from a2a_grpc.auth.principal import API_KEY_ISSUER, Principal

__all__ = [
    "API_KEY_ISSUER",
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
    "Principal",
    "Requirement",
    "Unauthenticated",
    "load_policy",
]
