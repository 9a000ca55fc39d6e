#!/usr/bin/env bash
# The cluster's Go binaries, built once from the Go module proxy and cached by version:
#   .cache/cluster/kubernetes-<v>/   kube-apiserver kube-controller-manager kube-scheduler
#                                    kubelet kube-proxy kubectl
#   .cache/cluster/coredns-<v>/      coredns
#   .cache/cluster/prometheus-operator-<v>/  operator, prometheus-config-reloader, CRDs
#   .cache/cluster/prometheus-<v>/   prometheus (Kubernetes service discovery only)
# A version folder holds only complete builds (each binary is built into .part and moved),
# so an interrupted build resumes where it stopped. Cold: ~12 min (Kubernetes) + ~5 min
# (CoreDNS) + ~4 min (operator) on 2 cores; warm: nothing to do.
#   deploy/cluster/build.sh [kubernetes|coredns|prometheus-operator|all]
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/cluster/versions.sh

GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# Build in one package at a time: the machine has 2 cores shared with the tests.
GOBUILD=("$GO" build -trimpath -p "${CLUSTER_BUILD_JOBS:-2}")

# A scratch module whose only job is to pin one upstream version for `go build`.
scratch_module() {  # DIR MODULE VERSION
  mkdir -p "$1"
  cat >"$1/go.mod" <<MOD
module tabletop.invalid/cluster-build

go 1.24.0

require $2 $3
MOD
}

kubernetes() {
  local out=$CLUSTER_CACHE/kubernetes-$KUBERNETES_VERSION work=$CLUSTER_CACHE/build/kubernetes-$KUBERNETES_VERSION
  local names=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl) missing=()
  for n in "${names[@]}"; do [ -x "$out/$n" ] || missing+=("$n"); done
  [ ${#missing[@]} -gt 0 ] || { echo "kubernetes $KUBERNETES_VERSION: cached in $out"; return; }
  mkdir -p "$out"
  scratch_module "$work" k8s.io/kubernetes "$KUBERNETES_VERSION"
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
  # ./staging/...; outside its tree each must point at the published v0.<minor>.<patch>.
  local gomod staging
  gomod=$("$GO" mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  staging=v0${KUBERNETES_VERSION#v1}
  grep -E '^\s+k8s.io/[a-z0-9-]+ => ./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}' >>"$work/go.mod"
  local ld="-s -w"
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  for k in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $k.gitVersion=$KUBERNETES_VERSION -X $k.gitMajor=1 -X $k.gitMinor=$minor"
    ld+=" -X $k.gitTreeState=clean -X $k.buildDate=1970-01-01T00:00:00Z"
  done
  for n in "${missing[@]}"; do
    local t0=$SECONDS
    echo "building $n $KUBERNETES_VERSION (Go module proxy)"
    (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" "${GOBUILD[@]}" -ldflags "$ld" -o "$out/$n.part" "k8s.io/kubernetes/cmd/$n")
    mv "$out/$n.part" "$out/$n"
    echo "  $n: $((SECONDS - t0)) s"
  done
}

coredns() {
  local out=$CLUSTER_CACHE/coredns-$COREDNS_VERSION work=$CLUSTER_CACHE/build/coredns-$COREDNS_VERSION
  [ ! -x "$out/coredns" ] || { echo "coredns $COREDNS_VERSION: cached in $out"; return; }
  mkdir -p "$out"
  scratch_module "$work" github.com/coredns/coredns "$COREDNS_VERSION"
  local t0=$SECONDS
  echo "building coredns $COREDNS_VERSION (Go module proxy)"
  (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" "${GOBUILD[@]}" -ldflags "-s -w" -o "$out/coredns.part" github.com/coredns/coredns)
  mv "$out/coredns.part" "$out/coredns"
  echo "  coredns: $((SECONDS - t0)) s"
}

prometheus_operator() {
  local out=$CLUSTER_CACHE/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION
  local work=$CLUSTER_CACHE/build/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION
  local mod=github.com/prometheus-operator/prometheus-operator
  local names=(operator prometheus-config-reloader) missing=()
  for n in "${names[@]}"; do [ -x "$out/$n" ] || missing+=("$n"); done
  if [ ${#missing[@]} -gt 0 ]; then
    mkdir -p "$out"
    scratch_module "$work" "$mod" "$PROMETHEUS_OPERATOR_VERSION"
    sed -i 's/^go 1.24.0$/go 1.26.0/' "$work/go.mod"
    local ld="-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}"
    for n in "${missing[@]}"; do
      local t0=$SECONDS
      echo "building prometheus-operator $n $PROMETHEUS_OPERATOR_VERSION (Go module proxy)"
      (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" "${GOBUILD[@]}" -ldflags "$ld" -o "$out/$n.part" "$mod/cmd/$n")
      mv "$out/$n.part" "$out/$n"
      echo "  $n: $((SECONDS - t0)) s"
    done
  fi
  # Its CRDs (Prometheus, ServiceMonitor, PrometheusRule ...) come with the module.
  if [ ! -d "$out/crds" ]; then
    local dir
    dir=$("$GO" mod download -json "$mod@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
    mkdir -p "$out/crds.part"
    cp "$dir"/example/prometheus-operator-crd/monitoring.coreos.com_*.yaml "$out/crds.part/"
    chmod -R u+w "$out/crds.part"
    mv "$out/crds.part" "$out/crds"
  fi
}

prometheus() {
  local out=$CLUSTER_CACHE/prometheus-$PROMETHEUS_VERSION work=$CLUSTER_CACHE/build/prometheus-$PROMETHEUS_VERSION
  local mod=github.com/prometheus/prometheus
  [ ! -x "$out/prometheus" ] || { echo "prometheus $PROMETHEUS_VERSION: cached in $out"; return; }
  mkdir -p "$out"
  # Prometheus 3.x is published as module versions v0.3XX.Y.
  local minor=${PROMETHEUS_VERSION#v3.}; local patch=${minor#*.}; minor=${minor%%.*}
  scratch_module "$work" "$mod" "v0.3$(printf %02d "$minor").$patch"
  sed -i 's/^go 1.24.0$/go 1.25.0/' "$work/go.mod"
  local t0=$SECONDS ld="-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION#v}"
  echo "building prometheus $PROMETHEUS_VERSION (Go module proxy; Kubernetes discovery only, no web UI)"
  (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" "${GOBUILD[@]}" -tags remove_all_sd,enable_kubernetes_sd \
    -ldflags "$ld" -o "$out/prometheus.part" "$mod/cmd/prometheus")
  mv "$out/prometheus.part" "$out/prometheus"
  echo "  prometheus: $((SECONDS - t0)) s"
}

case ${1:-all} in
  kubernetes) kubernetes ;;
  coredns) coredns ;;
  prometheus-operator) prometheus_operator ;;
  prometheus) prometheus ;;
  all) kubernetes; coredns; prometheus_operator; prometheus ;;
  *) echo "usage: $0 [kubernetes|coredns|prometheus-operator|prometheus|all]" >&2; exit 2 ;;
esac
