#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, and its complete removal.
#   deploy/cluster/cluster.sh up       install (apt), build (once), start, wait for the node
#   deploy/cluster/cluster.sh down     stop everything by PID, unmount, remove the bridge,
#                                      the iptables chains and cgroups, put sysctls back
#   deploy/cluster/cluster.sh status   what runs
#
# Parts: etcd, containerd, runc and the CNI plugins from Debian; Kubernetes and CoreDNS built
# from the Go module proxy (deploy/cluster/build.sh); images built with podman and imported
# into containerd (deploy/cluster/images.sh). Everything the cluster writes lives under
# .cache/cluster/run and /run/tabletop-cluster, both removed by `down`.
#
# Traffic stays on this machine: etcd and the components' own ports on 127.0.0.1; the API
# server, the kubelet and NodePorts on the bridge address (CLUSTER_NODE_IP), which the
# script creates with the pod range behind it; Services on a virtual range. CoreDNS answers
# cluster names only (anything else: NXDOMAIN), so no pod ever asks an outside resolver.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source deploy/cluster/versions.sh

NODE=${CLUSTER_NODE_NAME:-tabletop}
BRIDGE=${CLUSTER_BRIDGE:-tabletop0}
POD_CIDR=${CLUSTER_POD_CIDR:-10.244.0.0/24}
NODE_IP=${CLUSTER_NODE_IP:-10.244.0.1}
SERVICE_CIDR=${CLUSTER_SERVICE_CIDR:-10.96.0.0/16}
API_SERVICE_IP=10.96.0.1
DNS_IP=${CLUSTER_DNS_IP:-10.96.0.10}
ETCD_PORT=${CLUSTER_ETCD_PORT:-2379}
API_PORT=6443
CLUSTER_VOLUMES=${CLUSTER_VOLUMES:-6}

RUN=$CLUSTER_CACHE/run            # state: certs, configs, logs, data (removed by down)
SOCK_DIR=/run/tabletop-cluster    # sockets and containerd's state (short paths, tmpfs)
PIDS=$RUN/pids
LOGS=$RUN/logs
PKI=$RUN/pki
KUBECONFIG_OUT=$CLUSTER_CACHE/kubeconfig
K8S_BIN=$CLUSTER_CACHE/kubernetes-$KUBERNETES_VERSION
CONTAINERD_SOCK=$SOCK_DIR/containerd.sock
# The sysctls a part of the cluster may set (kubelet: vm.*, kernel.*; kube-proxy and the CNI
# bridge: net.*), saved at `up` and put back at `down`.
SYSCTLS=(net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.ipv4.conf.all.forwarding
         net.ipv4.conf.default.forwarding net.ipv6.conf.all.forwarding
         net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
         vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
         kernel.keys.root_maxkeys kernel.keys.root_maxbytes
         net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
         net.netfilter.nf_conntrack_tcp_timeout_close_wait)
# Host paths some part creates outside its configured folders; removed at `down` if `up`
# found them absent.
HOST_PATHS=(/run/containerd /var/log/containers /var/run/netns /var/lib/cni /etc/cni
            /usr/libexec/kubernetes /var/run/kubernetes /var/lib/kubelet)

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "error: $*" >&2; exit 1; }
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" "$@"; }

pid_of() { [ -f "$PIDS/$1.pid" ] && cat "$PIDS/$1.pid"; }
alive() { local p; p=$(pid_of "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# start NAME COMMAND...: a daemon in its own session, its PID recorded.
start() {
  local name=$1; shift
  if alive "$name"; then log "$name: running (pid $(pid_of "$name"))"; return; fi
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$name.pid"
  log "$name: started (pid $!)"
}

wait_for() {  # WHAT SECONDS COMMAND...
  local what=$1 limit=$2; shift 2
  local t0=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS - t0 > limit )); then die "$what not ready after ${limit}s (logs: $LOGS)"; fi
    sleep 0.5
  done
}

