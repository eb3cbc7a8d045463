"""Built-in agents and the loader behind ``a2a-grpc serve --agent``.

``--agent`` takes a built-in name (``code-review``, the default, ``echo``, ``orchestrator`` or ``explain``)
or ``package.module:attribute``, where the attribute is an
:class:`~a2a_grpc.core._executor.AgentExecutor` instance, or a class or zero-argument
callable returning one. The executor must have a ``card`` attribute
(``pb.AgentCard`` without ``supported_interfaces``). Modules are imported
from the Python path, which includes the current directory (as for
``python -m``), so ``--agent examples.my_agent:WordCountAgent`` works from the
repository root.

:class:`DataView` is how ``a2a-grpc send`` and ``task get`` show an agent's
data parts: a view per media type (the built-in agents' findings and outlines;
another package adds its own to ``DataView.VIEWS``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from a2a_grpc.agents._views import DataView
from a2a_grpc.core._executor import AgentExecutor

__all__ = ["BUILTIN_AGENTS", "DataView", "EchoAgent", "load_agent"]

#: Built-in agent names and where they live.
BUILTIN_AGENTS = {
    "code-review": "a2a_grpc.agents._code_review:CodeReviewAgent",
    "echo": "a2a_grpc.agents._echo:EchoAgent",
    "orchestrator": "a2a_grpc.agents._orchestrator:OrchestratorAgent",
    "explain": "a2a_grpc.agents._explain:ExplainAgent",
}
#: The extra a built-in agent needs, and the modules that extra installs.
AGENT_EXTRAS = {
    "code-review": ("review", ("unidiff", "ruff")),
    "explain": ("explain", ("radon", "unidiff")),
}


def _check_extra(spec: str) -> None:
    """Raises ValueError naming the extra to install when a built-in agent's
    tools are missing (e.g. the code-review agent without unidiff or ruff)."""
    extra, modules = AGENT_EXTRAS.get(spec, ("", ()))
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ValueError(f"the {spec} agent needs {', '.join(missing)}: pip install 'a2a-grpc[{extra}]'")


def load_agent(spec: str) -> AgentExecutor:
    """The AgentExecutor named by ``spec`` (see the module docstring).

    Raises ValueError with a readable reason when it cannot be loaded,
    naming the extra to install when a built-in agent's tools are missing."""
    target = BUILTIN_AGENTS.get(spec, spec)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(
            f"unknown agent {spec!r}: use one of {', '.join(sorted(BUILTIN_AGENTS))} or package.module:attribute"
        )
    _check_extra(spec)
    if spec not in BUILTIN_AGENTS and "" not in sys.path and os.getcwd() not in sys.path:
        # Like `python -m` and uvicorn: modules of the current directory load.
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r} for agent {spec!r}: {exc}") from exc
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None
    agent = obj if isinstance(obj, AgentExecutor) else obj() if callable(obj) else obj
    if not isinstance(agent, AgentExecutor):
        raise ValueError(f"{target} is not an AgentExecutor (nor a class/factory returning one)")
    if not getattr(agent, "card", None) or not agent.card.name:
        raise ValueError(f"{target} has no card (a pb.AgentCard attribute named 'card')")
    return agent


def __getattr__(name: str) -> object:
    """``EchoAgent``, loaded on first use (the smallest complete agent, for examples)."""
    if name == "EchoAgent":
        from a2a_grpc.agents._echo import EchoAgent

        return EchoAgent
    raise AttributeError(f"module 'a2a_grpc.agents' has no attribute {name!r}")
