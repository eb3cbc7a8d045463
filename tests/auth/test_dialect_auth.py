"""With ``--auth``, every legacy dialect authenticates like v1.0 (issue 13 item 8).

On the server of ``conftest.py`` (API keys, bearer JWTs of an OIDC issuer,
scope ``a2a`` required), for each dialect of :data:`SURFACES`: an anonymous
call of every method answers 401 (gRPC: UNAUTHENTICATED) with the same
``WWW-Authenticate`` challenge as the v1.0 bindings, in the dialect's own
error form, and stores nothing; a
key or a JWT works, and the task it makes belongs to that caller in every
dialect; a caller without the scope is refused; another caller naming the
task gets exactly what a random id gets.

A dialect is one :class:`Surface`: its raw call of each operation and how its
errors read — v0.3 JSON-RPC, HTTP+JSON and gRPC here; the ``/tasks/send``
shape slots in as one more entry of :data:`SURFACES`.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, ClassVar

import grpc
import pytest
from google.protobuf import json_format, message_factory

from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03
from a2a_grpc.types import pb
from tests.auth.conftest import AuthServer
from tests.auth.wire import Reply

pytestmark = pytest.mark.asyncio(loop_scope="package")

#: The operations every dialect has; each names a task (``ID``) but ``send_new`` and ``card``.
OPERATIONS = (
    "send_new",
    "send",
    "stream",
    "get",
    "cancel",
    "subscribe",
    "push_set",
    "push_get",
    "push_list",
    "push_delete",
    "card",
)
TASK_OPERATIONS = [op for op in OPERATIONS if op not in ("send_new", "card")]


class Surface:
    """The raw calls of one dialect on ``srv`` (answers kept as bytes)."""

    name: ClassVar[str]
    #: The status of an UNAUTHENTICATED answer (an HTTP status or a gRPC code name).
    unauthenticated: ClassVar[int | str] = 401

    async def call(
        self, srv: AuthServer, op: str, task_id: str = "", headers: dict[str, str] | None = None
    ) -> Reply:
        raise NotImplementedError

    def reason(self, reply: Reply) -> str:
        """The ErrorInfo reason of an error reply, read the dialect's way."""
        raise NotImplementedError

    def task_id(self, reply: Reply) -> str:
        """The id of the task a successful ``send_new`` made."""
        raise NotImplementedError


class V03JsonRpc(Surface):
    """v0.3 JSON-RPC at the JSON-RPC URL, no ``A2A-Version`` header."""

    name = "v0.3 JSON-RPC"
    METHODS: ClassVar[dict[str, str]] = {
        "send_new": "message/send",
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
        "push_set": "tasks/pushNotificationConfig/set",
        "push_get": "tasks/pushNotificationConfig/get",
        "push_list": "tasks/pushNotificationConfig/list",
        "push_delete": "tasks/pushNotificationConfig/delete",
        "card": "agent/getAuthenticatedExtendedCard",
    }

    @staticmethod
    def params(op: str, task_id: str) -> Any:
        if op in ("send_new", "send", "stream"):
            message = {
                "kind": "message",
                "messageId": "m-1",
                "role": "user",
                "parts": [{"kind": "text", "text": "slow 30" if op == "send_new" else "hi"}],
            }
            if op != "send_new":
                message["taskId"] = task_id
            return {"message": message, "configuration": {"blocking": False}}
        if op == "push_set":
            return {
                "taskId": task_id,
                "pushNotificationConfig": {"id": "cfg-1", "url": "http://127.0.0.1:9/h"},
            }
        if op in ("push_get", "push_delete"):
            return {"id": task_id, "pushNotificationConfigId": "cfg-1"}
        return None if op == "card" else {"id": task_id}

    async def call(
        self, srv: AuthServer, op: str, task_id: str = "", headers: dict[str, str] | None = None
    ) -> Reply:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": self.METHODS[op]}
        if (params := self.params(op, task_id)) is not None:
            body["params"] = params
        hdrs = {"Accept": "text/event-stream"} if op in ("stream", "subscribe") else {}
        async with srv.wire.session.post(
            srv.wire.http + "/", json=body, headers={**hdrs, **(headers or {})}
        ) as resp:
            out = {k.lower(): v for k, v in resp.headers.items()}
            data = (
                await resp.content.readline()
                if resp.content_type == "text/event-stream"
                else await resp.read()
            )
        if data.startswith(b"data: "):
            data = data[6:]
        return Reply(b'"error"' not in data, resp.status, data.strip(), out)

    def reason(self, reply: Reply) -> str:
        error = json.loads(reply.body)["error"]
        assert isinstance(error["data"], dict), error  # v0.3: a plain object, never the @type array
        return str(error["data"]["reason"])

    def task_id(self, reply: Reply) -> str:
        result = json.loads(reply.body)["result"]
        assert result["kind"] == "task", result
        return str(result["id"])


