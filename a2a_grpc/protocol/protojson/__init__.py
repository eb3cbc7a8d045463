"""Every ProtoJSON setting of a2a-grpc, in one place.

The gateway (JSON-RPC, HTTP+JSON, the Agent Card), the client, the CLI, push
delivery, card signing and the agents all encode and decode A2A messages
through this package: it is the one door to protobuf's ``json_format``, which
nothing else in ``a2a_grpc`` imports but :mod:`a2a_grpc.protocol._pbcompat`
(the few private helpers of json_format the codec takes its rules from). The
tests use json_format as the independent oracle.

Output (spec §5.5, §5.6.1, §5.7; design.md "empty-but-required JSON"):

* lowerCamelCase ``json_name`` keys, enum values by name, ``bytes`` as base64;
* ``google.protobuf.Timestamp`` as UTC ``Z`` with exactly three fractional
  digits (``2026-11-30T12:00:00.000Z``);
* fields marked ``(google.api.field_behavior) = REQUIRED`` that have no
  presence (strings, numbers, repeated, maps) are always written, even when they
  hold their default — so ``ListTasksResponse`` always carries ``tasks: []``,
  ``nextPageToken: ""``, ``pageSize`` and ``totalSize``. Other default-valued
  fields stay omitted (no global ``always_print_fields_with_no_presence``);
* raw UTF-8 (non-ASCII is not escaped) except U+2028/U+2029, which are escaped
  so that a document is always safe inside one SSE ``data:`` line.

Input: strict JSON (no NaN/Infinity), unknown fields ignored (spec §5.7), enum
names the enum does not have refused. Failures raise
:class:`~a2a_grpc.errors.A2AError`: PARSE_ERROR for bytes that are not JSON,
INVALID_PARAMS (with a ``google.rpc.BadRequest`` field violation) for JSON that
does not fit the message. A value ProtoJSON cannot write (a Timestamp outside
years 1-9999) raises :data:`EncodeError`.

Modules: :mod:`.plan` (what is known per message type), :mod:`.encode` and
:mod:`.decode` (compiled once per type from its descriptors), and
:mod:`.reference` (protobuf's ``json_format``, the reference they are held to,
and the strict mode in which a hand-over to it that is not by design raises).
"""

from a2a_grpc.protocol.protojson._decode import loads, parse
from a2a_grpc.protocol.protojson._encode import dumps, json_value, to_dict, to_json
from a2a_grpc.protocol.protojson._plan import fields_by_any_name, message_class
from a2a_grpc.protocol.protojson._reference import (
    CompilerGap,
    EncodeError,
    parse_reference,
    set_strict,
    strict,
    to_dict_reference,
)

__all__ = [
    "CompilerGap",
    "EncodeError",
    "dumps",
    "fields_by_any_name",
    "json_value",
    "loads",
    "message_class",
    "parse",
    "parse_reference",
    "set_strict",
    "strict",
    "to_dict",
    "to_dict_reference",
    "to_json",
]
