"""A small webhook receiver for trying push notifications (spec §4.3.3).

    python -m a2a_grpc.push.receiver [--host 127.0.0.1] [--port 9000] [--token T] [--auth 'Bearer X']

It accepts ``POST`` on any path, checks ``X-A2A-Notification-Token`` and
``Authorization`` when ``--token`` / ``--auth`` are given (401 otherwise),
drops duplicates by ``A2A-Notification-Id`` (receivers should be idempotent:
delivery is at-least-once), prints one line per notification — the id, the
event kind, the task id and state — and answers 200.
"""

from __future__ import annotations

import argparse
import hmac
import json
import sys
from collections import OrderedDict
from typing import TextIO

from aiohttp import web

from a2a_grpc.push._dispatcher import NOTIFICATION_ID_HEADER, TOKEN_HEADER

__all__ = ["make_app", "summary"]

_REMEMBERED_IDS = 10_000


def summary(body: dict[str, object]) -> str:
    """``kind task=<id> [state=<state>] [artifact=<name>]`` for a StreamResponse JSON."""
    if not body:
        return "empty"
    kind, event = next(iter(body.items()))
    if not isinstance(event, dict):
        return kind
    parts = [kind]
    task_id = event.get("taskId") or event.get("id") or ""
    parts.append(f"task={task_id}")
    status = event.get("status")
    if isinstance(status, dict) and status.get("state"):
        parts.append(f"state={status['state']}")
    artifact = event.get("artifact")
    if isinstance(artifact, dict):
        parts.append(f"artifact={artifact.get('name') or artifact.get('artifactId', '')}")
    return " ".join(parts)


def make_app(
    token: str | None = None, auth: str | None = None, *, out: TextIO | None = None
) -> web.Application:
    """The receiver as an aiohttp application (``out``: a text stream, default stdout)."""
    stream = out or sys.stdout
    seen: OrderedDict[str, None] = OrderedDict()

    def matches(expected: str | None, got: str | None) -> bool:
        return expected is None or (got is not None and hmac.compare_digest(expected.encode(), got.encode()))

    async def handle(request: web.Request) -> web.Response:
        if not matches(token, request.headers.get(TOKEN_HEADER)) or not matches(
            auth, request.headers.get("Authorization")
        ):
            return web.json_response({"error": "bad notification token or credentials"}, status=401)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        event_id = request.headers.get(NOTIFICATION_ID_HEADER, "")
        if event_id and event_id in seen:
            print(f"{event_id} duplicate (ignored)", file=stream, flush=True)
            return web.Response(status=200)
        if event_id:
            seen[event_id] = None
            while len(seen) > _REMEMBERED_IDS:
                seen.popitem(last=False)
        print(f"{event_id} {summary(body)}", file=stream, flush=True)
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m a2a_grpc.push.receiver", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--token", help="expected X-A2A-Notification-Token")
    parser.add_argument("--auth", help="expected Authorization header, e.g. 'Bearer s3cret'")
    args = parser.parse_args(argv)
    web.run_app(make_app(args.token, args.auth), host=args.host, port=args.port, print=None)


if __name__ == "__main__":
    main()
