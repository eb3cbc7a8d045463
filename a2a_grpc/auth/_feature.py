"""Authentication, authorization, limits and the audit log as a Feature of
the server (:class:`Auth`).

Built by the composition root from ``ServerConfig.auth`` (an
:class:`~a2a_grpc.auth._policy.AuthPolicy`) and ``ServerConfig.audit`` (an
:class:`~a2a_grpc.auth._audit.AuditLog`); what it adds:

* the chain's slots: *audit* (ahead of authentication, so that it records
  the calls that fail it), *authentication* (with
  :class:`~a2a_grpc.auth._limits.AuthFailureLimits` ahead of it), *limits*
  and *authorization* (tenant binding, the extended card filtered, skill
  scopes); docs/interceptors.md;
* the audit log's observer hooks (every task write);
* the card decorator declaring the policy's security schemes
  (:meth:`~a2a_grpc.auth._policy.AuthPolicy.with_schemes`), for the public
  and the extended card;
* the execution time limit of ``[limits]``;
* start: the authenticators start (signing keys fetched); stop: they close,
  and the audit log's file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from a2a_grpc.auth._audit import AuditLog
from a2a_grpc.auth._policy import AuthPolicy
from a2a_grpc.core._card import CardDecorator
from a2a_grpc.core._interceptors import CallInterceptor
from a2a_grpc.core.features import Feature, Kernel

__all__ = ["Auth"]


class Auth(Feature):
    """``policy`` (None: every caller is anonymous) and ``audit`` (None: no
    audit log) as one feature; see the module docstring."""

    def __init__(self, policy: AuthPolicy | None = None, audit: AuditLog | None = None) -> None:
        self.policy = policy
        self.audit = audit
        self.observer = audit
        limits = policy.limits if policy is not None else None
        self.execution_time_limit = limits.execution_timeout if limits is not None else None

    def card_decorators(self) -> Sequence[CardDecorator]:
        return (self.policy.with_schemes,) if self.policy is not None else ()

    def interceptors(self, kernel: Kernel) -> Mapping[str, Sequence[CallInterceptor]]:
        slots: dict[str, Sequence[CallInterceptor]] = {}
        if self.audit is not None:
            slots["audit"] = [self.audit]
        policy = self.policy
        if policy is None:
            return slots
        from a2a_grpc.auth._interceptors import Authentication, Authorization
        from a2a_grpc.auth._scopes import skill_interceptor

        handler = kernel.handler
        skills = [s.id for c in (handler.card, handler.extended_card) if c is not None for s in c.skills]
        authentication: list[CallInterceptor] = [Authentication(policy)]
        slots["authorization"] = [Authorization(policy), *skill_interceptor(policy, kernel.executor, skills)]
        if policy.limits is not None:
            from a2a_grpc.auth._limits import limit_interceptors

            authentication, slots["limits"] = limit_interceptors(
                policy.limits, authentication, kernel.executions.running_for
            )
        slots["authentication"] = authentication
        return slots

    async def start(self, kernel: Kernel) -> None:
        if self.policy is not None:
            await self.policy.start()

    async def stop(self) -> None:
        if self.policy is not None:
            await self.policy.close()
        if self.audit is not None:
            self.audit.close()
