#!/usr/bin/env bash
# What the local cluster needs from Debian: the container runtime and its parts, etcd, the
# CNI plugins, iptables and conntrack (kube-proxy), nft (to remove the tables iptables-nft
# made), podman (images). Installed once; a
# package's own service is never started (the cluster runs its own instances, by PID).
set -euo pipefail
PACKAGES=(containerd runc etcd-server containernetworking-plugins iptables nftables conntrack
          podman debootstrap openssl)
need=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -gt 0 ] || exit 0
echo "installing ${need[*]} (apt)"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
# Keep the packages' init scripts from starting their daemons (etcd, containerd) during
# the install: exit code 101 of policy-rc.d means "not now". An existing policy is kept.
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  own_policy=1
fi
cleanup() { [ -z "$own_policy" ] || $sudo rm -f "$policy"; }
trap cleanup EXIT
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
