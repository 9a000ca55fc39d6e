#!/usr/bin/env bash
# Installs Debian's `prometheus` package for its two binaries (prometheus, promtool).
# We run our own prometheus process (deploy/prometheus/prometheus.sh), never the package's
# service: its start is blocked during the install and the service is stopped and disabled
# after, so nothing else holds port 9090 or scrapes with the package's default config.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

policy=/usr/sbin/policy-rc.d
added_policy=""
if [ ! -e "$policy" ]; then
    # exit 101 = "action forbidden": invoke-rc.d then skips starting the package's service.
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 0755 "$policy"
    added_policy=1
fi
cleanup() {
    if [ -n "$added_policy" ]; then
        $SUDO rm -f "$policy"
    fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
# No recommends: node-exporter would be another auto-started service.
apt_install() { $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
# Package lists may be missing or stale on a fresh machine: refresh once and retry.
apt_install || { $SUDO apt-get update -qq && apt_install; }

# Belt and braces for machines where the service did start (systemd, or no policy-rc.d).
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now prometheus.service >/dev/null 2>&1 || true
elif [ -x /etc/init.d/prometheus ]; then
    $SUDO /etc/init.d/prometheus stop >/dev/null 2>&1 || true
    $SUDO update-rc.d prometheus disable >/dev/null 2>&1 || true
fi

prometheus --version 2>&1 | head -1
