#!/usr/bin/env bash
# The container engine for `make image` and the container smoke test: Debian's podman with
# runc. Installs what is missing (apt) and writes /etc/containers/containers.conf only if it
# is absent; an existing file is the machine owner's and is left alone.
#   crun and podman's default ulimits are refused in sandboxes like CI's, host networking is
#   the only network that needs no extra privileges.
set -euo pipefail

need=()
for pair in podman:podman runc:runc debootstrap:debootstrap; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || need+=("${pair##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
    "${need[@]}"
fi

conf=/etc/containers/containers.conf
if [ ! -e "$conf" ]; then
  echo "writing $conf (runc, host network, no default ulimits)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo mkdir -p /etc/containers
  $sudo tee "$conf" >/dev/null <<'CONF'
# Written by Tabletop's deploy/image/engine.sh (only because no file was here).
[containers]
default_ulimits = []
netns = "host"

[engine]
runtime = "runc"
CONF
fi
