#!/usr/bin/env bash
# `make image`: the engine (deploy/image/engine.sh), the local base (deploy/image/base.sh, once),
# then the project's image from deploy/Dockerfile. Prints build time and size.
#   IMAGE (localhost/tabletop:latest), IMAGE_BASE (localhost/tabletop-base:bookworm)
#   IMAGE_BASE=python:3.11-slim-bookworm uses the public base instead (needs a registry).
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${IMAGE:-localhost/tabletop:latest}
IMAGE_BASE=${IMAGE_BASE:-localhost/tabletop-base:bookworm}

deploy/image/engine.sh
export CONTAINERS_STORAGE_CONF=${CONTAINERS_STORAGE_CONF:-$PWD/.cache/podman/storage.conf}
deploy/image/store.sh
if [[ $IMAGE_BASE == localhost/tabletop-base:* ]]; then
  deploy/image/base.sh "$IMAGE_BASE"
fi
# The host's CA bundle, for hosts whose HTTPS goes through an inspecting proxy (a build
# secret: it is not stored in the image).
ca=${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
secret=()
[ ! -s "$ca" ] || secret=(--secret "id=ca,src=$ca")
start=$(date +%s)
# Host networking: the builder stage fetches wheels from PyPI (no CNI network needed).
podman build --network host \
  --file deploy/Dockerfile \
  --build-arg "PYTHON_IMAGE=$IMAGE_BASE" \
  "${secret[@]}" \
  --label "io.tabletop.context=$(python3 deploy/image/context.py)" \
  --tag "$IMAGE" \
  .
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "image $IMAGE: $((size / 1000000)) MB ($size bytes), built in $(( $(date +%s) - start )) s" \
  "from $IMAGE_BASE"
