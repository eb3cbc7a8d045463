"""The built-in ``echo`` agent: completes each message with its text echoed
back as an artifact. Useful for trying the server and for benchmarks."""

from __future__ import annotations

from collections.abc import AsyncIterator

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import Event, pb

__all__ = ["EchoAgent"]


class EchoAgent(AgentExecutor):
    """Echoes the text parts of each message (non-text parts are echoed
    as they came) in an artifact named ``echo``, then completes the task.
    Every part is echoed whatever its media type: the card's input modes are
    not enforced (``check_input_modes = False``)."""

    check_input_modes = False

    card = pb.AgentCard(
        name="Echo Agent",
        description="Echoes every message back as an artifact and completes the task.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            pb.AgentSkill(
                id="echo",
                name="Echo",
                description="Returns the message's content unchanged.",
                tags=["echo", "test"],
                examples=["hello"],
            )
        ],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        yield ctx.artifact(list(ctx.message.parts), name="echo")
        yield ctx.status(pb.TASK_STATE_COMPLETED)
