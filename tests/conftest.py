"""Settings for the whole test session."""

from __future__ import annotations

import os

# Strict ProtoJSON: a compiled encoder or decoder that hands the reference
# (json_format) a value it should have taken itself raises CompilerGap instead
# of hiding the gap. The variable reaches servers started in subprocesses too.
os.environ["A2A_PROTOJSON_STRICT"] = "1"

from a2a_grpc.protocol import protojson

protojson.set_strict(True)
