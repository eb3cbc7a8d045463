"""The auth configuration: which schemes exist and which of them a call needs.

An :class:`AuthPolicy` holds the authenticators (one per security scheme) and
the security requirements (alternatives; within one, every scheme must pass
and grant its scopes — OpenAPI semantics, spec §4.5). The Agent Card's
``securitySchemes`` and ``securityRequirements`` are written from these very
objects (:meth:`AuthPolicy.with_schemes`), and the interceptors of
:mod:`a2a_grpc.auth._interceptors` enforce them, so the card cannot promise one
thing while the server checks another. A requirement naming a scheme no
authenticator serves is refused when the policy is built (start-up fails).

The TOML file format is documented in docs/auth.md; :func:`load_policy` reads it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a2a_grpc.auth._apikeys import ApiKeyAuthenticator
from a2a_grpc.auth._base import AuthConfigError, Authenticator, BadCredential, Unauthenticated
from a2a_grpc.auth._bearer import JwtAuthenticator
from a2a_grpc.auth._limits import Limits, limits_from_mapping
from a2a_grpc.auth._mtls import MtlsAuthenticator
from a2a_grpc.auth._scopes import SelectSkill, describe_skills, skill_scopes_from_mapping
from a2a_grpc.context import CallContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.principal import Principal
from a2a_grpc.types import pb

__all__ = ["SCHEME_TYPES", "AuthPolicy", "Requirement", "load_policy"]

#: ``type`` of a ``[schemes.NAME]`` table → the authenticator built from it.
SCHEME_TYPES: dict[str, Callable[[str, Mapping[str, Any]], Authenticator]] = {
    "apiKey": ApiKeyAuthenticator.from_config,
    "jwt": JwtAuthenticator.from_config,
    "mtls": MtlsAuthenticator.from_config,
}


@dataclass(frozen=True, slots=True)
class Requirement:
    """One alternative of the card's ``securityRequirements``: scheme name →
    the scopes it must grant (all schemes of one requirement are needed)."""

    schemes: Mapping[str, frozenset[str]]

    def to_proto(self) -> pb.SecurityRequirement:
        req = pb.SecurityRequirement()
        for name, scopes in self.schemes.items():
            req.schemes[name].list.extend(sorted(scopes))
        return req


_Result = Principal | BadCredential | None


class AuthPolicy:
    """The authenticators and requirements every call is checked against.

    ``requirements`` default to each scheme alone, without scopes.
    ``filter_extended_card``: GetExtendedAgentCard leaves out the skills whose
    own ``securityRequirements`` the caller does not meet. Raises
    AuthConfigError for a requirement naming an unknown scheme, an empty
    requirement, or two schemes with one name."""

    def __init__(
        self,
        authenticators: Sequence[Authenticator],
        requirements: Sequence[Requirement] = (),
        *,
        filter_extended_card: bool = False,
        source: str = "",
        limits: Limits | None = None,
        skill_scopes: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.authenticators = {a.name: a for a in authenticators}
        if len(self.authenticators) != len(authenticators):
            raise AuthConfigError("two security schemes share a name")
        if not authenticators:
            raise AuthConfigError("the auth configuration declares no scheme")
        self.requirements = tuple(requirements) or tuple(
            Requirement({name: frozenset()}) for name in self.authenticators
        )
        for i, req in enumerate(self.requirements):
            if not req.schemes:
                raise AuthConfigError(f"requirements[{i}] is empty: it would let anonymous callers in")
            missing = [n for n in req.schemes if n not in self.authenticators]
            if missing:
                raise AuthConfigError(
                    f"requirements[{i}] names {', '.join(missing)}, which no authenticator serves "
                    f"(schemes: {', '.join(self.authenticators)})"
                )
        self.filter_extended_card = filter_extended_card
        self.source = source
        #: Rate, concurrency and execution-time limits (a2a_grpc.auth._limits); None: none.
        self.limits = limits
        #: Skill id → the scopes its callers need (a2a_grpc.auth._scopes).
        self.skill_scopes = dict(skill_scopes or {})
        #: Names the skill of a message (overrides the agent's ``select_skill``).
        self.select_skill: SelectSkill | None = None

    # ------------------------------------------------------------------ card
    def with_schemes(self, card: pb.AgentCard) -> pb.AgentCard:
        """A copy of ``card`` declaring this policy: its ``securitySchemes``,
        its ``securityRequirements`` and each scoped skill's requirements (a
        card decorator: ``card`` itself is not changed)."""
        out = pb.AgentCard()
        out.CopyFrom(card)
        out.security_schemes.clear()
        for name, authenticator in self.authenticators.items():
            out.security_schemes[name].CopyFrom(authenticator.security_scheme())
        del out.security_requirements[:]
        out.security_requirements.extend(r.to_proto() for r in self.requirements)
        describe_skills(out, self.skill_scopes, list(self.authenticators))
        return out

    # ----------------------------------------------------------------- calls
    async def authenticate(self, call: CallContext) -> Principal:
        """The principal of the first requirement ``call`` meets. Raises
        :class:`Unauthenticated` (no or bad credentials; challenges of the
        schemes) or PERMISSION_DENIED (authenticated, scopes missing;
        ``missingScopes`` in the ErrorInfo metadata)."""
        results: dict[str, _Result] = {}
        short: set[str] = set()
        for req in self.requirements:
            principal = await self._meets(req, call, results, short)
            if principal is not None:
                return principal
        bad = {n: r for n, r in results.items() if isinstance(r, BadCredential)}
        if bad:
            name, first = next(iter(bad.items()))
            raise Unauthenticated(
                f"{first.reason} ({name})", [self.authenticators[n].challenge(b) for n, b in bad.items()]
            )
        if short:
            raise A2AError(
                ErrorCode.PERMISSION_DENIED,
                "the credential lacks the scope(s) " + ", ".join(sorted(short)),
                metadata={"missingScopes": ",".join(sorted(short))},
            )
        raise Unauthenticated(
            "authentication required (schemes: " + ", ".join(self.authenticators) + ")",
            [a.challenge() for a in self.authenticators.values()],
        )

    async def _meets(
        self, req: Requirement, call: CallContext, results: dict[str, _Result], short: set[str]
    ) -> Principal | None:
        first: Principal | None = None
        for name, scopes in req.schemes.items():
            if name not in results:
                results[name] = await self._result(name, call)
            result = results[name]
            if not isinstance(result, Principal):
                return None
            if not result.has_scopes(scopes):
                short.update(scopes - result.scopes)
                return None
            first = first or result
        return first

    async def _result(self, name: str, call: CallContext) -> _Result:
        authenticator = self.authenticators[name]
        if not authenticator.presented(call):
            return None
        try:
            return await authenticator.authenticate(call)
        except BadCredential as bad:
            return bad

    def allows_skill(self, principal: Principal, skill: pb.AgentSkill) -> bool:
        """True when ``skill`` has no ``securityRequirements`` or one of them
        names only the principal's scheme and scopes it was granted."""
        if not skill.security_requirements:
            return True
        return any(
            set(req.schemes) == {principal.scheme}
            and principal.has_scopes(frozenset(req.schemes[principal.scheme].list))
            for req in skill.security_requirements
        )

    # ------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        """Starts every authenticator (fetches signing keys)."""
        for authenticator in self.authenticators.values():
            await authenticator.start()

    async def close(self) -> None:
        for authenticator in self.authenticators.values():
            await authenticator.close()

    def summary(self) -> str:
        """The start-up line: the schemes and the requirements."""
        schemes = "; ".join(a.summary() for a in self.authenticators.values())
        alternatives = " or ".join(
            " + ".join(f"{n}[{' '.join(sorted(s))}]" if s else n for n, s in r.schemes.items())
            for r in self.requirements
        )
        limits = f"; {self.limits.summary()}" if self.limits is not None else ""
        return f"authentication required ({alternatives}): {schemes}{limits}"


def _requirements(raw: Any) -> list[Requirement]:
    if not isinstance(raw, list):
        raise AuthConfigError("requirements must be an array of tables ([[requirements]])")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise AuthConfigError(f"requirements[{i}] must be a table of scheme = [scopes]")
        schemes: dict[str, frozenset[str]] = {}
        for name, scopes in entry.items():
            if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                raise AuthConfigError(f"requirements[{i}].{name} must be a list of scopes")
            schemes[name] = frozenset(scopes)
        out.append(Requirement(schemes))
    return out


def policy_from_mapping(data: Mapping[str, Any], *, source: str = "") -> AuthPolicy:
    """An :class:`AuthPolicy` from the parsed TOML document (docs/auth.md).
    Raises AuthConfigError naming the offending setting."""
    unknown = set(data) - {"schemes", "requirements", "extended_card", "limits", "skills"}
    if unknown:
        raise AuthConfigError(f"unknown top-level setting(s) {', '.join(sorted(unknown))}")
    schemes = data.get("schemes")
    if not isinstance(schemes, dict) or not schemes:
        raise AuthConfigError("declare at least one scheme: [schemes.NAME] with type = ...")
    authenticators: list[Authenticator] = []
    for name, table in schemes.items():
        kind = table.get("type") if isinstance(table, dict) else None
        build = SCHEME_TYPES.get(kind) if isinstance(kind, str) else None
        if build is None:
            raise AuthConfigError(
                f"schemes.{name}.type must be one of {', '.join(SCHEME_TYPES)} (got {kind!r})"
            )
        authenticators.append(build(name, table))
    extended = data.get("extended_card", {})
    if not isinstance(extended, dict) or set(extended) - {"filter_skills"}:
        raise AuthConfigError("extended_card takes only filter_skills = true|false")
    return AuthPolicy(
        authenticators,
        _requirements(data.get("requirements", [])),
        filter_extended_card=bool(extended.get("filter_skills", False)),
        source=source,
        limits=limits_from_mapping(data["limits"]) if "limits" in data else None,
        skill_scopes=skill_scopes_from_mapping(data.get("skills", {})),
    )


def load_policy(path: str | Path) -> AuthPolicy:
    """Reads the TOML auth configuration at ``path``. Raises AuthConfigError
    (bad TOML included) or OSError (unreadable)."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise AuthConfigError(f"{p}: not valid TOML: {exc}") from None
    try:
        return policy_from_mapping(data, source=str(p))
    except AuthConfigError as exc:
        raise AuthConfigError(f"{p}: {exc}") from None
