#!/usr/bin/env bash
# The images the local cluster runs, built with podman (each once: skipped while podman has
# the tag) and imported into the cluster's containerd.
#   deploy/cluster/images.sh platform      pause, CoreDNS (`make cluster` needs them)
#   deploy/cluster/images.sh kafka         Apache Kafka from the Maven Central jars
#   deploy/cluster/images.sh monitoring    Prometheus, prometheus-operator, config reloader
#   deploy/cluster/images.sh import IMAGE...   into containerd (skipped if it has that id)
# Go binaries come from deploy/cluster/build.sh; static ones go into FROM-scratch images.
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/cluster/versions.sh
deploy/image/engine.sh >/dev/null
deploy/image/store.sh
GO=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
CONTAINERD_SOCK=/run/tabletop-cluster/containerd.sock

have() { podman image exists "$1"; }

# scratch IMAGE ENTRYPOINT FILE...: an image of static binaries only, each at /bin/<name>.
scratch() {
  local image=$1 entrypoint=$2; shift 2
  have "$image" && return
  local dir; dir=$(mktemp -d)
  mkdir -p "$dir/tmp" "$dir/bin" && chmod 1777 "$dir/tmp"
  cp "$@" "$dir/bin/"
  tar -C "$dir" --owner=0 --group=0 -cf - . |
    podman import --quiet --change "ENTRYPOINT [\"$entrypoint\"]" --change "USER 65534:65534" \
      - "$image" >/dev/null
  rm -rf "$dir"
  echo "image $image: built"
}

platform() {
  if ! have "$PAUSE_IMAGE"; then
    local bin=$CLUSTER_CACHE/pause/pause
    mkdir -p "$(dirname "$bin")"
    (cd deploy/cluster/pause && CGO_ENABLED=0 GOTOOLCHAIN=local "$GO" build -trimpath -ldflags "-s -w" -o "$bin" .)
    scratch "$PAUSE_IMAGE" /bin/pause "$bin"
  fi
  deploy/cluster/build.sh coredns
  scratch "$COREDNS_IMAGE" /bin/coredns "$CLUSTER_CACHE/coredns-$COREDNS_VERSION/coredns"
}

monitoring() {
  deploy/cluster/build.sh prometheus-operator
  deploy/cluster/build.sh prometheus
  local op=$CLUSTER_CACHE/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION
  scratch "$PROMETHEUS_OPERATOR_IMAGE" /bin/operator "$op/operator"
  scratch "$PROMETHEUS_CONFIG_RELOADER_IMAGE" /bin/prometheus-config-reloader "$op/prometheus-config-reloader"
  scratch "$PROMETHEUS_IMAGE" /bin/prometheus "$CLUSTER_CACHE/prometheus-$PROMETHEUS_VERSION/prometheus"
}

kafka() {
  # rebuilt when what goes into it changes (the tag is Kafka's version only)
  local inputs
  inputs=$(cat deploy/image/kafka/Containerfile deploy/image/kafka/entrypoint.sh \
    deploy/kafka/log4j2.yaml deploy/kafka/pom.xml deploy/cluster/images.sh | sha256sum | cut -c1-16)
  if have "$KAFKA_IMAGE" && [ "$(podman image inspect --format \
      '{{index .Labels "tabletop.inputs"}}' "$KAFKA_IMAGE")" = "$inputs" ]; then
    return
  fi
  deploy/kafka/kafka.sh fetch
  local base=localhost/tabletop-base:bookworm
  deploy/image/base.sh "$base"
  local ctx; ctx=$(mktemp -d)
  cp -rL "${KAFKA_HOME:-.cache/kafka}/libs" "$ctx/libs"
  rm -f "$ctx/libs/.complete"
  # the local broker's folder is private (kafka.sh's umask 077): the image's broker runs as
  # uid 1001 and must read the jars, which are public content
  chmod -R a+rX "$ctx"
  cp deploy/kafka/log4j2.yaml deploy/image/kafka/entrypoint.sh "$ctx/"
  local t0=$SECONDS
  podman build --quiet --network host --file deploy/image/kafka/Containerfile \
    --build-arg "BASE=$base" --build-arg "KAFKA_VERSION=$KAFKA_VERSION" \
    --label "tabletop.inputs=$inputs" \
    --tag "$KAFKA_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
  echo "image $KAFKA_IMAGE: built in $((SECONDS - t0)) s"
}

# import IMAGE...: podman → containerd (namespace k8s.io), unless containerd has that id.
import() {
  local image id
  for image in "$@"; do
    id=$(podman image inspect --format '{{.Id}}' "$image")
    # a record per image of the id imported into this cluster (run/ goes with `down`)
    record=$CLUSTER_CACHE/run/imported/${image//[\/:]/_}
    [ "$(cat "$record" 2>/dev/null)" != "$id" ] || continue
    podman save --quiet --format docker-archive "$image" |
      ctr --address "$CONTAINERD_SOCK" -n k8s.io images import - >/dev/null
    mkdir -p "$(dirname "$record")"
    echo "$id" >"$record"
    echo "image $image: imported into the cluster"
  done
}

case ${1:-} in
  platform) platform ;;
  kafka) kafka ;;
  monitoring) monitoring ;;
  import) shift; import "$@" ;;
  *) echo "usage: $0 platform|kafka|monitoring|import IMAGE..." >&2; exit 2 ;;
esac
