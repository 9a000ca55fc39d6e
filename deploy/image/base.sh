#!/usr/bin/env bash
# The base image when no registry is reachable: Debian bookworm (minbase) made by debootstrap
# from the Debian mirror, with python3.11 and venv, imported into podman.
#   deploy/image/base.sh [TAG]     (default localhost/tabletop-base:bookworm)
# Built once: skipped if podman has the tag; the rootfs tarball is kept in .cache/image/, so a
# fresh image store (e.g. a CI runner restoring .cache) only re-imports it (seconds).
set -euo pipefail

TAG=${1:-localhost/tabletop-base:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${IMAGE_CACHE:-.cache/image}
TARBALL=$CACHE/base-bookworm.tar
# ca-certificates: the builder stage fetches wheels from PyPI over HTTPS.
PACKAGES=python3,python3-venv,ca-certificates

if podman image exists "$TAG"; then
  echo "base image $TAG: present"
  exit 0
fi
mkdir -p "$CACHE"
if [ ! -s "$TARBALL" ]; then
  root=$(mktemp -d /var/tmp/tabletop-base.XXXXXX)
  # debootstrap mounts proc (and sys) inside the target while it works: never delete through them.
  trap 'umount -R "$root/proc" "$root/sys" 2>/dev/null || true; rm -rf --one-file-system "$root"' EXIT
  echo "debootstrap bookworm (minbase + $PACKAGES) from $MIRROR"
  start=$(date +%s)
  debootstrap --variant=minbase --include="$PACKAGES" bookworm "$root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log"; exit 1; }
  # Nothing an image needs: package caches and lists, documentation.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*
  tar -C "$root" --numeric-owner --one-file-system --exclude=./proc/* --exclude=./sys/* -cf "$TARBALL.part" . && mv "$TARBALL.part" "$TARBALL"
  echo "debootstrap: $(( $(date +%s) - start )) s"
fi
podman import --quiet \
  --change 'CMD ["/bin/bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'LABEL org.opencontainers.image.description=Debian bookworm minbase with python3 (deploy/image/base.sh)' \
  "$TARBALL" "$TAG" >/dev/null
echo "base image $TAG: $(podman image inspect --format '{{.Size}}' "$TAG") bytes"
