"""aiohttp gateway: JSON-RPC 2.0 and HTTP+JSON (REST) onto the same A2A servicer."""
