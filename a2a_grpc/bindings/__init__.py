"""L4: the bindings — the gRPC servicer and the HTTP gateway (JSON-RPC, HTTP+JSON)."""

__all__: list[str] = []
