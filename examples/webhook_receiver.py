"""A minimal push-notification receiver for the README: prints one line per webhook POST.

Run: ``python3 examples/webhook_receiver.py [PORT]`` (default 9000, on 127.0.0.1). Standard library only.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        kind, body = next(iter(event.items()))  # task, statusUpdate, artifactUpdate or message
        what = body.get("status", {}).get("state") or body.get("artifact", {}).get("name", "")
        token, auth = self.headers.get("X-A2A-Notification-Token"), self.headers.get("Authorization")
        print(f"{self.headers['A2A-Notification-Id']} {kind} {what} (token={token}, auth={auth})", flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # one line per event is enough
        pass


HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 9000), Receiver).serve_forever()
