"""``a2a-grpc auth``: manage the API keys of an auth configuration file.

``new-key`` adds a key to the TOML file (creating the file, with an ``apiKey``
scheme, when it does not exist) and prints its secret once, as the last line
of stdout — like ``htpasswd``, only the SHA-256 digest is stored.
``revoke-key`` marks a key revoked. Both keep the file's comments and layout
(tomlkit) and refuse to write a file the server would not load.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

__all__ = ["auth"]

_NEW_FILE = """\
# a2a-grpc auth configuration (docs/auth.md). Serve it with: a2a-grpc serve --auth {name}
# Keys are stored as SHA-256 digests; add one with: a2a-grpc auth new-key --config {name} --subject NAME

[schemes.apiKey]
type = "apiKey"
header = "X-API-Key"
"""


def _read(path: Path) -> Any:
    import tomlkit

    if not path.exists():
        return tomlkit.parse(_NEW_FILE.format(name=path.name))
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:  # tomlkit's parse errors have no common public base
        raise click.ClickException(f"{path}: not valid TOML: {exc}") from None


def _write(path: Path, doc: Any) -> None:
    """Checks that the server would load ``doc``, then replaces ``path`` atomically (mode 0600)."""
    import tomlkit

    from a2a_grpc.auth._base import AuthConfigError
    from a2a_grpc.auth._policy import policy_from_mapping

    try:
        policy_from_mapping(doc.unwrap())
    except AuthConfigError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    text = tomlkit.dumps(doc)
    fd, tmp = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _api_key_scheme(doc: Any, scheme: str | None) -> str:
    schemes = doc.get("schemes", {})
    names = [n for n, t in schemes.items() if isinstance(t, dict) and t.get("type") == "apiKey"]
    if scheme is not None:
        if scheme not in names:
            raise click.ClickException(f"the file has no apiKey scheme {scheme!r} (apiKey schemes: {names})")
        return scheme
    if len(names) != 1:
        raise click.ClickException(f"the file has {len(names)} apiKey schemes; name one with --scheme")
    return names[0]


@click.group()
def auth() -> None:
    """Manage the API keys of an auth configuration (see docs/auth.md)."""


@auth.command("new-key")
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--subject", required=True, help="Who the key stands for (becomes the task owner).")
@click.option("--scope", "scopes", multiple=True, help="A scope the key grants (repeatable).")
@click.option("--tenant", default=None, help="Bind the key to this tenant.")
@click.option(
    "--expires",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
    default=None,
    help="Expiry (UTC), e.g. 2027-01-31.",
)
@click.option("--scheme", default=None, help="The apiKey scheme to add to (default: the only one).")
@click.option("--note", default=None, help="A free-text note kept with the key.")
def new_key(
    config: Path,
    subject: str,
    scopes: tuple[str, ...],
    tenant: str | None,
    expires: datetime | None,
    scheme: str | None,
    note: str | None,
) -> None:
    """Add an API key to CONFIG and print its secret once (the last line)."""
    import tomlkit

    from a2a_grpc.auth._apikeys import digest, new_secret

    doc = _read(config)
    name = _api_key_scheme(doc, scheme)
    table = doc["schemes"][name]
    key_id, secret = new_secret()
    entry = tomlkit.table()
    entry["id"] = key_id
    entry["subject"] = subject
    if scopes:
        entry["scopes"] = list(scopes)
    if tenant is not None:
        entry["tenant"] = tenant
    if expires is not None:
        entry["expires"] = expires.replace(tzinfo=UTC)
    if note:
        entry["note"] = note
    entry["created"] = datetime.now(UTC).replace(microsecond=0)
    entry["hash"] = digest(secret)
    if "keys" not in table:
        table["keys"] = tomlkit.aot()
    table["keys"].append(entry)
    _write(config, doc)
    header = table.get("header", "X-API-Key")
    click.echo(f"added key {key_id} for {subject} to {config} (scheme {name}, header {header})")
    click.echo("the secret is shown only now; store it safely:")
    click.echo(secret)


@auth.command("revoke-key")
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.argument("key_id")
def revoke_key(config: Path, key_id: str) -> None:
    """Mark the key KEY_ID revoked in CONFIG (restart the server to apply)."""
    if not config.is_file():
        raise click.ClickException(f"{config}: no such file")
    doc = _read(config)
    for table in doc.get("schemes", {}).values():
        for entry in table.get("keys", []) if isinstance(table, dict) else []:
            if entry.get("id") == key_id:
                entry["revoked"] = True
                _write(config, doc)
                click.echo(f"revoked key {key_id} ({entry.get('subject')})")
                return
    raise click.ClickException(f"no key {key_id} in {config}")
