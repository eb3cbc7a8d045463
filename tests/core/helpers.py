"""Shared helpers for the core gRPC tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from a2a_grpc.errors import DOMAIN, A2AError, ErrorCode, FieldViolation
from a2a_grpc.server import A2AServer
from a2a_grpc.types import pb, pb_grpc

VERSION_MD = (("a2a-version", "1.0"),)


def msg(
    text: str,
    *,
    task_id: str = "",
    context_id: str = "",
    message_id: str = "",
    references: Sequence[str] = (),
    **config: object,
) -> pb.SendMessageRequest:
    """A SendMessageRequest with one text part; ``config`` fills
    SendMessageConfiguration (return_immediately, history_length, ...)."""
    req = pb.SendMessageRequest(
        message=pb.Message(
            message_id=message_id or "m-" + text.replace(" ", "-")[:20],
            role=pb.ROLE_USER,
            parts=[pb.Part(text=text)],
            task_id=task_id,
            context_id=context_id,
            reference_task_ids=list(references),
        )
    )
    if config:
        req.configuration.CopyFrom(pb.SendMessageConfiguration(**config))  # type: ignore[arg-type]
    return req


def error_of(exc: grpc.aio.AioRpcError) -> A2AError:
    """The A2AError carried by a failed call's rich status; asserts the
    ErrorInfo domain and that the status code matches the table."""
    status = rpc_status.from_call(exc)
    assert status is not None, f"no rich status on {exc.code()}: {exc.details()}"
    err = A2AError.from_status(status)
    assert exc.code() == err.code.grpc_code, (exc.code(), err.code)
    assert status.code == exc.code().value[0]
    return err


@dataclass
class Raised:
    """What ``raises`` captured."""

    code: grpc.StatusCode | None = None
    error: A2AError | None = None
    details: str = ""
    violations: dict[str, str] = field(default_factory=dict)


@contextlib.contextmanager
def raises(expected: ErrorCode) -> Iterator[Raised]:
    """Asserts the block fails with ``expected``: the table's gRPC code and
    an ErrorInfo{reason, domain a2a-protocol.org} in the status details."""
    out = Raised()
    try:
        yield out
    except grpc.aio.AioRpcError as exc:
        out.code = exc.code()
        out.details = exc.details() or ""
        err = error_of(exc)
        out.error = err
        out.violations = {v.field: v.description for v in err.field_violations}
        assert err.code is expected, f"expected {expected.name}, got {err.code.name}: {out.details}"
        assert exc.code() == expected.grpc_code
        status = rpc_status.from_call(exc)
        assert status is not None
        infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
        assert len(infos) == 1
        info = error_details_pb2.ErrorInfo()
        infos[0].Unpack(info)
        assert info.domain == DOMAIN and info.reason == expected.reason
        assert "Traceback" not in out.details
    else:
        raise AssertionError(f"expected {expected.name}, the call succeeded")


@contextlib.asynccontextmanager
async def connect(server: A2AServer) -> AsyncIterator[pb_grpc.A2AServiceStub]:
    """A stub on a new channel to ``server``."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.A2AServiceStub(channel)


async def read_all(call: grpc.aio.UnaryStreamCall) -> list[pb.StreamResponse]:  # type: ignore[type-arg]
    """Every (remaining) event of a server stream until it ends; uses
    ``read()`` so it may follow earlier ``read()`` calls."""
    out = []
    while (ev := await call.read()) is not grpc.aio.EOF:
        out.append(ev)
    return out


def state_of(event: pb.StreamResponse) -> int | None:
    """The task state an event reports, if any."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.status.state
    if kind == "status_update":
        return event.status_update.status.state
    return None


async def total(stub: pb_grpc.A2AServiceStub) -> int:
    """ListTasks totalSize for the default caller."""
    return (await stub.ListTasks(pb.ListTasksRequest(), metadata=VERSION_MD)).total_size


class RecordingPush:
    """A tiny PushSink: refuses webhooks whose URL contains "blocked" and
    counts wake-ups."""

    def __init__(self) -> None:
        self.wakes = 0
        self.checked: list[pb.TaskPushNotificationConfig] = []

    async def check_config(self, config: pb.TaskPushNotificationConfig) -> None:
        self.checked.append(config)
        if "blocked" in config.url:
            raise A2AError.invalid_params(FieldViolation("url", "targets a blocked address"))

    def wake(self) -> None:
        self.wakes += 1
