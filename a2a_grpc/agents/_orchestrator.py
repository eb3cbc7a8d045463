"""The built-in ``orchestrator`` agent: delegates each task by skill.

``a2a-grpc serve --agent orchestrator --registry URL``. For each new task:

1. the planner decides the skill (:mod:`.orchestration.planner`: a data part
   ``{"skill": "..."}``, else rules — a diff goes to ``review-diff`` (the code-review agent), Python
   source to ``explain``; pluggable). No skill: INVALID_PARAMS, nothing
   stored;
2. the registry lists the healthy agents with that skill (ListAgents
   ``skill``, ``healthy_only``);
3. each candidate in turn: its live card is fetched and must still declare
   the skill; :meth:`A2AClient.connect` takes its interfaces in the card's
   order, falling back to the next one that can be reached; the task is
   relayed (:mod:`.orchestration.delegate`: progress, artifacts with the
   delegate in their metadata, INPUT_REQUIRED/AUTH_REQUIRED with the
   delegate's question);
4. a candidate that cannot be reached, no longer declares the skill, fails
   its task or does not finish within ``timeout`` seconds is followed by the
   next (unless its artifacts were copied already); when none is left the
   task FAILS naming each candidate's failure.

A follow-up to an interrupted task goes to the delegate's task (recorded in
the status message's ``metadata["delegate"]``, so it survives a restart).
Cancelling the task cancels the delegate's. The caller's credentials and
trace context are not forwarded; the orchestrator sends none of its own.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Sequence

from a2a_grpc.agents._orchestration.delegate import Delegate, DelegateFailed, relay, status_with
from a2a_grpc.agents._orchestration.planner import Plan, Planner, RulePlanner
from a2a_grpc.client import A2AClient
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.registry._types import rpb
from a2a_grpc.types import Event, is_interrupted, pb

__all__ = ["OrchestratorAgent"]


class OrchestratorAgent(AgentExecutor):
    """Delegates each task to a registered agent with the needed skill."""

    card = pb.AgentCard(
        name="Orchestrator",
        description=(
            "Finds an agent with the skill a task needs in the agent registry, checks its card, and delegates "
            "the task to it, relaying progress, artifacts and questions."
        ),
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "text/x-diff", "text/x-python", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            pb.AgentSkill(
                id="delegate",
                name="Delegate by skill",
                description=(
                    'Send a data part {"skill": "<skill id>"} with the work, or a diff (review-diff) or Python '
                    "source (explain); the task is done by a registered agent with that skill."
                ),
                tags=["orchestrator", "delegation", "registry"],
                examples=['{"skill": "review-diff"} plus a unified diff'],
            )
        ],
    )

    def __init__(
        self,
        registry_url: str = "",
        *,
        planner: Planner | None = None,
        timeout: float = 300.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self.registry_url = registry_url
        self.planner: Planner = planner or RulePlanner()
        self.timeout = timeout
        self.connect_timeout = connect_timeout

    def use_registry(self, url: str) -> None:
        """Sets the registry (``--registry``): grpc://HOST:PORT or http://."""
        self.registry_url = url

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        """Plans, delegates and relays (see the module docstring)."""
        previous = Delegate.from_task(ctx.task)
        if previous is not None and ctx.task is not None and is_interrupted(ctx.task.status.state):
            async for event in self._resume(ctx, previous):
                yield event
            return
        plan = await self._plan(ctx.message)
        candidates = await self._candidates(plan.skill)
        if not candidates:
            yield ctx.status(
                pb.TASK_STATE_FAILED, f"no healthy agent in the registry offers skill {plan.skill!r}"
            )
            return
        failures: list[str] = []
        for agent in candidates:
            try:
                async for event in self._delegate(ctx, agent, plan):
                    yield event
                return
            except DelegateFailed as exc:
                failures.append(exc.reason)
                if exc.relayed:
                    break
        yield ctx.status(pb.TASK_STATE_FAILED, f"skill {plan.skill!r}: " + "; ".join(failures))

    async def _plan(self, message: pb.Message) -> Plan:
        """The planner's plan; INVALID_PARAMS when it finds none."""
        plan = self.planner(message)
        if inspect.isawaitable(plan):
            plan = await plan
        if plan is None:
            raise A2AError.invalid_params(
                FieldViolation(
                    "message.parts",
                    'cannot tell which skill this needs: add a data part {"skill": "<skill id>"}',
                )
            )
        return plan

    async def _candidates(self, skill: str) -> Sequence[rpb.RegisteredAgent]:
        """The registry's healthy agents with ``skill`` (UNAVAILABLE when
        the registry cannot be asked)."""
        from a2a_grpc.registry._client import RegistryClient

        if not self.registry_url:
            raise A2AError(ErrorCode.UNAVAILABLE, "the orchestrator has no registry (--registry URL)")
        async with RegistryClient(self.registry_url, timeout=self.connect_timeout * 2) as registry:
            return await registry.list(skill=skill, healthy_only=True)

    async def _connect(self, delegate: Delegate) -> A2AClient:
        try:
            return await A2AClient.connect(
                delegate.base_url, timeout=self.timeout, connect_timeout=self.connect_timeout
            )
        except A2AError as exc:
            raise DelegateFailed(f"{delegate.name}: {exc.code.reason}: {exc.message}") from None

    async def _delegate(
        self, ctx: ExecutorContext, agent: rpb.RegisteredAgent, plan: Plan
    ) -> AsyncIterator[Event]:
        """One candidate: live card check, then the relayed exchange."""
        delegate = Delegate(agent.agent_id, agent.card.name, agent.base_url)
        client = await self._connect(delegate)
        async with client:
            skills = {s.id for s in client.card.skills} if client.card is not None else set()
            if plan.skill not in skills:
                raise DelegateFailed(f"{delegate.name}: its card no longer declares skill {plan.skill!r}")
            yield status_with(
                ctx,
                pb.TASK_STATE_WORKING,
                delegate,
                f"delegating skill {plan.skill!r} to {delegate.name} over {client.binding}",
            )
            async for event in relay(ctx, client, delegate, plan.message, timeout=self.timeout):
                yield event

    async def _resume(self, ctx: ExecutorContext, delegate: Delegate) -> AsyncIterator[Event]:
        """Forwards the caller's follow-up to the delegate's task."""
        try:
            client = await self._connect(delegate)
            async with client:
                yield status_with(
                    ctx, pb.TASK_STATE_WORKING, delegate, f"forwarding the reply to {delegate.name}"
                )
                async for event in relay(ctx, client, delegate, ctx.message, timeout=self.timeout):
                    yield event
        except DelegateFailed as exc:
            yield ctx.status(pb.TASK_STATE_FAILED, exc.reason)
