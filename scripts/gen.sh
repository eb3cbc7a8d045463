#!/usr/bin/env bash
# Regenerates a2a_grpc/gen/ from proto/ with grpcio-tools.
#
# The proto directory is mapped to the virtual path a2a_grpc/gen (protoc's
# -I virtual=real form), so the generated modules import as
# a2a_grpc.gen.lf.a2a.v1.a2a_pb2 / a2a_pb2_grpc with no post-processing.
# The google/api/*.proto imports come from the installed
# googleapis-common-protos package.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
site=$("$PY" -c 'import google.api.annotations_pb2 as m, pathlib; print(pathlib.Path(m.__file__).parents[2])')
rm -rf a2a_grpc/gen
mkdir -p a2a_grpc/gen
"$PY" -m grpc_tools.protoc \
  -Ia2a_grpc/gen=proto -I"$site" \
  --python_out=. --pyi_out=. --grpc_python_out=. \
  a2a_grpc/gen/lf/a2a/v1/a2a.proto
for d in a2a_grpc/gen a2a_grpc/gen/lf a2a_grpc/gen/lf/a2a a2a_grpc/gen/lf/a2a/v1; do
  printf '"""Generated from proto/ by scripts/gen.sh; do not edit."""\n' > "$d/__init__.py"
done
