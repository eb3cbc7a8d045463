"""``a2a-grpc console``: a web console for an A2A agent — its card, conversations, tasks, operations.

:func:`console_app` builds the aiohttp application: the page (built from
``console/`` into ``a2a_grpc/console/static``) and a same-origin JSON API
that the page calls and that forwards to the agent with the console's own
credentials, so the browser holds no secret and needs no CORS. It is an
application on the library's public surface (:class:`~a2a_grpc.client.A2AClient`,
:mod:`a2a_grpc.protocol.protojson`, the store's dead-letter methods,
:class:`~a2a_grpc.registry.RegistryClient`). docs/console.md describes it.
"""

from a2a_grpc.console._app import console_app

__all__ = ["console_app"]
