"""Option groups: several command-line options that reach a command as one value.

``a2a-grpc serve`` has ~50 options; related ones (the cluster settings, the
connection limits, the push delivery settings) are gathered into one
argument of the command, so its signature stays readable and each group's
parsing lives beside its options.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["option_group"]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def option_group(
    names: Sequence[str],
    gather: Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any]],
    options: Sequence[Decorator] = (),
) -> Decorator:
    """A decorator that adds ``options`` (click option decorators, in
    display order) to a command and replaces the values of the parameters
    ``names`` by what ``gather(values, other_arguments)`` returns (the
    arguments the command takes instead; ``other_arguments`` are read only)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names}
            return fn(*args, **kwargs, **gather(values, kwargs))

        decorated: Callable[..., Any] = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate
