"""A2AServicer's RPC methods are written out in the source, one per RPC of
``lf.a2a.v1.A2AService`` (no more, no fewer), with the proto's streaming
shape."""

from __future__ import annotations

import inspect

from a2a_grpc.bindings._servicer import SERVICE, A2AServicer


def _rpc_methods() -> dict[str, object]:
    """The servicer's public methods named like RPCs (CamelCase), as defined
    in the class body itself."""
    return {
        name: value
        for name, value in vars(A2AServicer).items()
        if name[:1].isupper() and inspect.isfunction(value)
    }


def test_every_rpc_has_a_method_and_every_method_an_rpc() -> None:
    rpcs = {m.name for m in SERVICE.methods}
    methods = set(_rpc_methods())
    assert rpcs - methods == set(), "RPCs without a servicer method"
    assert methods - rpcs == set(), "servicer methods without an RPC"


def test_methods_have_the_rpcs_shape() -> None:
    methods = _rpc_methods()
    for rpc in SERVICE.methods:
        method = methods[rpc.name]
        assert not rpc.client_streaming
        if rpc.server_streaming:
            assert inspect.isasyncgenfunction(method), rpc.name
        else:
            assert inspect.iscoroutinefunction(method), rpc.name
        assert list(inspect.signature(method).parameters) == ["self", "request", "context"]
        assert method.__qualname__ == f"A2AServicer.{rpc.name}"  # type: ignore[attr-defined]
