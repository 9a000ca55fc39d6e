#!/usr/bin/env bash
# What the local cluster touches on this machine, printed in a stable form: run it before
# `make cluster` and after `make cluster-down` and compare (the two must be equal).
#   deploy/cluster/footprint.sh > before.txt; ...; deploy/cluster/footprint.sh | diff before.txt -
set -uo pipefail
cd "$(dirname "$0")/../.."
source deploy/cluster/versions.sh
echo "== processes of the cluster's programs"
programs="etcd containerd containerd-shim-runc-v2 kube-apiserver kube-controller-manager
kube-scheduler kubelet kube-proxy coredns pause prometheus operator"
for proc in /proc/[0-9]*; do
  exe=$(readlink "$proc/exe" 2>/dev/null) || continue
  name=${exe##*/}
  for wanted in $programs; do [ "$name" = "$wanted" ] && echo "running: $name"; done
done | sort -u
echo "== links"; ip -br link | awk '{print $1, $2}' | sort
echo "== routes"; ip route | sort
echo "== iptables"
for tool in iptables-save ip6tables-save; do
  command -v "$tool" >/dev/null && "$tool" | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
done
echo "== nft tables"; command -v nft >/dev/null && nft list tables | sort
echo "== mounts"; awk '{print $5, $9}' /proc/self/mountinfo | sort
echo "== sysctls"
sysctl net.ipv4.ip_forward net.ipv4.conf.all.route_localnet vm.overcommit_memory \
  vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys \
  kernel.keys.root_maxbytes 2>/dev/null
echo "== cgroups"; ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null
echo "== paths"
for path in /run/containerd /run/tabletop-cluster /var/log/containers /var/run/netns \
            /var/lib/cni /etc/cni /usr/libexec/kubernetes /var/run/kubernetes /var/lib/kubelet \
            "$CLUSTER_CACHE/run" "$CLUSTER_CACHE/kubeconfig"; do
  [ -e "$path" ] && echo "present: $path"
done
exit 0
