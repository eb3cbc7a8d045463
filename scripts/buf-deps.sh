#!/usr/bin/env bash
# Copies the google/api/*.proto files that proto/ imports from the installed
# googleapis-common-protos package into .buf-deps/ for buf (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
site=$("$PY" -c 'import google.api.annotations_pb2 as m, pathlib; print(pathlib.Path(m.__file__).parents[2])')
rm -rf .buf-deps
mkdir -p .buf-deps/google/api
for f in annotations http client field_behavior launch_stage; do
  cp "$site/google/api/$f.proto" .buf-deps/google/api/
done
