"""Client and server classes corresponding to protobuf-defined services."""
import grpc
import warnings
from ....a2agrpc.registry.v1 import registry_pb2 as a2agrpc_dot_registry_dot_v1_dot_registry__pb2
GRPC_GENERATED_VERSION = '1.85.1'
GRPC_VERSION = grpc.__version__
_version_not_supported = False
try:
    from grpc._utilities import first_version_is_lower
    _version_not_supported = first_version_is_lower(GRPC_VERSION, GRPC_GENERATED_VERSION)
except ImportError:
    _version_not_supported = True
if _version_not_supported:
    raise RuntimeError(f'The grpc package installed is at version {GRPC_VERSION},' + ' but the generated code in a2agrpc/registry/v1/registry_pb2_grpc.py depends on' + f' grpcio>={GRPC_GENERATED_VERSION}.' + f' Please upgrade your grpc module to grpcio>={GRPC_GENERATED_VERSION}' + f' or downgrade your generated code using grpcio-tools<={GRPC_VERSION}.')

class AgentRegistryServiceStub:
    """The agent registry.
    """

    def __init__(self, channel):
        """Constructor.

        Args:
            channel: A grpc.Channel.
        """
        self.RegisterAgent = channel.unary_unary('/a2agrpc.registry.v1.AgentRegistryService/RegisterAgent', request_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.RegisterAgentRequest.SerializeToString, response_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.RegisterAgentResponse.FromString, _registered_method=True)
        self.UpdateAgent = channel.unary_unary('/a2agrpc.registry.v1.AgentRegistryService/UpdateAgent', request_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.UpdateAgentRequest.SerializeToString, response_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.UpdateAgentResponse.FromString, _registered_method=True)
        self.DeregisterAgent = channel.unary_unary('/a2agrpc.registry.v1.AgentRegistryService/DeregisterAgent', request_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.DeregisterAgentRequest.SerializeToString, response_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.DeregisterAgentResponse.FromString, _registered_method=True)
        self.GetAgent = channel.unary_unary('/a2agrpc.registry.v1.AgentRegistryService/GetAgent', request_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.GetAgentRequest.SerializeToString, response_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.GetAgentResponse.FromString, _registered_method=True)
        self.ListAgents = channel.unary_unary('/a2agrpc.registry.v1.AgentRegistryService/ListAgents', request_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.ListAgentsRequest.SerializeToString, response_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.ListAgentsResponse.FromString, _registered_method=True)
        self.WatchAgents = channel.unary_stream('/a2agrpc.registry.v1.AgentRegistryService/WatchAgents', request_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.WatchAgentsRequest.SerializeToString, response_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.WatchAgentsResponse.FromString, _registered_method=True)

class AgentRegistryServiceServicer:
    """The agent registry.
    """

    def RegisterAgent(self, request, context):
        """Registers the agent at a base URL: the registry fetches its Agent Card
        from the well-known path and validates it. Registering a base URL again
        refreshes the card and returns the same agent.
        """
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details('Method not implemented!')
        raise NotImplementedError('Method not implemented!')

    def UpdateAgent(self, request, context):
        """Fetches the card again now, at the same or a new base URL.
        """
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details('Method not implemented!')
        raise NotImplementedError('Method not implemented!')

    def DeregisterAgent(self, request, context):
        """Removes an agent from the registry.
        """
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details('Method not implemented!')
        raise NotImplementedError('Method not implemented!')

    def GetAgent(self, request, context):
        """One registered agent with its card and health.
        """
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details('Method not implemented!')
        raise NotImplementedError('Method not implemented!')

    def ListAgents(self, request, context):
        """The registered agents that match every filter given, a page at a time.
        """
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details('Method not implemented!')
        raise NotImplementedError('Method not implemented!')

    def WatchAgents(self, request, context):
        """The registry's changes as they happen: registrations, card changes,
        health changes and removals.
        """
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details('Method not implemented!')
        raise NotImplementedError('Method not implemented!')

def add_AgentRegistryServiceServicer_to_server(servicer, server):
    rpc_method_handlers = {'RegisterAgent': grpc.unary_unary_rpc_method_handler(servicer.RegisterAgent, request_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.RegisterAgentRequest.FromString, response_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.RegisterAgentResponse.SerializeToString), 'UpdateAgent': grpc.unary_unary_rpc_method_handler(servicer.UpdateAgent, request_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.UpdateAgentRequest.FromString, response_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.UpdateAgentResponse.SerializeToString), 'DeregisterAgent': grpc.unary_unary_rpc_method_handler(servicer.DeregisterAgent, request_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.DeregisterAgentRequest.FromString, response_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.DeregisterAgentResponse.SerializeToString), 'GetAgent': grpc.unary_unary_rpc_method_handler(servicer.GetAgent, request_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.GetAgentRequest.FromString, response_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.GetAgentResponse.SerializeToString), 'ListAgents': grpc.unary_unary_rpc_method_handler(servicer.ListAgents, request_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.ListAgentsRequest.FromString, response_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.ListAgentsResponse.SerializeToString), 'WatchAgents': grpc.unary_stream_rpc_method_handler(servicer.WatchAgents, request_deserializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.WatchAgentsRequest.FromString, response_serializer=a2agrpc_dot_registry_dot_v1_dot_registry__pb2.WatchAgentsResponse.SerializeToString)}
    generic_handler = grpc.method_handlers_generic_handler('a2agrpc.registry.v1.AgentRegistryService', rpc_method_handlers)
    server.add_generic_rpc_handlers((generic_handler,))
    server.add_registered_method_handlers('a2agrpc.registry.v1.AgentRegistryService', rpc_method_handlers)

