"""``A2AClient``: one async API for an A2A agent over gRPC, JSON-RPC or REST.

Typical use::

    async with await A2AClient.connect("http://127.0.0.1:8080") as client:
        response = await client.send_message("review this", context_id=ctx)
        async for event in client.send_streaming_message("more"):
            ...

Methods take and return the generated protos (``a2a_grpc.types.pb``); every
failure is an :class:`~a2a_grpc.errors.A2AError` whose ``code`` is the same
:class:`~a2a_grpc.errors.ErrorCode` whichever binding carried the call.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from google.protobuf import message as _message
from google.protobuf import struct_pb2, timestamp_pb2

from a2a_grpc.client import _v03 as v03
from a2a_grpc.client._auth import Credentials
from a2a_grpc.client._base import CallOptions, Transport, method
from a2a_grpc.client._card import (
    BINDINGS,
    PROTOCOL_VERSION,
    binding_key,
    card_url,
    describe_interfaces,
    fetch_card,
    is_grpc_url,
    matching_interfaces,
)
from a2a_grpc.client._errors import StreamTruncatedError, state_name
from a2a_grpc.client._grpc import GrpcTransport
from a2a_grpc.client._jsonrpc import JsonRpcTransport
from a2a_grpc.client._rest import RestTransport
from a2a_grpc.client._v03grpc import SERVICE_NAME as V03_SERVICE_NAME
from a2a_grpc.client._v03grpc import V03GrpcTransport
from a2a_grpc.client._v03jsonrpc import V03JsonRpcTransport
from a2a_grpc.client._v03rest import V03RestTransport
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import SERVICE_NAME, is_final, new_id, pb

if TYPE_CHECKING:
    from a2a_grpc.bindings.tls import ClientTLS
    from a2a_grpc.protocol.cardsign import TrustedKeys

__all__ = ["DEFAULT_BINDINGS", "A2AClient", "make_transport"]

#: Bindings a client accepts unless told otherwise (the card's order decides).
DEFAULT_BINDINGS: tuple[str, ...] = ("grpc", "jsonrpc", "rest")

MessageContent = pb.Message | str | Sequence[pb.Part]


class _Default(enum.Enum):
    TOKEN = 0


_DEFAULT = _Default.TOKEN
Timeout = float | None | _Default


def make_transport(
    url: str, binding: str, options: CallOptions, *, version: str = PROTOCOL_VERSION
) -> Transport:
    """The transport of one interface: ``binding`` is ``grpc``, ``jsonrpc``
    or ``rest`` (or the card's ``GRPC`` / ``JSONRPC`` / ``HTTP+JSON``);
    ``version`` its ``protocolVersion``, 1.0 or 0.3 (the v0.3 transports
    convert to and from the v0.3 wire, :mod:`a2a_grpc.client._v03`)."""
    key = binding_key(binding)
    if v03.is_v03(version):
        return _v03_transport(url, key, options)
    if key == "grpc":
        return GrpcTransport(url, options)
    if key == "jsonrpc":
        return JsonRpcTransport(url, options)
    return RestTransport(url, options)


def _v03_transport(url: str, key: str, options: CallOptions) -> Transport:
    if key == "jsonrpc":
        return V03JsonRpcTransport(url, options)
    if key == "grpc":
        return V03GrpcTransport(url, options)
    return V03RestTransport(url, options)


def _parse_state(state: int | str | None) -> int:
    if state is None:
        return pb.TASK_STATE_UNSPECIFIED
    if isinstance(state, int):
        return state
    name = state.strip().upper().replace("-", "_")
    if not name.startswith("TASK_STATE_"):
        name = "TASK_STATE_" + name
    try:
        return pb.TaskState.Value(name)
    except ValueError:
        raise A2AError(ErrorCode.INVALID_PARAMS, f"unknown task state {state!r}") from None


class A2AClient:
    """A client bound to one interface (binding + URL + tenant) of an agent.

    Build it with :meth:`connect` (discovers the card and picks the interface)
    or :meth:`for_interface` (no card). ``timeout`` is the default deadline of
    unary calls in seconds; each method also takes ``timeout=`` (``None`` = no
    deadline). Streams have no deadline unless one is passed. Every request
    carries ``A2A-Version: 1.0`` (``0.3`` to a v0.3 interface, whose calls
    are converted: ``ListTasks`` has no v0.3 counterpart and raises
    UNSUPPORTED_OPERATION), the caller's ``headers`` (e.g.
    ``Authorization``) and, when ``extensions`` are given, ``A2A-Extensions``
    (digest §7); the interface's ``tenant`` is copied into every request
    (spec §8.3.2).
    """

    def __init__(
        self,
        transport: Transport,
        interface: pb.AgentInterface,
        *,
        card: pb.AgentCard | None = None,
        timeout: float | None = 30.0,
    ) -> None:
        self.transport = transport
        self.interface = interface
        self.card = card
        self.timeout = timeout

    # ------------------------------------------------------------------ set-up
    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        bindings: Iterable[str] = DEFAULT_BINDINGS,
        timeout: float | None = 30.0,
        connect_timeout: float = 5.0,
        headers: Mapping[str, str] | None = None,
        extensions: Sequence[str] = (),
        tls: ClientTLS | None = None,
        trusted_keys: TrustedKeys | None = None,
        require_signed_card: bool = False,
        credentials: Credentials | None = None,
    ) -> A2AClient:
        """Fetches the Agent Card at ``base_url`` and connects to the first
        interface, in the card's order, whose binding is in ``bindings`` and
        whose ``protocolVersion`` is 1.0, else 0.3 (a v0.3 card's endpoints;
        same API, converted: :mod:`a2a_grpc.client._v03`); one not reachable
        within ``connect_timeout`` seconds is skipped (spec §5.2, §8.3.2). A
        ``grpc://host:port`` (or ``grpcs://``) URL is a gRPC endpoint without
        a card: the server's reflection, when it has one, must list
        ``lf.a2a.v1.A2AService`` — or only ``a2a.v1.A2AService``, an A2A 0.3
        agent, then spoken to in v0.3.

        ``tls`` (:class:`~a2a_grpc.bindings.tls.ClientTLS`): CA and client certificate
        for ``https``/``grpcs`` and mTLS. A signed card is verified with
        ``trusted_keys`` (and its own-host ``jku``); ``require_signed_card``
        also refuses an unverified one (spec §8.4.3). ``credentials`` (API
        key, bearer token) go the way the card's ``securitySchemes`` ask.

        Raises ``A2AError``: the card errors of
        :func:`~a2a_grpc.client._card.fetch_card`; UNSUPPORTED_OPERATION (or
        VERSION_NOT_SUPPORTED) when no interface matches, or a ``grpc://``
        endpoint does not serve A2A; UNAVAILABLE when none is reachable.
        """
        if is_grpc_url(base_url):
            extra = credentials.default_headers() if credentials else {}
            options = CallOptions(headers={**(headers or {}), **extra}, extensions=tuple(extensions), tls=tls)
            return await cls._connect_grpc(
                base_url, options, bindings, timeout=timeout, connect_timeout=connect_timeout
            )
        card = await fetch_card(
            base_url,
            timeout=timeout or 30.0,
            headers=headers,
            tls=tls,
            trusted=trusted_keys,
            require_signature=require_signed_card,
        )
        return await cls.from_card(
            card,
            bindings=bindings,
            timeout=timeout,
            connect_timeout=connect_timeout,
            headers=headers,
            extensions=extensions,
            base_url=card_url(base_url),
            tls=tls,
            credentials=credentials,
        )

    @classmethod
    async def _connect_grpc(
        cls,
        url: str,
        options: CallOptions,
        bindings: Iterable[str],
        *,
        timeout: float | None,
        connect_timeout: float,
    ) -> A2AClient:
        allowed = {binding_key(b) for b in bindings}
        if "grpc" not in allowed:
            raise A2AError(
                ErrorCode.UNSUPPORTED_OPERATION,
                f"{url} is a gRPC endpoint, but only {', '.join(sorted(allowed))} was allowed",
            )
        transport: GrpcTransport = GrpcTransport(url, options)
        version = PROTOCOL_VERSION
        try:
            await transport.probe(connect_timeout)
            names = await transport.services(connect_timeout)
            if names is not None and SERVICE_NAME not in names and V03_SERVICE_NAME in names:
                await transport.close()  # an A2A 0.3 gRPC agent (a2a.v1.A2AService)
                transport, version = V03GrpcTransport(url, options), v03.VERSION
            await transport.confirm_service(connect_timeout)
        except BaseException:
            await transport.close()
            raise
        iface = pb.AgentInterface(url=url, protocol_binding="GRPC", protocol_version=version)
        return cls(transport, iface, timeout=timeout)

    @classmethod
    async def from_card(
        cls,
        card: pb.AgentCard,
        *,
        bindings: Iterable[str] = DEFAULT_BINDINGS,
        timeout: float | None = 30.0,
        connect_timeout: float = 5.0,
        headers: Mapping[str, str] | None = None,
        extensions: Sequence[str] = (),
        base_url: str = "",
        tls: ClientTLS | None = None,
        credentials: Credentials | None = None,
    ) -> A2AClient:
        """:meth:`connect` for a card already in hand. ``base_url`` resolves
        relative HTTP interface URLs; a card that came over ``https`` makes its
        bare ``host:port`` gRPC URLs TLS too (with ``tls`` or the system roots);
        ``credentials`` as in :meth:`connect`."""
        allowed = [binding_key(b) for b in bindings]
        candidates = matching_interfaces(card, allowed) + matching_interfaces(
            card, allowed, version=v03.VERSION
        )
        if not candidates:
            wanted = ", ".join(BINDINGS[b] for b in allowed)
            offered = describe_interfaces(card.supported_interfaces)
            same_binding = [
                i
                for i in card.supported_interfaces
                if i.protocol_binding.upper() in {BINDINGS[b] for b in allowed}
            ]
            code = ErrorCode.VERSION_NOT_SUPPORTED if same_binding else ErrorCode.UNSUPPORTED_OPERATION
            raise A2AError(
                code,
                f"the agent offers no {wanted} interface for A2A {PROTOCOL_VERSION} or {v03.VERSION} "
                f"(card: {offered})",
            )
        if tls is None and base_url.lower().startswith("https://"):
            from a2a_grpc.bindings.tls import ClientTLS

            tls = ClientTLS()
        extra = credentials.headers_for(card) if credentials else {}
        options = CallOptions(headers={**(headers or {}), **extra}, extensions=tuple(extensions), tls=tls)
        failures: list[str] = []
        for iface in candidates:
            url = iface.url
            if base_url and binding_key(iface.protocol_binding) != "grpc" and "://" not in url:
                url = urljoin(base_url, url)
            transport = make_transport(url, iface.protocol_binding, options, version=iface.protocol_version)
            try:
                await transport.probe(connect_timeout)
            except A2AError as exc:
                failures.append(f"{iface.protocol_binding} {iface.url}: {exc.message}")
                await transport.close()
                continue
            return cls(transport, iface, card=card, timeout=timeout)
        raise A2AError(
            ErrorCode.UNAVAILABLE, "no interface of the agent is reachable: " + "; ".join(failures)
        )

    @classmethod
    def for_interface(
        cls,
        url: str,
        binding: str,
        *,
        tenant: str = "",
        timeout: float | None = 30.0,
        headers: Mapping[str, str] | None = None,
        extensions: Sequence[str] = (),
        tls: ClientTLS | None = None,
        credentials: Credentials | None = None,
        protocol_version: str = PROTOCOL_VERSION,
    ) -> A2AClient:
        """A client for a known interface, without fetching the card.
        ``binding`` is ``grpc`` / ``jsonrpc`` / ``rest`` (or the card's
        names); ``protocol_version`` ``1.0`` or ``0.3``; ``tls`` as in
        :meth:`connect`; ``credentials`` go as ``X-API-Key`` /
        ``Authorization: Bearer``. Nothing is connected until the first call."""
        key = binding_key(binding)
        iface = pb.AgentInterface(
            url=url, protocol_binding=BINDINGS[key], tenant=tenant, protocol_version=protocol_version
        )
        extra = credentials.default_headers() if credentials else {}
        options = CallOptions(headers={**(headers or {}), **extra}, extensions=tuple(extensions), tls=tls)
        return cls(make_transport(url, key, options, version=protocol_version), iface, timeout=timeout)

    @property
    def binding(self) -> str:
        """``grpc``, ``jsonrpc`` or ``rest``."""
        return self.transport.binding

    async def close(self) -> None:
        """Closes the channel / HTTP session."""
        await self.transport.close()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # ----------------------------------------------------------------- helpers
    def _timeout(self, timeout: Timeout, *, stream: bool = False) -> float | None:
        if isinstance(timeout, _Default):
            return None if stream else self.timeout
        return timeout

    def _tenant(self, request: _message.Message) -> _message.Message:
        if self.interface.tenant:
            request.tenant = self.interface.tenant  # type: ignore[attr-defined]
        return request

    async def _unary(self, name: str, request: _message.Message, timeout: Timeout) -> Any:
        return await self.transport.unary(method(name), self._tenant(request), self._timeout(timeout))

    @staticmethod
    def build_message(
        content: MessageContent, *, task_id: str | None = None, context_id: str | None = None
    ) -> pb.Message:
        """A user Message: ``content`` is a Message (copied), a text, or a list
        of Parts. A missing ``message_id`` is generated, the role defaults to
        USER, and ``task_id`` / ``context_id`` are set when given."""
        if isinstance(content, pb.Message):
            msg = pb.Message()
            msg.CopyFrom(content)
        elif isinstance(content, str):
            msg = pb.Message(parts=[pb.Part(text=content)])
        else:
            msg = pb.Message(parts=list(content))
        if not msg.message_id:
            msg.message_id = new_id()
        if msg.role == pb.ROLE_UNSPECIFIED:
            msg.role = pb.ROLE_USER
        if task_id:
            msg.task_id = task_id
        if context_id:
            msg.context_id = context_id
        return msg

    def _send_request(
        self,
        content: MessageContent,
        task_id: str | None,
        context_id: str | None,
        configuration: pb.SendMessageConfiguration | None,
        metadata: Mapping[str, Any] | None,
    ) -> pb.SendMessageRequest:
        req = pb.SendMessageRequest(
            message=self.build_message(content, task_id=task_id, context_id=context_id)
        )
        if configuration is not None:
            req.configuration.CopyFrom(configuration)
        if metadata:
            req.metadata.CopyFrom(_struct(metadata))
        return req

    async def _checked(
        self, events: AsyncGenerator[pb.StreamResponse, None], what: str, task_id: str = ""
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        """Passes the events through and raises StreamTruncatedError when the
        stream ends before the task is terminal or interrupted (a stream
        holding a single Message is complete). Digest §10, design.md A2."""
        state = pb.TASK_STATE_UNSPECIFIED
        seen_message = False
        async with aclosing(events) as stream:
            async for event in stream:
                kind = event.WhichOneof("payload")
                if kind == "task":
                    state, task_id = event.task.status.state, event.task.id
                elif kind == "status_update":
                    state, task_id = event.status_update.status.state, event.status_update.task_id
                elif kind == "message":
                    seen_message = True
                yield event
        if is_final(state) or (seen_message and state == pb.TASK_STATE_UNSPECIFIED):
            return
        if state == pb.TASK_STATE_UNSPECIFIED:
            detail = "before any event"
        else:
            detail = f"while task {task_id} was {state_name(state)}"
        raise StreamTruncatedError(
            f"{what} stream ended {detail}; it should end in a terminal or interrupted state",
            task_id=task_id,
            last_state=state,
        )

    # -------------------------------------------------------------- operations
    async def send_message(
        self,
        message: MessageContent,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        configuration: pb.SendMessageConfiguration | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: Timeout = _DEFAULT,
    ) -> pb.SendMessageResponse:
        """SendMessage (spec §3.1.1): answers ``SendMessageResponse`` holding a
        ``task`` or a direct ``message``. Waits until the task is terminal or
        interrupted unless ``configuration.return_immediately`` is set.
        Errors: TASK_NOT_FOUND (unknown ``task_id``), UNSUPPORTED_OPERATION
        (terminal or busy task), CONTENT_TYPE_NOT_SUPPORTED, INVALID_PARAMS ..."""
        req = self._send_request(message, task_id, context_id, configuration, metadata)
        result: pb.SendMessageResponse = await self._unary("SendMessage", req, timeout)
        return result

    async def send_streaming_message(
        self,
        message: MessageContent,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        configuration: pb.SendMessageConfiguration | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: Timeout = _DEFAULT,
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        """SendStreamingMessage (spec §3.1.2): yields ``StreamResponse`` events —
        one ``message``, or the ``task`` followed by ``status_update`` /
        ``artifact_update`` events until the task is terminal or interrupted.
        Raises UNSUPPORTED_OPERATION when the agent does not stream, and
        :class:`StreamTruncatedError` when the stream stops early."""
        req = self._tenant(self._send_request(message, task_id, context_id, configuration, metadata))
        events = self.transport.stream(
            method("SendStreamingMessage"), req, self._timeout(timeout, stream=True)
        )
        async with aclosing(self._checked(events, "SendStreamingMessage", task_id or "")) as checked:
            async for event in checked:
                yield event

    async def get_task(
        self, id: str, history_length: int | None = None, *, timeout: Timeout = _DEFAULT
    ) -> pb.Task:
        """GetTask (spec §3.1.3): the task with at most ``history_length``
        history messages (None = all). Errors: TASK_NOT_FOUND, INVALID_PARAMS."""
        req = pb.GetTaskRequest(id=id)
        if history_length is not None:
            req.history_length = history_length
        task: pb.Task = await self._unary("GetTask", req, timeout)
        return task

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        status: int | str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        history_length: int | None = None,
        status_timestamp_after: datetime | timestamp_pb2.Timestamp | None = None,
        include_artifacts: bool | None = None,
        timeout: Timeout = _DEFAULT,
    ) -> pb.ListTasksResponse:
        """ListTasks (spec §3.1.4): one page of the caller's tasks. ``status``
        is a ``pb.TaskState`` or its name (``"working"`` or
        ``"TASK_STATE_WORKING"``). Errors: INVALID_PARAMS (bad page token or
        size)."""
        req = pb.ListTasksRequest(context_id=context_id or "", page_token=page_token or "")
        req.status = _parse_state(status)  # type: ignore[assignment]
        if page_size is not None:
            req.page_size = page_size
        if history_length is not None:
            req.history_length = history_length
        if include_artifacts is not None:
            req.include_artifacts = include_artifacts
        if isinstance(status_timestamp_after, datetime):
            req.status_timestamp_after.FromDatetime(status_timestamp_after)
        elif status_timestamp_after is not None:
            req.status_timestamp_after.CopyFrom(status_timestamp_after)
        result: pb.ListTasksResponse = await self._unary("ListTasks", req, timeout)
        return result

    async def cancel_task(
        self, id: str, *, metadata: Mapping[str, Any] | None = None, timeout: Timeout = _DEFAULT
    ) -> pb.Task:
        """CancelTask (spec §3.1.5): the task as it stands after the cancel.
        Errors: TASK_NOT_FOUND, TASK_NOT_CANCELABLE."""
        req = pb.CancelTaskRequest(id=id)
        if metadata:
            req.metadata.CopyFrom(_struct(metadata))
        task: pb.Task = await self._unary("CancelTask", req, timeout)
        return task

    async def subscribe_to_task(
        self, id: str, *, timeout: Timeout = _DEFAULT
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        """SubscribeToTask (spec §3.1.6): a ``task`` snapshot, then the task's
        updates until it is terminal. Errors: TASK_NOT_FOUND,
        UNSUPPORTED_OPERATION (terminal task or no streaming), and
        :class:`StreamTruncatedError` when the stream stops while the task is
        still active (an interrupted state is accepted as an end, since some
        servers close there — digest §10, ambiguity A2)."""
        req = self._tenant(pb.SubscribeToTaskRequest(id=id))
        events = self.transport.stream(method("SubscribeToTask"), req, self._timeout(timeout, stream=True))
        async with aclosing(self._checked(events, "SubscribeToTask", id)) as checked:
            async for event in checked:
                yield event

    async def create_task_push_notification_config(
        self, config: pb.TaskPushNotificationConfig, *, timeout: Timeout = _DEFAULT
    ) -> pb.TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (spec §3.1.7): registers a webhook
        (``task_id``, ``url``, optional ``id``, ``token``, ``authentication``)
        and returns it with its ``id``. Errors: PUSH_NOTIFICATION_NOT_SUPPORTED,
        TASK_NOT_FOUND, INVALID_PARAMS (e.g. a URL the server refuses)."""
        req = pb.TaskPushNotificationConfig()
        req.CopyFrom(config)
        result: pb.TaskPushNotificationConfig = await self._unary(
            "CreateTaskPushNotificationConfig", req, timeout
        )
        return result

    async def get_task_push_notification_config(
        self, task_id: str, id: str, *, timeout: Timeout = _DEFAULT
    ) -> pb.TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig (spec §3.1.8). Errors: TASK_NOT_FOUND
        (task or config unknown), PUSH_NOTIFICATION_NOT_SUPPORTED."""
        req = pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id=id)
        result: pb.TaskPushNotificationConfig = await self._unary(
            "GetTaskPushNotificationConfig", req, timeout
        )
        return result

    async def list_task_push_notification_configs(
        self,
        task_id: str,
        *,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: Timeout = _DEFAULT,
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs (spec §3.1.9): one page of a task's
        webhooks. Errors: TASK_NOT_FOUND, PUSH_NOTIFICATION_NOT_SUPPORTED."""
        req = pb.ListTaskPushNotificationConfigsRequest(
            task_id=task_id, page_size=page_size or 0, page_token=page_token or ""
        )
        result: pb.ListTaskPushNotificationConfigsResponse = await self._unary(
            "ListTaskPushNotificationConfigs", req, timeout
        )
        return result

    async def delete_task_push_notification_config(
        self, task_id: str, id: str, *, timeout: Timeout = _DEFAULT
    ) -> None:
        """DeleteTaskPushNotificationConfig (spec §3.1.10); deleting one that
        is already gone succeeds. Errors: TASK_NOT_FOUND,
        PUSH_NOTIFICATION_NOT_SUPPORTED."""
        req = pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=id)
        await self._unary("DeleteTaskPushNotificationConfig", req, timeout)

    async def get_extended_agent_card(self, *, timeout: Timeout = _DEFAULT) -> pb.AgentCard:
        """GetExtendedAgentCard (spec §3.1.11, digest §8.3): the card for this
        caller; it replaces :attr:`card`. Errors: UNSUPPORTED_OPERATION (not
        advertised), EXTENDED_AGENT_CARD_NOT_CONFIGURED, UNAUTHENTICATED."""
        card: pb.AgentCard = await self._unary(
            "GetExtendedAgentCard", pb.GetExtendedAgentCardRequest(), timeout
        )
        self.card = card
        return card


def _struct(values: Mapping[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(dict(values))
    return out
