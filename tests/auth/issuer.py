"""An OpenID Connect issuer on 127.0.0.1 for the auth tests (aiohttp + cryptography).

It serves a discovery document and a JWKS, counts JWKS downloads, can add a
new signing key (rotation) and can go down (HTTP 503). :meth:`Issuer.mint`
signs tokens with any of its keys; tests build the bad ones by hand.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

AUDIENCE = "a2a-test-agent"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        data = json.loads(algorithm.to_jwk(self.private.public_key()))
        data.update({"kid": self.kid, "alg": self.alg, "use": "sig"})
        return data

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


@dataclass
class Issuer:
    keys: list[SigningKey] = field(default_factory=lambda: [rsa_key("k1"), ec_key("k2")])
    jwks_fetches: int = 0
    down: bool = False
    base_url: str = ""
    runner: web.AppRunner | None = None

    @property
    def issuer(self) -> str:
        return self.base_url + "/"

    @property
    def discovery_url(self) -> str:
        return self.base_url + "/.well-known/openid-configuration"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/.well-known/openid-configuration", self._discovery)
        app.router.add_get("/jwks", self._jwks)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _discovery(self, request: web.Request) -> web.Response:
        if self.down:
            return web.Response(status=503)
        return web.json_response({"issuer": self.issuer, "jwks_uri": self.base_url + "/jwks"})

    async def _jwks(self, request: web.Request) -> web.Response:
        if self.down:
            return web.Response(status=503)
        self.jwks_fetches += 1
        return web.json_response({"keys": [k.jwk() for k in self.keys]})

    def mint(self, key: SigningKey | None = None, **claims: Any) -> str:
        """A token signed by ``key`` (default: the first key) with sensible
        claims (``iss``, ``aud``, ``sub``, ``exp`` in 5 minutes) overridden by ``claims``."""
        key = key or self.keys[0]
        now = int(time.time())
        body = {"iss": self.issuer, "aud": AUDIENCE, "sub": "carol", "iat": now, "exp": now + 300}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid})

    def unsigned(self, **claims: Any) -> str:
        """``alg: none``: a header and claims, no signature."""
        now = int(time.time())
        body = {"iss": self.issuer, "aud": AUDIENCE, "sub": "mallory", "exp": now + 300, **claims}
        header = {"alg": "none", "typ": "JWT", "kid": self.keys[0].kid}
        return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}."

    def hs256_with_public_key(self) -> str:
        """HS256 "signed" with the RSA public key as the HMAC secret (the
        classic RS/HS confusion attack); signed by hand, as PyJWT refuses to."""
        import hashlib
        import hmac

        now = int(time.time())
        header = {"alg": "HS256", "typ": "JWT", "kid": self.keys[0].kid}
        body = {"iss": self.issuer, "aud": AUDIENCE, "sub": "mallory", "exp": now + 300}
        signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}"
        mac = hmac.new(self.keys[0].public_pem(), signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{b64(mac)}"
