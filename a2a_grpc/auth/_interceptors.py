"""The two slots of the call chain that auth fills (see a2a_grpc.core._interceptors).

* :class:`Authentication` (the *authentication* slot, right after telemetry,
  before anything reads a store): every RPC on every binding, streaming ones
  included, must meet the policy; the principal goes on ``call.principal`` and
  becomes the task owner, ``call.user`` (spec §13.1: another caller's task then
  reads exactly like a missing one, because every store lookup is by owner).
* :class:`Authorization` (the *authorization* slot, before the operation): a
  principal bound to a tenant works in that tenant only (PERMISSION_DENIED for
  another; none named means its own), and the extended card it reads may be
  filtered to the skills it may use (spec §3.3.4, §13.3).
"""

from __future__ import annotations

from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.auth._policy import AuthPolicy
from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["Authentication", "Authorization"]


class Authentication(CallInterceptor):
    """Raises UNAUTHENTICATED (with ``www-authenticate``) or PERMISSION_DENIED
    per :meth:`AuthPolicy.authenticate`; sets ``call.principal`` and
    ``call.user`` (the principal's :attr:`~a2a_grpc.auth.Principal.owner`)."""

    def __init__(self, policy: AuthPolicy) -> None:
        self.policy = policy

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        principal = await self.policy.authenticate(call)
        call.principal = principal
        call.user = principal.owner


class Authorization(CallInterceptor):
    """Binds the tenant of the principal and filters the extended card."""

    def __init__(self, policy: AuthPolicy) -> None:
        self.policy = policy

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        principal = call.principal
        if principal is None or principal.tenant is None:
            return
        if call.tenant and call.tenant != principal.tenant:
            raise A2AError(
                ErrorCode.PERMISSION_DENIED,
                f"this credential works in tenant {principal.tenant!r} only",
                metadata={"tenant": call.tenant},
            )
        call.tenant = principal.tenant

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        principal = call.principal
        if (
            not self.policy.filter_extended_card
            or principal is None
            or call.rpc_name != "GetExtendedAgentCard"
            or not isinstance(outcome, pb.AgentCard)
        ):
            return
        keep = [s for s in outcome.skills if self.policy.allows_skill(principal, s)]
        del outcome.skills[:]
        outcome.skills.extend(keep)