# -- certificates ------------------------------------------------------------------------
cert() {  # NAME SUBJECT [SANS]: a key and a certificate signed by the cluster CA
  local name=$1 subject=$2 sans=${3:-}
  [ -s "$PKI/$name.crt" ] && return
  openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subject" -out "$PKI/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$sans" ]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=$sans"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
    -CAcreateserial -days 30 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

kubeconfig() {  # FILE USER: a kubeconfig with USER's certificate
  local file=$1 user=$2
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: tabletop
    cluster:
      server: https://$NODE_IP:$API_PORT
      certificate-authority: $PKI/ca.crt
users:
  - name: $user
    user:
      client-certificate: $PKI/$user.crt
      client-key: $PKI/$user.key
contexts:
  - name: tabletop
    context: {cluster: tabletop, user: $user}
current-context: tabletop
EOF
}

pki() {
  mkdir -p "$PKI"
  if [ ! -s "$PKI/ca.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
      -days 30 -subj "/CN=tabletop-cluster-ca" 2>/dev/null
  fi
  local dns="DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  dns+=",DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:$NODE"
  cert apiserver "/CN=kube-apiserver" "$dns,IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert admin "/O=system:masters/CN=tabletop-admin"
  cert controller-manager "/CN=system:kube-controller-manager"
  cert scheduler "/CN=system:kube-scheduler"
  cert kube-proxy "/CN=system:kube-proxy"
  cert kubelet-client "/O=system:nodes/CN=system:node:$NODE"
  cert kubelet "/CN=$NODE" "DNS:$NODE,IP:$NODE_IP"
  [ -s "$PKI/sa.key" ] || openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  [ -s "$PKI/sa.pub" ] || openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  kubeconfig "$KUBECONFIG_OUT" admin
  kubeconfig "$RUN/controller-manager.kubeconfig" controller-manager
  kubeconfig "$RUN/scheduler.kubeconfig" scheduler
  kubeconfig "$RUN/kube-proxy.kubeconfig" kube-proxy
  kubeconfig "$RUN/kubelet.kubeconfig" kubelet-client
  chmod 600 "$PKI"/*.key "$KUBECONFIG_OUT"
}

# -- the host: what `down` must put back ------------------------------------------------
save_host() {
  [ -f "$RUN/host.sysctl" ] && return
  local key
  for key in "${SYSCTLS[@]}"; do
    [ -e "/proc/sys/${key//.//}" ] && echo "$key=$(sysctl -n "$key")"
  done >"$RUN/host.sysctl"
  local path
  for path in "${HOST_PATHS[@]}"; do [ -e "$path" ] || echo "$path"; done >"$RUN/host.absent"
  nft list tables 2>/dev/null | awk '{print $2, $3}' >"$RUN/host.nft-tables" || true
  # cgroup folders of the kubelet's and containerd's that were already there
  for path in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/tabletop-cluster; do
    [ -e "$path" ] && echo "$path"
  done >"$RUN/host.cgroups" || true
}

network() {
  sysctl -qw net.ipv4.ip_forward=1
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  mkdir -p "$RUN/cni/net.d" "$RUN/cni/ipam"
  # The bridge plugin attaches each pod to the bridge above; masquerade only for traffic
  # leaving the pod range (hairpin through a Service); host-local hands out the addresses.
  cat >"$RUN/cni/net.d/10-tabletop.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "tabletop",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$RUN/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# -- the parts ---------------------------------------------------------------------------
etcd_up() {
  mkdir -p "$RUN/etcd"
  chmod 700 "$RUN/etcd"
  start etcd etcd --name "$NODE" --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "$NODE=http://127.0.0.1:$((ETCD_PORT + 1))" \
    --listen-metrics-urls "" --quota-backend-bytes 2147483648 --log-level warn
  wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}

apiserver_up() {
  start kube-apiserver "$K8S_BIN/kube-apiserver" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --service-cluster-ip-range "$SERVICE_CIDR" --service-node-port-range 30000-32767 \
    --cert-dir "$RUN/apiserver" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$PKI/sa.pub" \
    --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer "https://kubernetes.default.svc.cluster.local" \
    --authorization-mode Node,RBAC --allow-privileged=false \
    --enable-admission-plugins NodeRestriction \
    --profiling=false --v=1
  wait_for kube-apiserver 120 "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" get --raw /readyz
}

controllers_up() {
  start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$RUN/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$RUN/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$RUN/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" \
    --use-service-account-credentials \
    --allocate-node-cidrs --cluster-cidr "$POD_CIDR" --node-cidr-mask-size "${POD_CIDR#*/}" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --flex-volume-plugin-dir "$RUN/volume-plugins" \
    --profiling=false --v=1
  start kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$RUN/scheduler.kubeconfig" \
    --authentication-kubeconfig "$RUN/scheduler.kubeconfig" \
    --authorization-kubeconfig "$RUN/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false --v=1
}

containerd_up() {
  mkdir -p "$SOCK_DIR" "$RUN/containerd"
  cat >"$RUN/containerd.toml" <<EOF
version = 2
root = "$RUN/containerd/root"
state = "$SOCK_DIR/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$CONTAINERD_SOCK"

[plugins."io.containerd.internal.v1.opt"]
  path = "$RUN/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Root here lacks CAP_SYS_RESOURCE: runc could not lower a sandbox's oom_score_adj.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
EOF
  start containerd containerd --config "$RUN/containerd.toml"
  wait_for containerd 60 ctr --address "$CONTAINERD_SOCK" version
}

kubelet_up() {
  mkdir -p "$RUN/kubelet" "$RUN/pod-logs"
  : >"$RUN/resolv.conf"  # pods never inherit the host's resolvers
  cat >"$RUN/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
# cgroup v1 and no systemd as PID 1 on this kind of machine
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: $RUN/resolv.conf
podLogsDir: $RUN/pod-logs
volumePluginDir: $RUN/volume-plugins
# Images are imported, never pulled: garbage collection must not remove them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%}
serializeImagePulls: false
maxPods: 110
EOF
  start kubelet "$K8S_BIN/kubelet" --config "$RUN/kubelet.yaml" \
    --kubeconfig "$RUN/kubelet.kubeconfig" --root-dir "$RUN/kubelet" \
    --cert-dir "$RUN/kubelet/pki" --hostname-override "$NODE" --node-ip "$NODE_IP" --v=1
}

proxy_up() {
  cat >"$RUN/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $RUN/kube-proxy.kubeconfig}
hostnameOverride: $NODE
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts on the bridge address only; none on loopback (that needs route_localnet).
nodePortAddresses: ["$NODE_IP/32"]
iptables: {localhostNodePorts: false}
# Leave the host's conntrack sysctls alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy "$K8S_BIN/kube-proxy" --config "$RUN/kube-proxy.yaml" --v=1
}

# A default StorageClass of node-local volumes, and a few volumes under $RUN/volumes for
# the claims of StatefulSets (Kafka's): what a managed cluster's provisioner would give.
storage_up() {
  local i
  {
    cat <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
EOF
    for i in $(seq 0 $((CLUSTER_VOLUMES - 1))); do
      mkdir -p "$RUN/volumes/pv$i"
      cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-pv$i}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local
  local: {path: $RUN/volumes/pv$i}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$NODE]}]