class AgentRegistryService:
    """The agent registry.
    """

    @staticmethod
    def RegisterAgent(request, target, options=(), channel_credentials=None, call_credentials=None, insecure=False, compression=None, wait_for_ready=None, timeout=None, metadata=None):
        return grpc.experimental.unary_unary(request, target, '/a2agrpc.registry.v1.AgentRegistryService/RegisterAgent', a2agrpc_dot_registry_dot_v1_dot_registry__pb2.RegisterAgentRequest.SerializeToString, a2agrpc_dot_registry_dot_v1_dot_registry__pb2.RegisterAgentResponse.FromString, options, channel_credentials, insecure, call_credentials, compression, wait_for_ready, timeout, metadata, _registered_method=True)

    @staticmethod
    def UpdateAgent(request, target, options=(), channel_credentials=None, call_credentials=None, insecure=False, compression=None, wait_for_ready=None, timeout=None, metadata=None):
        return grpc.experimental.unary_unary(request, target, '/a2agrpc.registry.v1.AgentRegistryService/UpdateAgent', a2agrpc_dot_registry_dot_v1_dot_registry__pb2.UpdateAgentRequest.SerializeToString, a2agrpc_dot_registry_dot_v1_dot_registry__pb2.UpdateAgentResponse.FromString, options, channel_credentials, insecure, call_credentials, compression, wait_for_ready, timeout, metadata, _registered_method=True)

    @staticmethod
    def DeregisterAgent(request, target, options=(), channel_credentials=None, call_credentials=None, insecure=False, compression=None, wait_for_ready=None, timeout=None, metadata=None):
        return grpc.experimental.unary_unary(request, target, '/a2agrpc.registry.v1.AgentRegistryService/DeregisterAgent', a2agrpc_dot_registry_dot_v1_dot_registry__pb2.DeregisterAgentRequest.SerializeToString, a2agrpc_dot_registry_dot_v1_dot_registry__pb2.DeregisterAgentResponse.FromString, options, channel_credentials, insecure, call_credentials, compression, wait_for_ready, timeout, metadata, _registered_method=True)

    @staticmethod
    def GetAgent(request, target, options=(), channel_credentials=None, call_credentials=None, insecure=False, compression=None, wait_for_ready=None, timeout=None, metadata=None):
        return grpc.experimental.unary_unary(request, target, '/a2agrpc.registry.v1.AgentRegistryService/GetAgent', a2agrpc_dot_registry_dot_v1_dot_registry__pb2.GetAgentRequest.SerializeToString, a2agrpc_dot_registry_dot_v1_dot_registry__pb2.GetAgentResponse.FromString, options, channel_credentials, insecure, call_credentials, compression, wait_for_ready, timeout, metadata, _registered_method=True)

    @staticmethod
    def ListAgents(request, target, options=(), channel_credentials=None, call_credentials=None, insecure=False, compression=None, wait_for_ready=None, timeout=None, metadata=None):
        return grpc.experimental.unary_unary(request, target, '/a2agrpc.registry.v1.AgentRegistryService/ListAgents', a2agrpc_dot_registry_dot_v1_dot_registry__pb2.ListAgentsRequest.SerializeToString, a2agrpc_dot_registry_dot_v1_dot_registry__pb2.ListAgentsResponse.FromString, options, channel_credentials, insecure, call_credentials, compression, wait_for_ready, timeout, metadata, _registered_method=True)

    @staticmethod
    def WatchAgents(request, target, options=(), channel_credentials=None, call_credentials=None, insecure=False, compression=None, wait_for_ready=None, timeout=None, metadata=None):
        return grpc.experimental.unary_stream(request, target, '/a2agrpc.registry.v1.AgentRegistryService/WatchAgents', a2agrpc_dot_registry_dot_v1_dot_registry__pb2.WatchAgentsRequest.SerializeToString, a2agrpc_dot_registry_dot_v1_dot_registry__pb2.WatchAgentsResponse.FromString, options, channel_credentials, insecure, call_credentials, compression, wait_for_ready, timeout, metadata, _registered_method=True)