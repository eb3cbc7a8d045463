#!/usr/bin/env bash
# Checks proto/ for breaking changes (buf's FILE rules) against a git revision
# (default: main). The revision's proto/ and buf.yaml are built into an image
# together with the same .buf-deps/ the working tree uses, and so is the
# working tree's proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
against=${1:-main}
buf="$PWD/node_modules/.bin/buf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old" "$tmp/new"
git archive "$against" proto buf.yaml | tar -x -C "$tmp/old"
cp -r proto buf.yaml "$tmp/new/"
for side in old new; do
  cp -r .buf-deps "$tmp/$side/"
  (cd "$tmp/$side" && "$buf" build --exclude-source-info -o ../$side.binpb)
done
"$buf" breaking "$tmp/new.binpb" --against "$tmp/old.binpb"
echo "no breaking change against $against"
