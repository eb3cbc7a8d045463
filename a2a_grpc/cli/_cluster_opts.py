"""``a2a-grpc serve``'s cluster options (issue: several replicas on one store).

:func:`cluster_options` adds ``--cluster``, ``--replica-id``, ``--lease-ttl``,
``--event-retention`` and ``--bus`` to a command and hands it one
``cluster_config`` (:class:`~a2a_grpc.cluster._leases.ClusterConfig`, or None
without ``--cluster``) instead; it reads the command's ``store_url``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from a2a_grpc.cli._optgroup import option_group

if TYPE_CHECKING:
    from a2a_grpc.cluster._leases import ClusterConfig

__all__ = ["cluster_options"]


_OPTIONS = [
    click.option(
        "--cluster/--no-cluster",
        default=False,
        envvar="A2A_GRPC_CLUSTER",
        show_envvar=True,
        help="Cluster mode: several replicas share one PostgreSQL store (execution leases, crash takeover).",
    ),
    click.option(
        "--replica-id",
        default=None,
        envvar="A2A_GRPC_REPLICA_ID",
        show_envvar=True,
        help="This replica's name in leases and status messages (default HOST-PID-XXXX).",
    ),
    click.option(
        "--lease-ttl",
        type=click.FloatRange(0.3),
        default=10.0,
        show_default=True,
        envvar="A2A_GRPC_LEASE_TTL",
        show_envvar=True,
        help="Seconds an execution lease lives without a heartbeat (sent every third of it); "
        "a killed replica's tasks are taken over after it.",
    ),
    click.option(
        "--event-retention",
        type=click.FloatRange(0.0),
        default=3600.0,
        show_default=True,
        envvar="A2A_GRPC_EVENT_RETENTION",
        show_envvar=True,
        help="Cluster mode: seconds the task-event log keeps the events of a terminal task.",
    ),
    click.option(
        "--bus",
        default="postgresql",
        show_default=True,
        envvar="A2A_GRPC_BUS",
        show_envvar=True,
        help="Cluster mode: what wakes the other replicas on each committed event: postgresql "
        "(LISTEN/NOTIFY on the store) or redis://HOST:PORT (Redis Streams; needs the redis package).",
    ),
]


def _gather(values: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    times = (values["lease_ttl"], values["event_retention"])
    config = _cluster_config(
        values["cluster"], other.get("store_url"), values["replica_id"], times, values["bus"]
    )
    return {"cluster_config": config}


#: Adds the cluster options; the command receives ``cluster_config``.
cluster_options = option_group(
    ("cluster", "replica_id", "lease_ttl", "event_retention", "bus"), _gather, _OPTIONS
)


def _cluster_config(
    cluster: bool, store_url: str | None, replica_id: str | None, times: tuple[float, float], bus: str
) -> ClusterConfig | None:
    """The cluster settings ``--cluster`` asks for (None without it); ``times``
    is (lease TTL, event retention). A store other than PostgreSQL, or a bad
    ``--bus``, is a one-line ClickException."""
    if not cluster:
        return None
    scheme = (store_url or "").split(":", 1)[0].split("+", 1)[0].lower()
    if scheme not in ("postgresql", "postgres"):
        what = "SQLite serves one process only" if scheme in ("", "sqlite") else f"--store {store_url}"
        raise click.ClickException(
            f"--cluster needs --store postgresql://USER@HOST[:PORT]/DB shared by the replicas ({what})"
        )
    from a2a_grpc.cluster._leases import ClusterConfig

    try:
        return ClusterConfig(
            replica_id=replica_id or "", lease_ttl=times[0], event_retention=times[1], bus=bus
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
