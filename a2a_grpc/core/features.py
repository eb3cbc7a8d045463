"""The one seam of the server: :class:`Feature`.

Everything optional a server does — telemetry, authentication, push
delivery, cluster mode, the legacy dialects — is a Feature, and the
composition root (:mod:`a2a_grpc.server`) is the one place that reads them:
it builds the object graph from them, top to bottom, and nothing is wired
afterwards by reaching into a built object. Every member has a do-nothing
default (like :class:`~a2a_grpc.core.hooks.Observer`), so a feature
implements only what it needs. The root reads them in this order:

1. :attr:`~Feature.observer` — the root combines the features' observers
   into one and passes it into the constructors of the event bus, the task
   writer and the executions (and to the push dispatcher when it starts);
2. :meth:`~Feature.card_decorators` — pure ``card -> card`` functions
   applied, in feature order, to the agent's card and to the extended card;
3. :meth:`~Feature.wrap_store` — wraps the store the handler uses (metrics time it);
4. :meth:`~Feature.new_event_bus`, :meth:`~Feature.new_executions` —
   factories: the first feature that returns one provides it (cluster mode's
   bus and leased executions), else the core's are built;
   :attr:`~Feature.execution_time_limit` bounds every execution;
5. :meth:`~Feature.push_bodies`, then :meth:`~Feature.interceptors` — call
   interceptors by slot (:data:`SLOTS`);
6. :meth:`~Feature.grpc_services`, :meth:`~Feature.http_mounts` — what the
   feature adds to the two transports (typed loosely: the core imports no
   transport);
7. :meth:`~Feature.start` / :meth:`~Feature.stop` — run by the root in
   feature order, stopped in reverse (an ``AsyncExitStack``).

A feature that is not configured is not in the list: it costs nothing, on
the request path or elsewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_grpc.core._card import CardDecorator
    from a2a_grpc.core._drive import TaskWriter
    from a2a_grpc.core._events import EventBus
    from a2a_grpc.core._execution import Drive, Executions
    from a2a_grpc.core._executor import AgentExecutor
    from a2a_grpc.core._handler import RequestHandler
    from a2a_grpc.core._interceptors import CallInterceptor
    from a2a_grpc.core.hooks import Observer
    from a2a_grpc.types import pb

__all__ = ["SLOTS", "Feature", "GrpcService", "Kernel"]

#: The interceptor slots, in chain order. The built-in steps (version,
#: extensions, validation, capability gate) run between ``limits`` and
#: ``authorization``; the server's own (``ServerConfig.interceptors``) after
#: ``authorization``, just before the operation. ``audit`` sits ahead of
#: authentication so that its ``after`` sees every outcome, refused
#: authentications included (docs/interceptors.md).
SLOTS = ("telemetry", "audit", "authentication", "limits", "authorization")

#: One push body encoder: the ProtoJSON dict of a ``StreamResponse`` →
#: (Content-Type, body bytes) in the dialect a push config was registered in.
PushBody = Callable[[dict[str, Any]], tuple[str, bytes]]


@dataclass(frozen=True, slots=True)
class Kernel:
    """The object graph the root built, handed to the members that need it
    (:meth:`Feature.interceptors`, :meth:`Feature.start`). ``store`` is the
    store as given to the server (``handler.store`` is it through the
    features' wrappers); ``card`` the public card as served (its interfaces
    filled once the ports are bound); ``observer`` the features' observers
    as one; ``push_bodies`` every feature's push bodies, by dialect."""

    executor: AgentExecutor
    store: Any
    handler: RequestHandler
    bus: EventBus
    writer: TaskWriter
    executions: Executions
    observer: Observer
    card: Callable[[], pb.AgentCard]
    push_bodies: Mapping[str, PushBody]


@dataclass(frozen=True, slots=True)
class GrpcService:
    """A gRPC service a feature serves next to ``lf.a2a.v1.A2AService`` (the
    v0.3 ``a2a.v1.A2AService``): its ``servicer``, the generated
    ``add_<Service>Servicer_to_server`` function, its service descriptor, and
    ``refuse(context, err)`` — how a request that cannot be decoded is
    answered in the service's own error form. Its full name is announced by
    reflection and health."""

    servicer: Any
    add: Callable[[Any, Any], None]
    descriptor: Any
    refuse: Callable[[Any, Any], Awaitable[Any]]

    @property
    def name(self) -> str:
        """The service's full name (``a2a.v1.A2AService``)."""
        return str(self.descriptor.full_name)


class Feature:
    """One optional part of the server; every member does nothing here
    (see the module docstring for the order the root reads them in)."""

    #: Hooks the kernel calls (executions, task writes, the bus, push
    #: delivery); None: none.
    observer: Observer | None = None
    #: Seconds an execution may run before it is interrupted (its task ends
    #: FAILED); None: no limit from this feature (the smallest one applies).
    execution_time_limit: float | None = None

    def wrap_store(self, store: Any) -> Any:
        """The store the handler uses: ``store``, or a wrapper around it."""
        return store

    def new_event_bus(self, *, buffer: int, buffer_bytes: int, observer: Observer) -> EventBus | None:
        """The server's event bus (None: the core's ``EventBus``)."""
        return None

    def new_executions(
        self, drive: Drive, writer: TaskWriter, *, observer: Observer, time_limit: float | None
    ) -> Executions | None:
        """The server's executions, running ``drive`` and writing through
        ``writer`` (None: the core's ``Executions``)."""
        return None

    def card_decorators(self) -> Sequence[CardDecorator]:
        """Pure ``card -> card`` functions for the public and the extended
        card (each returns a new card; none changes its argument)."""
        return ()

    def interceptors(self, kernel: Kernel) -> Mapping[str, Sequence[CallInterceptor]]:
        """Call interceptors by slot name (:data:`SLOTS`)."""
        return {}

    def push_bodies(self) -> Mapping[str, PushBody]:
        """Push bodies by dialect (the dialect a push config was registered
        in); a dialect without one gets the v1.0 body."""
        return {}

    def http_mounts(self) -> Sequence[Callable[[Any], None]]:
        """Callables given the HTTP gateway being built
        (:class:`a2a_grpc.bindings._http.app.Gateway`) to add routes to it."""
        return ()

    def grpc_services(self, servicer: Any, card: Callable[[], pb.AgentCard]) -> Sequence[GrpcService]:
        """gRPC services in front of ``servicer`` (the v1.0 A2AServicer);
        ``card`` is the public card as served."""
        return ()

    async def start(self, kernel: Kernel) -> None:
        """Starts what the feature runs (before the ports are bound)."""

    async def stop(self) -> None:
        """Stops it (after the ports are closed and the executions ended)."""
