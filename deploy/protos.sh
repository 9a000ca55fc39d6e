#!/usr/bin/env bash
# Writes each game's .proto (and games.proto) from its dataclasses, then Python code
# (messages, gRPC stubs, mypy stubs) beside the .proto files, and the web client's
# TypeScript (protoc-gen-es, pinned in web/package-lock.json) in web/src/gen.
#   protos.sh protos   regenerate in place
#   protos.sh check    regenerate into a scratch folder and fail if anything checked in differs
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
es=web/node_modules/.bin/protoc-gen-es
gen() {
  local src=$1 out=$2
  mkdir -p "$out"
  "$py" -m grpc_tools.protoc -I "$src" \
    --python_out="$out" --grpc_python_out="$out" \
    --mypy_out="$out" --mypy_grpc_out="$out" \
    --plugin=protoc-gen-mypy=.venv/bin/protoc-gen-mypy \
    --plugin=protoc-gen-mypy_grpc=.venv/bin/protoc-gen-mypy_grpc \
    "$src"/tabletop/v1/*.proto 2> >(grep -v "^Writing mypy" >&2) >/dev/null
}
gen_ts() {
  local src=$1 out=$2
  [ -x "$es" ] || { echo "no $es: run make web-deps (npm ci in web/)" >&2; exit 2; }
  mkdir -p "$out"
  "$py" -m grpc_tools.protoc -I "$src" --plugin=protoc-gen-es="$es" \
    --es_out="$out" --es_opt=target=ts,import_extension=none "$src"/tabletop/v1/*.proto
}
case "${1:-protos}" in
  protos)
    "$py" -m services.adapters.protogen --out protos/tabletop/v1
    gen protos protos
    rm -rf web/src/gen
    gen_ts protos web/src/gen ;;
  check)
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/src/tabletop/v1"
    cp protos/tabletop/v1/*.proto "$tmp/src/tabletop/v1/"
    "$py" -m services.adapters.protogen --out "$tmp/src/tabletop/v1"
    gen "$tmp/src" "$tmp/out"
    status=0
    for f in "$tmp"/src/tabletop/v1/*.proto "$tmp"/src/tabletop/v1/*.yaml "$tmp"/out/tabletop/v1/*; do
      name=tabletop/v1/$(basename "$f")
      if ! cmp -s "$f" "protos/$name"; then echo "out of date: protos/$name (run make protos)"; status=1; fi
    done
    for f in protos/tabletop/v1/*_pb2*.py*; do
      [ -e "$tmp/out/tabletop/v1/$(basename "$f")" ] || { echo "stale: $f"; status=1; }
    done
    gen_ts "$tmp/src" "$tmp/ts"
    if ! diff -r -q "$tmp/ts" web/src/gen >/dev/null; then
      diff -r -q "$tmp/ts" web/src/gen | sed 's/^/out of date (run make protos): /'; status=1
    fi
    [ $status -eq 0 ] && echo "generated protos and code match the games"
    exit $status ;;
  *) echo "usage: $0 protos|check" >&2; exit 2 ;;
esac
