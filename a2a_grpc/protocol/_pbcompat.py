"""protobuf's private names, in one place.

The ProtoJSON codec (:mod:`a2a_grpc.protocol.protojson`) is held to protobuf's
own ``json_format`` and takes a few of its rules from the private helpers that
implement them, rather than copying them (a copy would drift from the
reference). Nothing else in ``a2a_grpc`` reaches into protobuf's internals;
each name it uses is here, with what it is for:

* :data:`UNPAIRED_SURROGATE`: the strings json_format refuses (a lone UTF-16
  surrogate);
* :data:`EXTENSION_KEY`: the object keys json_format reads as extensions
  (``[pkg.ext]``);
* :func:`convert_integer`, :func:`convert_float`: json_format's rules for
  numbers spelled other than plainly (``"7"``, ``7.0``, ``"NaN"``), with its
  range checks and errors;
* :func:`shortest_float`: the shortest text that reads back as the same
  ``float`` (32-bit) value, as json_format prints it;
* :func:`json_enum_option`: an enum value's custom JSON name option, as
  json_format's printer reads it (from protobuf 7.36 on; before, json_format
  knows no such option and neither does the codec: None).

Checked with protobuf 7.35.1 and 7.36.2, both with the upb backend (what the
wheels ship) and with the pure-Python one
(``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python``).
``tests/unit/test_pbcompat.py`` fails, naming the name, when an upgrade
removes or changes one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format
from google.protobuf.internal import type_checkers

__all__ = [
    "EXTENSION_KEY",
    "UNPAIRED_SURROGATE",
    "convert_float",
    "convert_integer",
    "json_enum_option",
    "shortest_float",
]

#: Strings json_format refuses: a lone UTF-16 surrogate (Python does not
#: refuse them reliably by itself).
UNPAIRED_SURROGATE: re.Pattern[str] = json_format._UNPAIRED_SURROGATE_PATTERN  # type: ignore[attr-defined]
#: Object keys json_format reads as extensions (and refuses on a type without any).
EXTENSION_KEY: re.Pattern[str] = json_format._VALID_EXTENSION_NAME  # type: ignore[attr-defined]
#: ``(JSON value) -> int``: json_format's integer rule; raises its ParseError.
convert_integer: Callable[[Any], int] = json_format._ConvertInteger  # type: ignore[attr-defined]
#: ``(JSON value, FieldDescriptor) -> float``: json_format's float rule (range
#: checks for 32-bit fields); raises its ParseError.
convert_float: Callable[[Any, Any], float] = json_format._ConvertFloat  # type: ignore[attr-defined]
#: ``(float) -> float``: the shortest value that is the same 32-bit float.
shortest_float: Callable[[float], float] = type_checkers.ToShortestFloat

# json_format's printer, only to read custom enum names the way it does.
_PRINTER = json_format._Printer()  # type: ignore[attr-defined]
_ENUM_OPTION: Callable[[Any], Any] | None = getattr(_PRINTER, "_GetJsonEnumValueOption", None)


def json_enum_option(value: Any) -> Any | None:
    """The custom JSON name option of an EnumValueDescriptor (an object with
    ``.string``), or None: without one, or on a protobuf whose json_format
    does not know that option."""
    return _ENUM_OPTION(value) if _ENUM_OPTION is not None else None
