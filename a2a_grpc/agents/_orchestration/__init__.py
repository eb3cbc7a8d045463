"""The orchestrator agent's parts: the planner (:mod:`.planner`, which skill a
task needs) and the delegation (:mod:`.delegate`, one delegate's stream
relayed into the orchestrator's task). The agent is
:class:`a2a_grpc.agents._orchestrator.OrchestratorAgent`."""
