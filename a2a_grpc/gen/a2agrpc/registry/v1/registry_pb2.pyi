import datetime
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from lf.a2a.v1 import a2a_pb2 as _a2a_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union
DESCRIPTOR: _descriptor.FileDescriptor

class HealthState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HEALTH_STATE_UNSPECIFIED: _ClassVar[HealthState]
    HEALTH_STATE_HEALTHY: _ClassVar[HealthState]
    HEALTH_STATE_UNHEALTHY: _ClassVar[HealthState]

class ChangeType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_TYPE_UNSPECIFIED: _ClassVar[ChangeType]
    CHANGE_TYPE_EXISTING: _ClassVar[ChangeType]
    CHANGE_TYPE_REGISTERED: _ClassVar[ChangeType]
    CHANGE_TYPE_CARD_CHANGED: _ClassVar[ChangeType]
    CHANGE_TYPE_HEALTH_CHANGED: _ClassVar[ChangeType]
    CHANGE_TYPE_REMOVED: _ClassVar[ChangeType]
HEALTH_STATE_UNSPECIFIED: HealthState
HEALTH_STATE_HEALTHY: HealthState
HEALTH_STATE_UNHEALTHY: HealthState
CHANGE_TYPE_UNSPECIFIED: ChangeType
CHANGE_TYPE_EXISTING: ChangeType
CHANGE_TYPE_REGISTERED: ChangeType
CHANGE_TYPE_CARD_CHANGED: ChangeType
CHANGE_TYPE_HEALTH_CHANGED: ChangeType
CHANGE_TYPE_REMOVED: ChangeType

class RegisteredAgent(_message.Message):
    __slots__ = ('agent_id', 'base_url', 'card', 'card_etag', 'health', 'consecutive_failures', 'last_error', 'register_time', 'card_update_time', 'last_seen_time', 'last_check_time')
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CARD_ETAG_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    REGISTER_TIME_FIELD_NUMBER: _ClassVar[int]
    CARD_UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_CHECK_TIME_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    base_url: str
    card: _a2a_pb2.AgentCard
    card_etag: str
    health: HealthState
    consecutive_failures: int
    last_error: str
    register_time: _timestamp_pb2.Timestamp
    card_update_time: _timestamp_pb2.Timestamp
    last_seen_time: _timestamp_pb2.Timestamp
    last_check_time: _timestamp_pb2.Timestamp

    def __init__(self, agent_id: _Optional[str]=..., base_url: _Optional[str]=..., card: _Optional[_Union[_a2a_pb2.AgentCard, _Mapping]]=..., card_etag: _Optional[str]=..., health: _Optional[_Union[HealthState, str]]=..., consecutive_failures: _Optional[int]=..., last_error: _Optional[str]=..., register_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]=..., card_update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]=..., last_seen_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]=..., last_check_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]=...) -> None:
        ...

class RegisterAgentRequest(_message.Message):
    __slots__ = ('base_url',)
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    base_url: str

    def __init__(self, base_url: _Optional[str]=...) -> None:
        ...

class RegisterAgentResponse(_message.Message):
    __slots__ = ('agent',)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: RegisteredAgent

    def __init__(self, agent: _Optional[_Union[RegisteredAgent, _Mapping]]=...) -> None:
        ...

class UpdateAgentRequest(_message.Message):
    __slots__ = ('agent_id', 'base_url')
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    base_url: str

    def __init__(self, agent_id: _Optional[str]=..., base_url: _Optional[str]=...) -> None:
        ...

class UpdateAgentResponse(_message.Message):
    __slots__ = ('agent',)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: RegisteredAgent

    def __init__(self, agent: _Optional[_Union[RegisteredAgent, _Mapping]]=...) -> None:
        ...

class DeregisterAgentRequest(_message.Message):
    __slots__ = ('agent_id',)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str

    def __init__(self, agent_id: _Optional[str]=...) -> None:
        ...

class DeregisterAgentResponse(_message.Message):
    __slots__ = ()

    def __init__(self) -> None:
        ...

class GetAgentRequest(_message.Message):
    __slots__ = ('agent_id',)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str

    def __init__(self, agent_id: _Optional[str]=...) -> None:
        ...

class GetAgentResponse(_message.Message):
    __slots__ = ('agent',)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: RegisteredAgent

    def __init__(self, agent: _Optional[_Union[RegisteredAgent, _Mapping]]=...) -> None:
        ...

class ListAgentsRequest(_message.Message):
    __slots__ = ('skill', 'tag', 'input_mode', 'output_mode', 'binding', 'healthy_only', 'query', 'page_size', 'page_token')
    SKILL_FIELD_NUMBER: _ClassVar[int]
    TAG_FIELD_NUMBER: _ClassVar[int]
    INPUT_MODE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_MODE_FIELD_NUMBER: _ClassVar[int]
    BINDING_FIELD_NUMBER: _ClassVar[int]
    HEALTHY_ONLY_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    skill: str
    tag: str
    input_mode: str
    output_mode: str
    binding: str
    healthy_only: bool
    query: str
    page_size: int
    page_token: str

    def __init__(self, skill: _Optional[str]=..., tag: _Optional[str]=..., input_mode: _Optional[str]=..., output_mode: _Optional[str]=..., binding: _Optional[str]=..., healthy_only: _Optional[bool]=..., query: _Optional[str]=..., page_size: _Optional[int]=..., page_token: _Optional[str]=...) -> None:
        ...

class ListAgentsResponse(_message.Message):
    __slots__ = ('agents', 'next_page_token', 'page_size', 'total_size')
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[RegisteredAgent]
    next_page_token: str
    page_size: int
    total_size: int

    def __init__(self, agents: _Optional[_Iterable[_Union[RegisteredAgent, _Mapping]]]=..., next_page_token: _Optional[str]=..., page_size: _Optional[int]=..., total_size: _Optional[int]=...) -> None:
        ...

class WatchAgentsRequest(_message.Message):
    __slots__ = ('include_existing',)
    INCLUDE_EXISTING_FIELD_NUMBER: _ClassVar[int]
    include_existing: bool

    def __init__(self, include_existing: _Optional[bool]=...) -> None:
        ...

class WatchAgentsResponse(_message.Message):
    __slots__ = ('change', 'agent', 'time')
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    change: ChangeType
    agent: RegisteredAgent
    time: _timestamp_pb2.Timestamp

    def __init__(self, change: _Optional[_Union[ChangeType, str]]=..., agent: _Optional[_Union[RegisteredAgent, _Mapping]]=..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]=...) -> None:
        ...