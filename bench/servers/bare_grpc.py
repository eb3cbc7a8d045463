"""Ceiling: a bare ``grpc.aio`` A2AService that answers without any framework.

SendMessage and SendStreamingMessage build the COMPLETED echo task (artifact = the
message text) straight from the request; GetTask returns a COMPLETED task with the
asked id. No store, no validation, no lifecycle: what is left is the gRPC transport and
the protobuf codec, the upper bound for any A2A server on grpc.aio. Prints
``READY grpc=<port>``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

import grpc

from a2a_grpc.types import new_id, pb, pb_grpc

_COMPLETED = pb.TASK_STATE_COMPLETED


def _echo_task(msg: pb.Message) -> pb.Task:
    text = msg.parts[0].text if msg.parts else ""
    return pb.Task(
        id=new_id(),
        context_id=msg.context_id or new_id(),
        status=pb.TaskStatus(state=_COMPLETED),
        artifacts=[pb.Artifact(artifact_id=new_id(), name="echo", parts=[pb.Part(text=text)])],
        history=[msg],
    )


class BareServicer(pb_grpc.A2AServiceServicer):
    """Answers the three benchmarked RPCs with freshly built protos."""

    async def SendMessage(
        self, request: pb.SendMessageRequest, context: grpc.aio.ServicerContext
    ) -> pb.SendMessageResponse:
        return pb.SendMessageResponse(task=_echo_task(request.message))

    async def SendStreamingMessage(
        self, request: pb.SendMessageRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.StreamResponse]:
        task = _echo_task(request.message)
        artifact = task.artifacts[0]
        del task.artifacts[:]
        task.status.state = pb.TASK_STATE_SUBMITTED
        yield pb.StreamResponse(task=task)
        yield pb.StreamResponse(
            artifact_update=pb.TaskArtifactUpdateEvent(
                task_id=task.id, context_id=task.context_id, artifact=artifact
            )
        )
        yield pb.StreamResponse(
            status_update=pb.TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=pb.TaskStatus(state=_COMPLETED)
            )
        )

    async def GetTask(self, request: pb.GetTaskRequest, context: grpc.aio.ServicerContext) -> pb.Task:
        return pb.Task(
            id=request.id,
            context_id="ctx",
            status=pb.TaskStatus(state=_COMPLETED),
            artifacts=[pb.Artifact(artifact_id="a", name="echo", parts=[pb.Part(text="x" * 100)])],
        )


async def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--grpc-port", type=int, default=0)
    args = ap.parse_args(argv)
    server = grpc.aio.server()
    pb_grpc.add_A2AServiceServicer_to_server(BareServicer(), server)
    port = server.add_insecure_port(f"{args.host}:{args.grpc_port}")
    await server.start()
    print(f"READY grpc={port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(sys.argv[1:]))
