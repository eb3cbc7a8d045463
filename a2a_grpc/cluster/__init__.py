"""Replicas: execution leases, the cluster's event bus, crash recovery.

Two Features of the server (:mod:`a2a_grpc.core.features`), one of which a
server runs: :class:`a2a_grpc.cluster._leases.Cluster` in cluster mode
(``ServerConfig.cluster``: the leased executions and the cluster bus, the
event relay, heartbeat and reaper), else
:class:`a2a_grpc.cluster._recovery.Recovery` (``recover_lost_tasks``: tasks an
earlier process left active end FAILED on start).
"""
