"""A small Server-Sent Events reader (WHATWG HTML "event stream" parsing).

Both HTTP bindings stream with SSE (digest §4.6, §5.5): each event's ``data``
holds one JSON document (a JSON-RPC response, or a ProtoJSON
``StreamResponse``). The decoder is incremental and has no line-length limit,
so a large Task snapshot in one event is fine.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent", "iter_sse"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: ``event`` type ("message" when absent), the
    ``data`` lines joined with "\\n", and the last ``id`` seen."""

    data: str
    event: str = "message"
    id: str = ""


class SSEDecoder:
    """Feed bytes in, get complete events out.

    Lines end with LF, CRLF or CR; ``data`` lines accumulate until a blank
    line dispatches the event; lines starting with ":" are comments
    (keep-alives); unknown fields are ignored; an event with no data line is
    not dispatched (WHATWG rules).
    """

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[str] = []
        self._event = ""
        self._last_id = ""
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decodes ``chunk`` (any size, may split lines or UTF-8 sequences)
        and returns the events it completed."""
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._pending_cr = False
        self._buf += chunk
        out: list[SSEEvent] = []
        while True:
            idx_n = self._buf.find(b"\n")
            idx_r = self._buf.find(b"\r")
            if idx_n < 0 and idx_r < 0:
                break
            if idx_r >= 0 and (idx_n < 0 or idx_r < idx_n):
                line = self._buf[:idx_r]
                if idx_r + 1 < len(self._buf):
                    skip = 2 if self._buf[idx_r + 1 : idx_r + 2] == b"\n" else 1
                else:
                    skip = 1
                    self._pending_cr = True
                self._buf = self._buf[idx_r + skip :]
            else:
                line = self._buf[:idx_n]
                self._buf = self._buf[idx_n + 1 :]
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                out.append(event)
        return out

    def close(self) -> list[SSEEvent]:
        """Ends the stream. An event not terminated by a blank line is
        discarded, as the WHATWG algorithm says."""
        self._buf = b""
        self._data = []
        self._event = ""
        return []

    def _line(self, line: str) -> SSEEvent | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = SSEEvent(data="\n".join(self._data), event=self._event or "message", id=self._last_id)
            self._data = []
            self._event = ""
            return event
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        return None


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """The events of a byte stream, e.g. ``response.content.iter_any()``."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.close():
        yield event
