"""Push notifications: the outbox dispatcher and the SSRF guard (spec §4.3, §13.2).

``PushDispatcher(store, allow=[...])`` implements the request handler's
``PushSink``: it validates configs at create time (``check_config``) and
delivers the store's push outbox in order, with retries, to webhooks that pass
the SSRF guard (:mod:`a2a_grpc.push._ssrf`).
"""

from a2a_grpc.push._dispatcher import CONTENT_TYPE, NOTIFICATION_ID_HEADER, TOKEN_HEADER, PushDispatcher
from a2a_grpc.push._ssrf import AddressPolicy, BlockedAddressError, UnsafeURLError

__all__ = [
    "CONTENT_TYPE",
    "NOTIFICATION_ID_HEADER",
    "TOKEN_HEADER",
    "AddressPolicy",
    "BlockedAddressError",
    "PushDispatcher",
    "UnsafeURLError",
]
