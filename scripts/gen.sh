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
"$PY" -m grpc_tools.protoc -Iproto -I"$site" \
  --python_out=a2a_grpc/gen --pyi_out=a2a_grpc/gen \
  lf/a2a/v1/a2a.proto
"$PY" -m grpc_tools.protoc -Ia2a_grpc/gen=proto -I"$site" \
  --grpc_python_out=. \
  a2a_grpc/gen/lf/a2a/v1/a2a.proto
for d in a2a_grpc/gen a2a_grpc/gen/lf a2a_grpc/gen/lf/a2a a2a_grpc/gen/lf/a2a/v1; do
  printf '"""Generated from proto/ by scripts/gen.sh; do not edit."""\n' > "$d/__init__.py"
done
