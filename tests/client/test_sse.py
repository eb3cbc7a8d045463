"""SSE decoding (WHATWG event-stream rules) used by both HTTP bindings."""

from __future__ import annotations

from a2a_grpc.client._sse import SSEDecoder, SSEEvent, iter_sse


def _feed_all(chunks: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    out.extend(decoder.close())
    return out


def test_events_split_anywhere_give_the_same_result() -> None:
    stream = (
        'data: {"a": 1}\n\n'
        ": keep-alive comment\n\n"
        "event: error\ndata: line1\ndata: line2\nid: 7\n\n"
        'data: {"é": "ü"}\r\n\r\n'
        "data:no-space\r\rdata: trailing-without-blank-line"
    ).encode()
    whole = _feed_all([stream])
    assert whole == [
        SSEEvent('{"a": 1}'),
        SSEEvent("line1\nline2", event="error", id="7"),
        SSEEvent('{"é": "ü"}', id="7"),
        SSEEvent("no-space", id="7"),
    ]
    # every split point, including inside a UTF-8 sequence and between CR and LF
    for cut in range(1, len(stream)):
        assert _feed_all([stream[:cut], stream[cut:]]) == whole, cut
    assert _feed_all([bytes([b]) for b in stream]) == whole


def test_event_without_data_is_not_dispatched() -> None:
    assert _feed_all([b"event: ping\n\nid: 3\n\n"]) == []


async def test_iter_sse_over_an_async_byte_stream() -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        yield b"data: 1\n"
        yield b"\ndata: 2\n\n"

    assert [e.data async for e in iter_sse(chunks())] == ["1", "2"]


def test_large_event_has_no_line_limit() -> None:
    big = "x" * 1_000_000
    assert _feed_all([f"data: {big}\n\n".encode()]) == [SSEEvent(big)]
