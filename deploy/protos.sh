#!/usr/bin/env bash
# Generates Python code (messages, gRPC stubs, mypy stubs) beside the .proto files, and the
# web client's TypeScript (protoc-gen-es, pinned in web/package-lock.json) in web/src/gen.
#   protos.sh protos   regenerate in place
#   protos.sh check    regenerate into a scratch folder and fail if the checked-in code differs
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
gen() {
  local out=$1
  mkdir -p "$out"
  "$py" -m grpc_tools.protoc -I protos \
    --python_out="$out" --grpc_python_out="$out" \
    --mypy_out="$out" --mypy_grpc_out="$out" \
    --plugin=protoc-gen-mypy=.venv/bin/protoc-gen-mypy \
    --plugin=protoc-gen-mypy_grpc=.venv/bin/protoc-gen-mypy_grpc \
    protos/tabletop/v1/*.proto 2> >(grep -v "^Writing mypy" >&2) >/dev/null
}
es=web/node_modules/.bin/protoc-gen-es
gen_ts() {
  local out=$1
  [ -x "$es" ] || { echo "no $es: run make web-deps (npm ci in web/)" >&2; exit 2; }
  mkdir -p "$out"
  "$py" -m grpc_tools.protoc -I protos --plugin=protoc-gen-es="$es" \
    --es_out="$out" --es_opt=target=ts,import_extension=none protos/tabletop/v1/*.proto
}
case "${1:-protos}" in
  protos) gen protos; rm -rf web/src/gen; gen_ts web/src/gen ;;
  check)
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    gen "$tmp"
    status=0
    for f in "$tmp"/tabletop/v1/*; do
      name=tabletop/v1/$(basename "$f")
      if ! cmp -s "$f" "protos/$name"; then echo "out of date: protos/$name (run make protos)"; status=1; fi
    done
    for f in protos/tabletop/v1/*_pb2*.py*; do
      [ -e "$tmp/tabletop/v1/$(basename "$f")" ] || { echo "stale: $f"; status=1; }
    done
    gen_ts "$tmp/ts"
    if ! diff -r -q "$tmp/ts" web/src/gen >/dev/null; then
      diff -r -q "$tmp/ts" web/src/gen | sed 's/^/out of date (run make protos): /'; status=1
    fi
    [ $status -eq 0 ] && echo "generated code matches the protos"
    exit $status ;;
  *) echo "usage: $0 protos|check" >&2; exit 2 ;;
esac
