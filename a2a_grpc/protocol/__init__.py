"""L1: the pure rules and codecs of A2A — no I/O, no asyncio."""

__all__: list[str] = []
