"""Sends a diff to an A2A agent over gRPC (SendMessage) and prints the findings
of the task's artifact, one per line::

    app/users.py:18 S608 [high] Possible SQL injection vector ...

usage: python review.py HOST:PORT FILE.diff

``lf.a2a.v1`` is generated from proto/ by grpcio-tools (``python -m
grpc_tools.protoc``) next to this file or elsewhere on the import path; see
the README, "Generate a client in your language".
"""

import sys
import uuid
from pathlib import Path

import grpc
from google.protobuf import json_format
from lf.a2a.v1 import a2a_pb2, a2a_pb2_grpc


def main(address: str, file: str) -> None:
    diff = Path(file)
    request = a2a_pb2.SendMessageRequest(
        message=a2a_pb2.Message(
            message_id=str(uuid.uuid4()),
            role=a2a_pb2.ROLE_USER,
            parts=[a2a_pb2.Part(raw=diff.read_bytes(), filename=diff.name, media_type="text/x-diff")],
        )
    )
    with grpc.insecure_channel(address) as channel:
        response = a2a_pb2_grpc.A2AServiceStub(channel).SendMessage(
            request, metadata=[("a2a-version", "1.0")], timeout=60
        )
    task = response.task
    print(a2a_pb2.TaskState.Name(task.status.state))
    for artifact in task.artifacts:
        for part in artifact.parts:
            if part.WhichOneof("content") != "data":
                continue
            for f in json_format.MessageToDict(part.data).get("findings", []):
                print(f"{f['file']}:{int(f['line'])} {f['rule']} [{f['severity']}] {f['issue']}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python review.py HOST:PORT FILE.diff")
    main(*sys.argv[1:])
