#!/usr/bin/env bash
# Regenerates a2a_grpc/gen/ from proto/ with grpcio-tools, in two passes:
#
# 1. The messages (a2a_pb2.py/.pyi) are compiled from proto/ itself, so the
#    descriptor is registered under its canonical file name
#    lf/a2a/v1/a2a.proto — what reflection serves and what stubs a team
#    generates from proto/ register too (identical files share one entry in
#    the default descriptor pool instead of clashing).
# 2. The gRPC stubs (a2a_pb2_grpc.py) only import the message module; they
#    are compiled with proto/ mapped to the virtual path a2a_grpc/gen
#    (protoc's -I virtual=real form), so that import reads
#    a2a_grpc.gen.lf.a2a.v1.a2a_pb2. No generated file is edited afterwards.
#
# The google/api/*.proto imports come from the installed
# googleapis-common-protos package.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
site=$("$PY" -c 'import google.api.annotations_pb2 as m, pathlib; print(pathlib.Path(m.__file__).parents[2])')
rm -rf a2a_grpc/gen
mkdir -p a2a_grpc/gen
# Each schema: lf/a2a/v1 (A2A v1.0, canonical) and a2a/v1 (A2A v0.3, for older clients).
schemas=(lf/a2a/v1/a2a.proto a2a/v1/a2a.proto)
"$PY" -m grpc_tools.protoc -Iproto -I"$site" \
  --python_out=a2a_grpc/gen --pyi_out=a2a_grpc/gen \
  "${schemas[@]}"
"$PY" -m grpc_tools.protoc -Ia2a_grpc/gen=proto -I"$site" \
  --grpc_python_out=. \
  "${schemas[@]/#/a2a_grpc/gen/}"
find a2a_grpc/gen -type d | while read -r d; do
  printf '"""Generated from proto/ by scripts/gen.sh; do not edit."""\n' > "$d/__init__.py"
done
# 3. The agent registry (proto/a2agrpc/registry/v1/registry.proto) imports
#    lf/a2a/v1/a2a.proto, so protoc writes `from lf.a2a.v1 import a2a_pb2`;
#    protoletariat (protol) rewrites the generated imports to relative ones
#    that resolve inside a2a_grpc.gen. Its metadata pins protobuf<6 but it
#    runs with ours, hence --no-deps.
"$PY" -m pip install -q --no-deps 'protoletariat==3.3.10'
# Generated into a scratch directory first so that protol rewrites only
# the registry's modules; google/* imports stay absolute.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m grpc_tools.protoc -Iproto -I"$site" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  a2agrpc/registry/v1/registry.proto
"$PY" -m protoletariat --python-out "$tmp" --in-place --dont-create-package \
  --exclude-google-imports --exclude-imports-glob 'google/*' \
  protoc --protoc-path "$PY -m grpc_tools.protoc" --proto-path proto --proto-path "$site" \
  a2agrpc/registry/v1/registry.proto
mv "$tmp/a2agrpc" a2a_grpc/gen/a2agrpc
for d in a2a_grpc/gen/a2agrpc a2a_grpc/gen/a2agrpc/registry a2a_grpc/gen/a2agrpc/registry/v1; do
  printf '"""Generated from proto/ by scripts/gen.sh; do not edit."""\n' > "$d/__init__.py"
done