EOF
    done
  } | kubectl apply -f - >/dev/null
}

addons_up() {
  storage_up
  sed -e "s#@DNS_IP@#$DNS_IP#" -e "s#@COREDNS_IMAGE@#$COREDNS_IMAGE#" \
    deploy/cluster/addons/coredns.yaml | kubectl apply -f - >/dev/null
  kubectl -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null
}

up() {
  local t0=$SECONDS
  deploy/cluster/install.sh
  deploy/cluster/build.sh kubernetes
  deploy/cluster/build.sh coredns
  deploy/cluster/images.sh platform   # pause and CoreDNS images (podman, cached)
  mkdir -p "$RUN" "$PIDS" "$LOGS"
  # One cluster per machine: its addresses and ports are fixed.
  if ! alive etcd && (exec 3<>"/dev/tcp/127.0.0.1/$ETCD_PORT") 2>/dev/null; then
    die "127.0.0.1:$ETCD_PORT is taken: another cluster (or etcd) runs here; stop it first"
  fi
  save_host
  network
  pki
  etcd_up
  apiserver_up
  controllers_up
  containerd_up
  deploy/cluster/images.sh import "$PAUSE_IMAGE" "$COREDNS_IMAGE"
  kubelet_up
  proxy_up
  wait_for "node $NODE" 120 kubectl wait --for=condition=Ready "node/$NODE" --timeout=2s
  addons_up
  log "cluster up in $((SECONDS - t0)) s: export KUBECONFIG=$KUBECONFIG_OUT"
}

