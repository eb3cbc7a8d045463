#!/usr/bin/env bash
# Writes the google/api/*.proto files that proto/ imports, taken from the
# installed googleapis-common-protos package, into .buf-deps/ for buf (not
# committed): `a2a-grpc proto --imports-only`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
rm -rf .buf-deps
"$PY" -m a2a_grpc.cli proto --imports-only --out .buf-deps >/dev/null
