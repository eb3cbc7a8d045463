#!/usr/bin/env bash
# Builds the wheel and installs it into a fresh virtualenv, as a user would:
#   1. the build backend prints no deprecation warning;
#   2. the wheel holds the a2a_grpc package and nothing else at top level;
#   3. with the core dependencies only, Python code serves the echo agent and
#      a client gets its answer (no click, rich, ruff or unidiff installed),
#      and `a2a-grpc` says which extra the command line needs;
#   4. with the tls extra (not the auth extra, which brings PyJWT too), an Agent
#      Card is signed and verified (cardsign needs cryptography, rfc8785, PyJWT);
#   5. with the cli extra, `a2a-grpc serve --agent echo --store memory` serves;
#   6. the wheel carries the web console's built page, and `a2a-grpc console`
#      from it serves that page (the checkout must have run `make install`).
# Used by .ci/run; needs PyPI (or a pip cache) for the fresh virtualenv.
set -euo pipefail
cd "$(dirname "$0")/.."
PY_BOOT=${PY_BOOT:-python3}
work=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$PY_BOOT" -m pip wheel -q --no-deps -w "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
if grep -i "deprecat" "$work/build.log"; then
  echo "check-wheel: the build backend printed deprecation warnings (above)"; exit 1
fi
wheel=$(ls "$work"/dist/a2a_grpc-*.whl)
tops=$("$PY_BOOT" -c 'import sys, zipfile; print(" ".join(sorted({n.split("/")[0] for n in zipfile.ZipFile(sys.argv[1]).namelist() if not n.split("/")[0].endswith(".dist-info")})))' "$wheel")
[ "$tops" = "a2a_grpc" ] || { echo "check-wheel: top-level entries in the wheel: $tops (want: a2a_grpc)"; exit 1; }
"$PY_BOOT" - "$wheel" <<'PY' || exit 1
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
page = [n for n in names if n.startswith("a2a_grpc/console/static/")]
if "a2a_grpc/console/static/index.html" not in page or not any(n.endswith(".js") for n in page):
    sys.exit("check-wheel: the wheel lacks the console's built page (run make install first): " + ", ".join(page))
PY

"$PY_BOOT" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
cd "$work"  # away from the checkout: only the installed wheel is importable
for absent in click rich ruff unidiff jwt rfc8785; do
  if "$work/venv/bin/python" -c "import $absent" 2>/dev/null; then
    echo "check-wheel: $absent was installed with the core dependencies"; exit 1
  fi
done
"$work/venv/bin/python" - <<'PY'
import asyncio

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.client import A2AClient
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb


async def main() -> None:
    server = A2AServer(EchoAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await server.start()
    try:
        for binding in ("grpc", "jsonrpc", "rest"):
            url = f"http://127.0.0.1:{server.http_port}"
            async with await A2AClient.connect(url, bindings=[binding]) as client:
                task = (await client.send_message("hello from the wheel")).task
            assert task.status.state == pb.TASK_STATE_COMPLETED, task
            assert task.artifacts[0].parts[0].text == "hello from the wheel"
    finally:
        await server.stop(0.5)


asyncio.run(main())
print("check-wheel: the core install serves the echo agent on gRPC, JSON-RPC and HTTP+JSON")
PY
hint=$("$work/venv/bin/a2a-grpc" --help 2>&1 || true)
case "$hint" in
  *"a2a-grpc[cli]"*) ;;
  *) echo "check-wheel: without the cli extra, a2a-grpc said: $hint"; exit 1 ;;
esac

"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel[tls]"
if "$work/venv/bin/python" -c "import tomlkit" 2>/dev/null; then
  echo "check-wheel: the tls extra installed the auth extra's tomlkit"; exit 1
fi
"$work/venv/bin/python" - <<'PY'
from cryptography.hazmat.primitives.asymmetric import ed25519

from a2a_grpc.protocol.cardsign import CardSigner, TrustedKeys, verify_card
from a2a_grpc.types import pb

signer = CardSigner(ed25519.Ed25519PrivateKey.generate())
trusted = TrustedKeys()
trusted.add_jwks(signer.jwks())
card = pb.AgentCard(name="wheel", description="a card", version="1")
assert verify_card(signer.sign(card), trusted, require=True) == 1
print("check-wheel: the tls extra signs and verifies an Agent Card")
PY

"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel[cli]"
port=$("$work/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/venv/bin/a2a-grpc" serve --agent echo --store memory --grpc-port 0 --http-port "$port" >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 50); do
  if "$work/venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/.well-known/agent-card.json', timeout=1)" 2>/dev/null; then
    break
  fi
  sleep 0.2
done
"$work/venv/bin/a2a-grpc" send "http://127.0.0.1:$port" "hello again" | grep -q "hello again" \
  || { cat "$work/serve.log"; echo "check-wheel: a2a-grpc serve from the wheel did not answer"; exit 1; }
echo "check-wheel: a2a-grpc serve (cli extra) serves the echo agent"

"$work/venv/bin/a2a-grpc" console "http://127.0.0.1:$port" --port 0 >"$work/console.log" 2>&1 &
console_pid=$!
trap 'kill "${server_pid:-0}" "${console_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 50); do
  console_url=$(sed -n 's/^console for .*: \(http:[^ ]*\)$/\1/p' "$work/console.log")
  [ -n "$console_url" ] && break
  sleep 0.2
done
"$work/venv/bin/python" -c "import sys, urllib.request; page = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode(); sys.exit(0 if './assets/' in page else 'no page')" "$console_url" \
  || { cat "$work/console.log"; echo "check-wheel: a2a-grpc console from the wheel did not serve its page"; exit 1; }
echo "check-wheel: a2a-grpc console (cli extra) serves the web console"
