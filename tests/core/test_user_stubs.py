"""Stubs a team generates from our ``proto/`` live in the same process as
a2a_grpc and talk to its server (issue 14, item 2).

Both register the schema under its canonical file name
``lf/a2a/v1/a2a.proto``: the default descriptor pool keeps one entry for an
identical file instead of refusing the second with ``duplicate symbol``. The
user's stubs are compiled here, into a temporary top-level package, exactly
as a user would: ``protoc -I proto --python_out … --grpc_python_out …``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from google.api import annotations_pb2
from grpc_tools import protoc

from a2a_grpc.types import pb
from tests.core.helpers import VERSION_MD

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def user_stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, ModuleType]]:
    out = tmp_path_factory.mktemp("userstubs")
    googleapis = Path(annotations_pb2.__file__).parents[2]
    grpc_include = Path(protoc.__file__).parent / "_proto"
    rc = protoc.main(
        [
            "protoc",
            f"-I{REPO / 'proto'}",
            f"-I{googleapis}",
            f"-I{grpc_include}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            "lf/a2a/v1/a2a.proto",
        ]
    )
    assert rc == 0
    for d in ("lf", "lf/a2a", "lf/a2a/v1"):
        (out / d / "__init__.py").touch()
    sys.path.insert(0, str(out))
    try:
        yield (
            importlib.import_module("lf.a2a.v1.a2a_pb2"),
            importlib.import_module("lf.a2a.v1.a2a_pb2_grpc"),
        )
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == "lf" or m.startswith("lf.")]:
            del sys.modules[name]


def test_same_descriptor_name(user_stubs: tuple[ModuleType, ModuleType]) -> None:
    user_pb, _ = user_stubs
    assert pb.DESCRIPTOR.name == "lf/a2a/v1/a2a.proto"
    assert user_pb.DESCRIPTOR.name == pb.DESCRIPTOR.name
    # Messages cross between the two module trees through the wire format.
    theirs = user_pb.Message(message_id="m1", role=user_pb.ROLE_USER, parts=[user_pb.Part(text="hi")])
    ours = pb.Message.FromString(theirs.SerializeToString())
    assert ours.parts[0].text == "hi" and ours.role == pb.ROLE_USER


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_user_stub_calls_our_server(server, user_stubs: tuple[ModuleType, ModuleType]) -> None:
    user_pb, user_grpc = user_stubs
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = user_grpc.A2AServiceStub(channel)
        request = user_pb.SendMessageRequest(
            message=user_pb.Message(
                message_id="m1", role=user_pb.ROLE_USER, parts=[user_pb.Part(text="echo hi")]
            )
        )
        response = await stub.SendMessage(request, metadata=VERSION_MD)
    assert isinstance(response, user_pb.SendMessageResponse)
    assert response.task.status.state == user_pb.TASK_STATE_COMPLETED
    assert response.task.artifacts[0].parts[0].text == "hi"
