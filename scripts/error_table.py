"""Prints the error model as a Markdown table, generated from ``a2a_grpc.errors.ErrorCode``.

One row per member: the ``google.rpc.ErrorInfo`` reason, the gRPC status code, the HTTP status of
the HTTP+JSON binding, the JSON-RPC ``error.code`` and the default message. ``docs/errors.md``
holds this output between its ``error-table`` markers; ``tests/examples/test_docs.py`` checks
that it is current. Run: ``.venv/bin/python scripts/error_table.py``.
"""

from __future__ import annotations

from http import HTTPStatus

from a2a_grpc.errors import ErrorCode


def render() -> str:
    """The Markdown table (header, separator, one row per ErrorCode), ending in a newline."""
    rows = [
        "| A2A error (`ErrorInfo.reason`) | gRPC status | HTTP status | JSON-RPC code | default message |",
        "|---|---|---|---|---|",
    ]
    for code in ErrorCode:
        http = f"{code.http_status} {HTTPStatus(code.http_status).phrase}"
        rows.append(
            f"| `{code.reason}` | `{code.grpc_code.name}` | {http} | {code.jsonrpc_code} | {code.default_message} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(render(), end="")
