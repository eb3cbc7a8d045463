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
