#!/usr/bin/env bash
# podman's image store for this project: under .cache/podman, never /var/lib/containers.
# Writes the storage.conf that CONTAINERS_STORAGE_CONF names (the Makefile exports it).
#   deploy/image/store.sh     (idempotent)
set -euo pipefail
cd "$(dirname "$0")/../.."
conf=${CONTAINERS_STORAGE_CONF:-$PWD/.cache/podman/storage.conf}
[ -s "$conf" ] && exit 0
root=$(dirname "$conf")
mkdir -p "$root/storage" "$root/run"
cat >"$conf" <<CONF
# Written by deploy/image/store.sh: the project's own podman image store.
[storage]
driver = "overlay"
graphroot = "$root/storage"
runroot = "$root/run"
CONF
