"""A tiny A2A agent: counts the words of each message (the README's "write your own agent").

Serve it from the repository root (``--agent`` finds modules of the current directory)::

    a2a-grpc serve --agent examples.my_agent:WordCountAgent --store memory
"""

from collections.abc import AsyncIterator

from a2a_grpc import AgentExecutor, ExecutorContext, data_part
from a2a_grpc.types import Event, pb


class WordCountAgent(AgentExecutor):
    card = pb.AgentCard(  # what /.well-known/agent-card.json shows; the server adds the interfaces
        name="Word Count Agent",
        description="Counts the words and lines of every message.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["application/json"],
        skills=[
            pb.AgentSkill(
                id="count", name="Count words", description="Counts words and lines.", tags=["text"]
            )
        ],
    )

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        text = ctx.text()  # the message's text parts, joined
        yield ctx.status(pb.TASK_STATE_WORKING, f"Counting {len(text)} characters")
        counts = {"words": len(text.split()), "lines": len(text.splitlines())}
        yield ctx.artifact([data_part(counts)], name="word-count")
        yield ctx.status(pb.TASK_STATE_COMPLETED, f"{counts['words']} words")