def proto03_message(op: str, task_id: str) -> dict[str, Any]:
    """The v0.3 proto's SendMessageRequest (ProtoJSON) of ``send_new`` / ``send`` / ``stream``."""
    text = "slow 30" if op == "send_new" else "hi"
    message: dict[str, Any] = {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": text}]}
    if op != "send_new":
        message["taskId"] = task_id
    return {"message": message, "configuration": {"blocking": False}}


class V03Rest(Surface):
    """v0.3 HTTP+JSON under ``/v1``, no ``A2A-Version`` header."""

    name = "v0.3 HTTP+JSON"

    @staticmethod
    def route(op: str, task_id: str) -> tuple[str, str, Any]:
        configs = f"/tasks/{task_id}/pushNotificationConfigs"
        return {
            "send_new": ("POST", "/message:send", proto03_message(op, task_id)),
            "send": ("POST", "/message:send", proto03_message(op, task_id)),
            "stream": ("POST", "/message:stream", proto03_message(op, task_id)),
            "get": ("GET", f"/tasks/{task_id}", None),
            "cancel": ("POST", f"/tasks/{task_id}:cancel", {}),
            "subscribe": ("GET", f"/tasks/{task_id}:subscribe", None),
            "push_set": (
                "POST",
                configs,
                {"pushNotificationConfig": {"id": "cfg-1", "url": "http://127.0.0.1:9/h"}},
            ),
            "push_get": ("GET", configs + "/cfg-1", None),
            "push_list": ("GET", configs, None),
            "push_delete": ("DELETE", configs + "/cfg-1", None),
            "card": ("GET", "/card", None),
        }[op]

    async def call(
        self, srv: AuthServer, op: str, task_id: str = "", headers: dict[str, str] | None = None
    ) -> Reply:
        verb, path, body = self.route(op, task_id)
        hdrs = {"Accept": "text/event-stream"} if op in ("stream", "subscribe") else {}
        url = srv.wire.http + "/v1" + path
        async with srv.wire.session.request(
            verb, url, json=body, headers={**hdrs, **(headers or {})}
        ) as resp:
            out = {k.lower(): v for k, v in resp.headers.items()}
            data = (
                await resp.content.readline()
                if resp.content_type == "text/event-stream"
                else await resp.read()
            )
        return Reply(resp.status == 200, resp.status, data.removeprefix(b"data: ").strip(), out)

    def reason(self, reply: Reply) -> str:
        error = json.loads(reply.body)
        assert isinstance(error["data"], dict), error
        return str(error["data"]["reason"])

    def task_id(self, reply: Reply) -> str:
        return str(json.loads(reply.body)["task"]["id"])


class V03Grpc(Surface):
    """v0.3 gRPC: ``a2a.v1.A2AService`` on the gRPC port (status + message, no ErrorInfo: C14)."""

    name = "v0.3 gRPC"
    unauthenticated = "UNAUTHENTICATED"
    #: The v0.3 error type names that prefix a status message, and their reasons.
    NAMED: ClassVar[dict[str, str]] = {"TaskNotFoundError": "TASK_NOT_FOUND"}

    @staticmethod
    def request(op: str, task_id: str) -> tuple[str, Any, bool]:
        """(RPC, request, whether it streams)."""
        name = f"tasks/{task_id}"
        if op in ("send_new", "send", "stream"):
            request = json_format.ParseDict(proto03_message(op, task_id), v03.SendMessageRequest())
            return ("SendStreamingMessage" if op == "stream" else "SendMessage"), request, op == "stream"
        config = v03.TaskPushNotificationConfig(name=f"{name}/pushNotificationConfigs/cfg-1")
        config.push_notification_config.url = "http://127.0.0.1:9/h"
        return {
            "get": ("GetTask", v03.GetTaskRequest(name=name), False),
            "cancel": ("CancelTask", v03.CancelTaskRequest(name=name), False),
            "subscribe": ("TaskSubscription", v03.TaskSubscriptionRequest(name=name), True),
            "push_set": (
                "CreateTaskPushNotificationConfig",
                v03.CreateTaskPushNotificationConfigRequest(parent=name, config_id="cfg-1", config=config),
                False,
            ),
            "push_get": (
                "GetTaskPushNotificationConfig",
                v03.GetTaskPushNotificationConfigRequest(name=config.name),
                False,
            ),
            "push_list": (
                "ListTaskPushNotificationConfig",
                v03.ListTaskPushNotificationConfigRequest(parent=name),
                False,
            ),
            "push_delete": (
                "DeleteTaskPushNotificationConfig",
                v03.DeleteTaskPushNotificationConfigRequest(name=config.name),
                False,
            ),
            "card": ("GetAgentCard", v03.GetAgentCardRequest(), False),
        }[op]

    async def call(
        self, srv: AuthServer, op: str, task_id: str = "", headers: dict[str, str] | None = None
    ) -> Reply:
        rpc, request, streams = self.request(op, task_id)
        method = v03.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[rpc]
        out = message_factory.GetMessageClass(method.output_type)
        path = f"/a2a.v1.A2AService/{rpc}"
        md = tuple((k.lower(), v) for k, v in (headers or {}).items())
        channel = srv.wire.channel
        try:
            if streams:
                stream = channel.unary_stream(path, lambda m: m.SerializeToString(), out.FromString)(
                    request, metadata=md, timeout=10
                )
                first = None
                async for event in stream:
                    first = event
                    break
                stream.cancel()
                return Reply(True, "OK", message=first)
            unary = channel.unary_unary(path, lambda m: m.SerializeToString(), out.FromString)
            return Reply(True, "OK", message=await unary(request, metadata=md, timeout=10))
        except grpc.aio.AioRpcError as err:
            trailers = {k: v for k, v in (err.trailing_metadata() or ()) if isinstance(v, str)}
            return Reply(False, err.code().name, (err.details() or "").encode(), trailers)

    def reason(self, reply: Reply) -> str:
        assert reply.status != "UNKNOWN", reply.body
        named, sep, _ = reply.body.decode().partition(": ")
        return self.NAMED.get(named, str(reply.status)) if sep else str(reply.status)

    def task_id(self, reply: Reply) -> str:
        return str(reply.message.task.id)


SURFACES = {s.name: s for s in (V03JsonRpc(), V03Rest(), V03Grpc())}
DIALECTS = list(SURFACES)


async def v1_challenge(srv: AuthServer, headers: dict[str, str]) -> str:
    """What v1.0 JSON-RPC answers in ``WWW-Authenticate`` to a call with ``headers``."""
    reply = await srv.wire.call("jsonrpc", "GetTask", pb.GetTaskRequest(id="x"), headers)
    assert reply.status == 401 and reply.challenge
    return reply.challenge


def stored(srv: AuthServer) -> int:
    return len(srv.server.store._tasks)  # type: ignore[attr-defined]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_anonymous_calls_get_401_with_the_v1_challenge_and_store_nothing(auth_server, dialect):
    surface, before = SURFACES[dialect], stored(auth_server)
    expired = auth_server.issuer.mint(scope="a2a", exp=int(time.time()) - 60)
    for headers in ({}, {"X-API-Key": "not-a-key"}, auth_server.bearer(expired)):
        challenge = await v1_challenge(auth_server, headers)
        assert ("invalid_token" in challenge) == ("Authorization" in headers), challenge
        for op in OPERATIONS:
            reply = await surface.call(auth_server, op, str(uuid.uuid4()), headers)
            assert not reply.ok and reply.status == surface.unauthenticated, (op, reply.body)
            assert reply.challenge == challenge, (op, reply.challenge)
            assert surface.reason(reply) == "UNAUTHENTICATED", op
    assert stored(auth_server) == before


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_key_or_a_jwt_works_and_the_task_is_the_callers_in_v1_too(auth_server, dialect):
    surface = SURFACES[dialect]
    for headers in (auth_server.key("alice"), auth_server.bearer(auth_server.issuer.mint(scope="a2a"))):
        made = await surface.call(auth_server, "send_new", headers=headers)
        assert made.ok, made.body
        task_id = surface.task_id(made)
        try:
            got = await surface.call(auth_server, "get", task_id, headers)
            assert got.ok, got.body
            v1 = await auth_server.wire.call("grpc", "GetTask", pb.GetTaskRequest(id=task_id), headers)
            assert v1.ok and v1.message.id == task_id
        finally:
            await surface.call(auth_server, "cancel", task_id, headers)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_caller_without_the_scope_is_refused(auth_server, dialect):
    surface = SURFACES[dialect]
    reply = await surface.call(auth_server, "get", str(uuid.uuid4()), auth_server.key("dora"))
    assert not reply.ok and surface.reason(reply) == "PERMISSION_DENIED", reply.body


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_another_callers_task_answers_exactly_like_a_random_id(auth_server, dialect):
    surface, alice = SURFACES[dialect], auth_server.key("alice")
    made = await surface.call(auth_server, "send_new", headers=alice)
    task_id = surface.task_id(made)
    assert (await surface.call(auth_server, "push_set", task_id, alice)).ok
    others = {
        "bob (tenant acme)": auth_server.key("bob"),
        "erin (another key)": auth_server.key("erin"),
        "carol (JWT)": auth_server.bearer(auth_server.issuer.mint(scope="a2a")),
    }
    try:
        for who, headers in others.items():
            for op in TASK_OPERATIONS:
                random_id = str(uuid.uuid4())
                got = await surface.call(auth_server, op, task_id, headers)
                want = await surface.call(auth_server, op, random_id, headers)
                assert not got.ok and surface.reason(got) == "TASK_NOT_FOUND", (who, op, got.body)
                assert got.status == want.status, (who, op)
                assert got.body.replace(task_id.encode(), b"ID") == want.body.replace(
                    random_id.encode(), b"ID"
                )
        # alice's task is untouched: still running, its webhook still there
        for op in ("get", "push_get"):
            assert (await surface.call(auth_server, op, task_id, alice)).ok, op
    finally:
        await surface.call(auth_server, "cancel", task_id, alice)
