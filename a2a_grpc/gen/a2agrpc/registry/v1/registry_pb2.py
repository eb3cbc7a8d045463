"""Generated protocol buffer code."""
from google.protobuf import descriptor as _descriptor
from google.protobuf import descriptor_pool as _descriptor_pool
from google.protobuf import runtime_version as _runtime_version
from google.protobuf import symbol_database as _symbol_database
from google.protobuf.internal import builder as _builder
_runtime_version.ValidateProtobufRuntimeVersion(_runtime_version.Domain.PUBLIC, 7, 35, 1, '', 'a2agrpc/registry/v1/registry.proto')
_sym_db = _symbol_database.Default()
from google.api import annotations_pb2 as google_dot_api_dot_annotations__pb2
from google.api import field_behavior_pb2 as google_dot_api_dot_field__behavior__pb2
from google.protobuf import timestamp_pb2 as google_dot_protobuf_dot_timestamp__pb2
from ....lf.a2a.v1 import a2a_pb2 as lf_dot_a2a_dot_v1_dot_a2a__pb2
DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(b'\n"a2agrpc/registry/v1/registry.proto\x12\x13a2agrpc.registry.v1\x1a\x1cgoogle/api/annotations.proto\x1a\x1fgoogle/api/field_behavior.proto\x1a\x1fgoogle/protobuf/timestamp.proto\x1a\x13lf/a2a/v1/a2a.proto"\xe4\x03\n\x0fRegisteredAgent\x12\x16\n\x08agent_id\x18\x01 \x01(\tB\x04\xe2A\x01\x03\x12\x16\n\x08base_url\x18\x02 \x01(\tB\x04\xe2A\x01\x02\x12(\n\x04card\x18\x03 \x01(\x0b2\x14.lf.a2a.v1.AgentCardB\x04\xe2A\x01\x03\x12\x17\n\tcard_etag\x18\x04 \x01(\tB\x04\xe2A\x01\x03\x126\n\x06health\x18\x05 \x01(\x0e2 .a2agrpc.registry.v1.HealthStateB\x04\xe2A\x01\x03\x12"\n\x14consecutive_failures\x18\x06 \x01(\x05B\x04\xe2A\x01\x03\x12\x18\n\nlast_error\x18\x07 \x01(\tB\x04\xe2A\x01\x03\x127\n\rregister_time\x18\x08 \x01(\x0b2\x1a.google.protobuf.TimestampB\x04\xe2A\x01\x03\x12:\n\x10card_update_time\x18\t \x01(\x0b2\x1a.google.protobuf.TimestampB\x04\xe2A\x01\x03\x128\n\x0elast_seen_time\x18\n \x01(\x0b2\x1a.google.protobuf.TimestampB\x04\xe2A\x01\x03\x129\n\x0flast_check_time\x18\x0b \x01(\x0b2\x1a.google.protobuf.TimestampB\x04\xe2A\x01\x03".\n\x14RegisterAgentRequest\x12\x16\n\x08base_url\x18\x01 \x01(\tB\x04\xe2A\x01\x02"R\n\x15RegisterAgentResponse\x129\n\x05agent\x18\x01 \x01(\x0b2$.a2agrpc.registry.v1.RegisteredAgentB\x04\xe2A\x01\x02">\n\x12UpdateAgentRequest\x12\x16\n\x08agent_id\x18\x01 \x01(\tB\x04\xe2A\x01\x02\x12\x10\n\x08base_url\x18\x02 \x01(\t"P\n\x13UpdateAgentResponse\x129\n\x05agent\x18\x01 \x01(\x0b2$.a2agrpc.registry.v1.RegisteredAgentB\x04\xe2A\x01\x02"0\n\x16DeregisterAgentRequest\x12\x16\n\x08agent_id\x18\x01 \x01(\tB\x04\xe2A\x01\x02"\x19\n\x17DeregisterAgentResponse")\n\x0fGetAgentRequest\x12\x16\n\x08agent_id\x18\x01 \x01(\tB\x04\xe2A\x01\x02"M\n\x10GetAgentResponse\x129\n\x05agent\x18\x01 \x01(\x0b2$.a2agrpc.registry.v1.RegisteredAgentB\x04\xe2A\x01\x02"\xc8\x01\n\x11ListAgentsRequest\x12\r\n\x05skill\x18\x01 \x01(\t\x12\x0b\n\x03tag\x18\x02 \x01(\t\x12\x12\n\ninput_mode\x18\x03 \x01(\t\x12\x13\n\x0boutput_mode\x18\x04 \x01(\t\x12\x0f\n\x07binding\x18\x05 \x01(\t\x12\x14\n\x0chealthy_only\x18\x06 \x01(\x08\x12\r\n\x05query\x18\x07 \x01(\t\x12\x16\n\tpage_size\x18\x08 \x01(\x05H\x00\x88\x01\x01\x12\x12\n\npage_token\x18\t \x01(\tB\x0c\n\n_page_size"\xa2\x01\n\x12ListAgentsResponse\x12:\n\x06agents\x18\x01 \x03(\x0b2$.a2agrpc.registry.v1.RegisteredAgentB\x04\xe2A\x01\x02\x12\x1d\n\x0fnext_page_token\x18\x02 \x01(\tB\x04\xe2A\x01\x02\x12\x17\n\tpage_size\x18\x03 \x01(\x05B\x04\xe2A\x01\x02\x12\x18\n\ntotal_size\x18\x04 \x01(\x05B\x04\xe2A\x01\x02".\n\x12WatchAgentsRequest\x12\x18\n\x10include_existing\x18\x01 \x01(\x08"\xb7\x01\n\x13WatchAgentsResponse\x125\n\x06change\x18\x01 \x01(\x0e2\x1f.a2agrpc.registry.v1.ChangeTypeB\x04\xe2A\x01\x02\x129\n\x05agent\x18\x02 \x01(\x0b2$.a2agrpc.registry.v1.RegisteredAgentB\x04\xe2A\x01\x02\x12.\n\x04time\x18\x03 \x01(\x0b2\x1a.google.protobuf.TimestampB\x04\xe2A\x01\x02*a\n\x0bHealthState\x12\x1c\n\x18HEALTH_STATE_UNSPECIFIED\x10\x00\x12\x18\n\x14HEALTH_STATE_HEALTHY\x10\x01\x12\x1a\n\x16HEALTH_STATE_UNHEALTHY\x10\x02*\xb6\x01\n\nChangeType\x12\x1b\n\x17CHANGE_TYPE_UNSPECIFIED\x10\x00\x12\x18\n\x14CHANGE_TYPE_EXISTING\x10\x01\x12\x1a\n\x16CHANGE_TYPE_REGISTERED\x10\x02\x12\x1c\n\x18CHANGE_TYPE_CARD_CHANGED\x10\x03\x12\x1e\n\x1aCHANGE_TYPE_HEALTH_CHANGED\x10\x04\x12\x17\n\x13CHANGE_TYPE_REMOVED\x10\x052\x91\x06\n\x14AgentRegistryService\x12}\n\rRegisterAgent\x12).a2agrpc.registry.v1.RegisterAgentRequest\x1a*.a2agrpc.registry.v1.RegisterAgentResponse"\x15\x82\xd3\xe4\x93\x02\x0f"\n/v1/agents:\x01*\x12\x82\x01\n\x0bUpdateAgent\x12\'.a2agrpc.registry.v1.UpdateAgentRequest\x1a(.a2agrpc.registry.v1.UpdateAgentResponse" \x82\xd3\xe4\x93\x02\x1a2\x15/v1/agents/{agent_id}:\x01*\x12\x8b\x01\n\x0fDeregisterAgent\x12+.a2agrpc.registry.v1.DeregisterAgentRequest\x1a,.a2agrpc.registry.v1.DeregisterAgentResponse"\x1d\x82\xd3\xe4\x93\x02\x17*\x15/v1/agents/{agent_id}\x12v\n\x08GetAgent\x12$.a2agrpc.registry.v1.GetAgentRequest\x1a%.a2agrpc.registry.v1.GetAgentResponse"\x1d\x82\xd3\xe4\x93\x02\x17\x12\x15/v1/agents/{agent_id}\x12q\n\nListAgents\x12&.a2agrpc.registry.v1.ListAgentsRequest\x1a\'.a2agrpc.registry.v1.ListAgentsResponse"\x12\x82\xd3\xe4\x93\x02\x0c\x12\n/v1/agents\x12|\n\x0bWatchAgents\x12\'.a2agrpc.registry.v1.WatchAgentsRequest\x1a(.a2agrpc.registry.v1.WatchAgentsResponse"\x18\x82\xd3\xe4\x93\x02\x12\x12\x10/v1/agents:watch0\x01BN\n\x17dev.a2agrpc.registry.v1B\rRegistryProtoP\x01Z"a2agrpc.dev/registry/v1;registryv1b\x06proto3')
_globals = globals()
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, _globals)
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'a2agrpc.registry.v1.registry_pb2', _globals)
if not _descriptor._USE_C_DESCRIPTORS:
    _globals['DESCRIPTOR']._loaded_options = None
    _globals['DESCRIPTOR']._serialized_options = b'\n\x17dev.a2agrpc.registry.v1B\rRegistryProtoP\x01Z"a2agrpc.dev/registry/v1;registryv1'
    _globals['_REGISTEREDAGENT'].fields_by_name['agent_id']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['agent_id']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['base_url']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['base_url']._serialized_options = b'\xe2A\x01\x02'
    _globals['_REGISTEREDAGENT'].fields_by_name['card']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['card']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['card_etag']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['card_etag']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['health']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['health']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['consecutive_failures']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['consecutive_failures']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['last_error']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['last_error']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['register_time']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['register_time']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['card_update_time']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['card_update_time']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['last_seen_time']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['last_seen_time']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTEREDAGENT'].fields_by_name['last_check_time']._loaded_options = None
    _globals['_REGISTEREDAGENT'].fields_by_name['last_check_time']._serialized_options = b'\xe2A\x01\x03'
    _globals['_REGISTERAGENTREQUEST'].fields_by_name['base_url']._loaded_options = None
    _globals['_REGISTERAGENTREQUEST'].fields_by_name['base_url']._serialized_options = b'\xe2A\x01\x02'
    _globals['_REGISTERAGENTRESPONSE'].fields_by_name['agent']._loaded_options = None
    _globals['_REGISTERAGENTRESPONSE'].fields_by_name['agent']._serialized_options = b'\xe2A\x01\x02'
    _globals['_UPDATEAGENTREQUEST'].fields_by_name['agent_id']._loaded_options = None
    _globals['_UPDATEAGENTREQUEST'].fields_by_name['agent_id']._serialized_options = b'\xe2A\x01\x02'
    _globals['_UPDATEAGENTRESPONSE'].fields_by_name['agent']._loaded_options = None
    _globals['_UPDATEAGENTRESPONSE'].fields_by_name['agent']._serialized_options = b'\xe2A\x01\x02'
    _globals['_DEREGISTERAGENTREQUEST'].fields_by_name['agent_id']._loaded_options = None
    _globals['_DEREGISTERAGENTREQUEST'].fields_by_name['agent_id']._serialized_options = b'\xe2A\x01\x02'
    _globals['_GETAGENTREQUEST'].fields_by_name['agent_id']._loaded_options = None
    _globals['_GETAGENTREQUEST'].fields_by_name['agent_id']._serialized_options = b'\xe2A\x01\x02'
    _globals['_GETAGENTRESPONSE'].fields_by_name['agent']._loaded_options = None
    _globals['_GETAGENTRESPONSE'].fields_by_name['agent']._serialized_options = b'\xe2A\x01\x02'
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['agents']._loaded_options = None
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['agents']._serialized_options = b'\xe2A\x01\x02'
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['next_page_token']._loaded_options = None
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['next_page_token']._serialized_options = b'\xe2A\x01\x02'
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['page_size']._loaded_options = None
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['page_size']._serialized_options = b'\xe2A\x01\x02'
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['total_size']._loaded_options = None
    _globals['_LISTAGENTSRESPONSE'].fields_by_name['total_size']._serialized_options = b'\xe2A\x01\x02'
    _globals['_WATCHAGENTSRESPONSE'].fields_by_name['change']._loaded_options = None
    _globals['_WATCHAGENTSRESPONSE'].fields_by_name['change']._serialized_options = b'\xe2A\x01\x02'
    _globals['_WATCHAGENTSRESPONSE'].fields_by_name['agent']._loaded_options = None
    _globals['_WATCHAGENTSRESPONSE'].fields_by_name['agent']._serialized_options = b'\xe2A\x01\x02'
    _globals['_WATCHAGENTSRESPONSE'].fields_by_name['time']._loaded_options = None
    _globals['_WATCHAGENTSRESPONSE'].fields_by_name['time']._serialized_options = b'\xe2A\x01\x02'
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['RegisterAgent']._loaded_options = None
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['RegisterAgent']._serialized_options = b'\x82\xd3\xe4\x93\x02\x0f"\n/v1/agents:\x01*'
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['UpdateAgent']._loaded_options = None
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['UpdateAgent']._serialized_options = b'\x82\xd3\xe4\x93\x02\x1a2\x15/v1/agents/{agent_id}:\x01*'
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['DeregisterAgent']._loaded_options = None
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['DeregisterAgent']._serialized_options = b'\x82\xd3\xe4\x93\x02\x17*\x15/v1/agents/{agent_id}'
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['GetAgent']._loaded_options = None
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['GetAgent']._serialized_options = b'\x82\xd3\xe4\x93\x02\x17\x12\x15/v1/agents/{agent_id}'
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['ListAgents']._loaded_options = None
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['ListAgents']._serialized_options = b'\x82\xd3\xe4\x93\x02\x0c\x12\n/v1/agents'
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['WatchAgents']._loaded_options = None
    _globals['_AGENTREGISTRYSERVICE'].methods_by_name['WatchAgents']._serialized_options = b'\x82\xd3\xe4\x93\x02\x12\x12\x10/v1/agents:watch'
    _globals['_HEALTHSTATE']._serialized_start = 1742
    _globals['_HEALTHSTATE']._serialized_end = 1839
    _globals['_CHANGETYPE']._serialized_start = 1842
    _globals['_CHANGETYPE']._serialized_end = 2024
    _globals['_REGISTEREDAGENT']._serialized_start = 177
    _globals['_REGISTEREDAGENT']._serialized_end = 661
    _globals['_REGISTERAGENTREQUEST']._serialized_start = 663
    _globals['_REGISTERAGENTREQUEST']._serialized_end = 709
    _globals['_REGISTERAGENTRESPONSE']._serialized_start = 711
    _globals['_REGISTERAGENTRESPONSE']._serialized_end = 793
    _globals['_UPDATEAGENTREQUEST']._serialized_start = 795
    _globals['_UPDATEAGENTREQUEST']._serialized_end = 857
    _globals['_UPDATEAGENTRESPONSE']._serialized_start = 859
    _globals['_UPDATEAGENTRESPONSE']._serialized_end = 939
    _globals['_DEREGISTERAGENTREQUEST']._serialized_start = 941
    _globals['_DEREGISTERAGENTREQUEST']._serialized_end = 989
    _globals['_DEREGISTERAGENTRESPONSE']._serialized_start = 991
    _globals['_DEREGISTERAGENTRESPONSE']._serialized_end = 1016
    _globals['_GETAGENTREQUEST']._serialized_start = 1018
    _globals['_GETAGENTREQUEST']._serialized_end = 1059
    _globals['_GETAGENTRESPONSE']._serialized_start = 1061
    _globals['_GETAGENTRESPONSE']._serialized_end = 1138
    _globals['_LISTAGENTSREQUEST']._serialized_start = 1141
    _globals['_LISTAGENTSREQUEST']._serialized_end = 1341
    _globals['_LISTAGENTSRESPONSE']._serialized_start = 1344
    _globals['_LISTAGENTSRESPONSE']._serialized_end = 1506
    _globals['_WATCHAGENTSREQUEST']._serialized_start = 1508
    _globals['_WATCHAGENTSREQUEST']._serialized_end = 1554
    _globals['_WATCHAGENTSRESPONSE']._serialized_start = 1557
    _globals['_WATCHAGENTSRESPONSE']._serialized_end = 1740
    _globals['_AGENTREGISTRYSERVICE']._serialized_start = 2027
    _globals['_AGENTREGISTRYSERVICE']._serialized_end = 2812