# -- down --------------------------------------------------------------------------------
stop_pid() {  # NAME [SECONDS]: SIGTERM, then SIGKILL after SECONDS
  local name=$1 limit=${2:-20} p
  p=$(pid_of "$name") || return 0
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill "$p" 2>/dev/null || true
    local i
    for ((i = 0; i < limit * 10; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null || true
    log "$name: stopped (pid $p)"
  fi
  rm -f "$PIDS/$name.pid"
}

# Containers and their shims: every task killed through containerd, then any process left
# in the kubelet's cgroups (by PID, from cgroup.procs).
stop_containers() {
  local c=(ctr --address "$CONTAINERD_SOCK" -n k8s.io)
  if alive containerd; then
    local task
    for task in $("${c[@]}" tasks ls -q 2>/dev/null); do
      "${c[@]}" tasks kill -a -s SIGKILL "$task" >/dev/null 2>&1 || true
    done
    sleep 1
    for task in $("${c[@]}" tasks ls -q 2>/dev/null); do
      "${c[@]}" tasks delete -f "$task" >/dev/null 2>&1 || true
    done
    for task in $("${c[@]}" containers ls -q 2>/dev/null); do
      "${c[@]}" containers delete "$task" >/dev/null 2>&1 || true
    done
  fi
  # Shims outlive containerd: find ours by the socket address they were given.
  local proc p
  for proc in /proc/[0-9]*; do
    p=${proc#/proc/}
    { tr '\0' ' ' <"$proc/cmdline"; } 2>/dev/null | grep -q -- "-address $CONTAINERD_SOCK" || continue
    kill -9 "$p" 2>/dev/null && log "containerd-shim: killed (pid $p)"
  done
  local procs
  for procs in /sys/fs/cgroup/*/kubepods/cgroup.procs /sys/fs/cgroup/*/kubepods/**/cgroup.procs; do
    [ -f "$procs" ] || continue
    for p in $(cat "$procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  done
}

unmount_all() {  # every mount under our folders, deepest first
  local m
  for _ in 1 2 3; do
    mapfile -t mounts < <(awk '{print $5}' /proc/self/mountinfo | sed 's/\\040/ /g' |
      grep -E "^($RUN|$SOCK_DIR|/run/containerd)(/|$)" | sort -r)
    [ ${#mounts[@]} -gt 0 ] || return 0
    for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  done
}

# The chains kube-proxy, the kubelet and the CNI plugins made (KUBE-*, CNI-*), every rule
# that jumps to them, and then the tables themselves where `up` found none and nothing else
# is left in them (iptables-nft makes a table on first use; nft removes it).
clean_iptables() {
  local tool table rule chain family
  for tool in iptables ip6tables; do
    command -v "$tool" >/dev/null || continue
    for table in filter nat mangle raw; do
      "$tool" -t "$table" -S >/dev/null 2>&1 || continue
      { "$tool" -t "$table" -S | grep -E '^-A ' | grep -E -- '-j (KUBE-|CNI-)|^-A (KUBE-|CNI-)' || true; } |
        sed 's/^-A /-D /' | while read -r rule; do
          eval "$tool -t $table $rule" 2>/dev/null || true
        done
      for chain in $("$tool" -t "$table" -S | awk '/^-N (KUBE-|CNI-)/ {print $2}'); do
        "$tool" -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$tool" -t "$table" -S | awk '/^-N (KUBE-|CNI-)/ {print $2}'); do
        "$tool" -t "$table" -X "$chain" 2>/dev/null || true
      done
      family=ip; [ "$tool" = iptables ] || family=ip6
      if command -v nft >/dev/null && ! grep -qxF "$family $table" "$RUN/host.nft-tables" 2>/dev/null &&
         [ -f "$RUN/host.nft-tables" ] && ! "$tool" -t "$table" -S | grep -qvE '^-P [A-Z]+ ACCEPT$'; then
        nft delete table "$family" "$table" 2>/dev/null || true
      fi
    done
  done
}

clean_cgroups() {
  local top dir
  for top in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/tabletop-cluster; do
    [ -d "$top" ] || continue
    grep -qxF "$top" "$RUN/host.cgroups" 2>/dev/null && continue
    # rmdir the deepest folders first (a cgroup folder holds only kernel files)
    find "$top" -depth -type d 2>/dev/null | while read -r dir; do rmdir "$dir" 2>/dev/null || true; done
  done
}

down() {
  # Best effort from here on: one step that fails must not leave the others undone.
  set +e
  local t0=$SECONDS
  for name in kube-controller-manager kube-scheduler kube-proxy; do stop_pid "$name" 10; done
  stop_pid kubelet 15
  stop_containers
  stop_pid containerd 15
  stop_pid kube-apiserver 15
  stop_pid etcd 15
  unmount_all
  if [ -x "$K8S_BIN/kube-proxy" ]; then "$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true; fi
  clean_iptables
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
  # veth ends the CNI plugin left on the host side (their netns were unmounted above)
  local veth
  for veth in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip -d link show "$veth" 2>/dev/null | grep -q "master $BRIDGE" && ip link del "$veth" || true
  done
  clean_cgroups
  if [ -f "$RUN/host.sysctl" ]; then
    while IFS='=' read -r key value; do
      [ "$(sysctl -n "$key" 2>/dev/null)" = "$value" ] || sysctl -qw "$key=$value" 2>/dev/null || true
    done <"$RUN/host.sysctl"
  fi
  if [ -f "$RUN/host.absent" ]; then
    while read -r path; do rm -rf --one-file-system "$path"; done <"$RUN/host.absent"
  fi
  rm -rf --one-file-system "$RUN" "$SOCK_DIR" "$KUBECONFIG_OUT"
  log "cluster down in $((SECONDS - t0)) s"
}

status() {
  local name any=""
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy; do
    if alive "$name"; then echo "$name: running (pid $(pid_of "$name"))"; any=1
    else echo "$name: stopped"; fi
  done
  [ -n "$any" ] && kubectl get nodes -o wide 2>/dev/null || true
}


case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
