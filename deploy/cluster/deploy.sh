#!/usr/bin/env bash
# Puts the platform into the local cluster (`make cluster` first), as a user would:
#   1. the images (the project's from `make image`, Kafka's, Prometheus's), imported;
#   2. the cluster's monitoring (the Prometheus operator and a Prometheus), as any cluster
#      that runs k8s/components/monitoring has;
#   3. the Secrets `tabletop-secret` and `tabletop-kafka` (the Kafka users' passwords) with
#      random values (once; kept across deploys);
#   4. `kubectl apply -k k8s/overlays/local`, with the image tag of this build;
#   5. waits until every workload is ready.
#   deploy/cluster/deploy.sh [TAG]     TAG: the project image's tag (default: its image id)
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/cluster/versions.sh
K8S_BIN=$CLUSTER_CACHE/kubernetes-$KUBERNETES_VERSION
KUBECONFIG_FILE=$CLUSTER_CACHE/kubeconfig
NAMESPACE=tabletop
IMAGE=${IMAGE:-localhost/tabletop:latest}
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

[ -s "$KUBECONFIG_FILE" ] && kubectl get --raw /readyz >/dev/null 2>&1 ||
  { echo "no cluster: run make cluster first" >&2; exit 1; }
t0=$SECONDS

# -- images ------------------------------------------------------------------------------
deploy/cluster/images.sh kafka
deploy/cluster/images.sh monitoring
tag=${1:-$(podman image inspect --format '{{.Id}}' "$IMAGE" | cut -c1-12)}
podman tag "$IMAGE" "localhost/tabletop:$tag"
deploy/cluster/images.sh import "localhost/tabletop:$tag" "$KAFKA_IMAGE" "$PROMETHEUS_IMAGE" \
  "$PROMETHEUS_OPERATOR_IMAGE" "$PROMETHEUS_CONFIG_RELOADER_IMAGE"
t_images=$SECONDS

# -- the cluster's monitoring ------------------------------------------------------------
crds=$CLUSTER_CACHE/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION/crds
# Server-side: some CRDs are larger than the annotation a client-side apply keeps.
kubectl apply --server-side --force-conflicts -f "$crds" >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f "$crds" >/dev/null
sed -e "s#@PROMETHEUS_IMAGE@#$PROMETHEUS_IMAGE#" -e "s#@PROMETHEUS_VERSION@#$PROMETHEUS_VERSION#" \
    -e "s#@PROMETHEUS_OPERATOR_IMAGE@#$PROMETHEUS_OPERATOR_IMAGE#" \
    -e "s#@PROMETHEUS_CONFIG_RELOADER_IMAGE@#$PROMETHEUS_CONFIG_RELOADER_IMAGE#" \
    deploy/cluster/addons/monitoring.yaml | kubectl apply -f - >/dev/null

# -- the platform ------------------------------------------------------------------------
kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
if ! kubectl -n "$NAMESPACE" get secret tabletop-secret >/dev/null 2>&1; then
  kubectl -n "$NAMESPACE" create secret generic tabletop-secret \
    --from-literal=secret="$(openssl rand -hex 32)" \
    --from-literal=token-key="$(openssl rand -hex 32)" \
    --from-literal=peer-token="$(openssl rand -hex 32)" \
    --from-literal=bots-token="$(openssl rand -hex 32)" >/dev/null
  log "secret tabletop-secret: created with random values"
elif [ -z "$(kubectl -n "$NAMESPACE" get secret tabletop-secret -o jsonpath='{.data.bots-token}')" ]; then
  # an installation from before the bots service: its credential added, the rest kept
  kubectl -n "$NAMESPACE" patch secret tabletop-secret --type merge \
    -p "{\"stringData\":{\"bots-token\":\"$(openssl rand -hex 32)\"}}" >/dev/null
  log "secret tabletop-secret: bots-token added"
fi
# The Kafka users' passwords, one per user: the brokers' own, admin's (the topics Job), each
# service's and the bench's (services/common/kafka_acls.py ROLES; tools on this machine).
if ! kubectl -n "$NAMESPACE" get secret tabletop-kafka >/dev/null 2>&1; then
  users=(broker admin dice decks scoring board projector gateway bench)
  kubectl -n "$NAMESPACE" create secret generic tabletop-kafka \
    $(for user in "${users[@]}"; do printf -- '--from-literal=%s=%s ' "$user" "$(openssl rand -hex 32)"; done) \
    >/dev/null
  log "secret tabletop-kafka: created with random values"
fi
# The overlay as it is, with this build's tag (a new tag rolls every workload).
overlay=$CLUSTER_CACHE/overlay
mkdir -p "$overlay"
cat >"$overlay/kustomization.yaml" <<EOF
# Written by deploy/cluster/deploy.sh: k8s/overlays/local with the image tag of this build.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$overlay" k8s/overlays/local)
images:
  - name: localhost/tabletop
    newTag: "$tag"
EOF
kubectl apply -k "$overlay" >/dev/null
log "applied k8s/overlays/local (image localhost/tabletop:$tag)"

# -- ready -------------------------------------------------------------------------------
kubectl -n monitoring rollout status deployment/prometheus-operator --timeout=180s >/dev/null
for kind_name in statefulset/kafka statefulset/dice statefulset/decks statefulset/board \
                 deployment/scoring deployment/projector deployment/gateway; do
  kubectl -n "$NAMESPACE" rollout status "$kind_name" --timeout=600s >/dev/null
done
t_ready=$SECONDS
# The operator makes the Prometheus StatefulSet once it has seen the Prometheus resource.
for _ in $(seq 120); do
  kubectl -n monitoring get statefulset prometheus-tabletop >/dev/null 2>&1 && break
  sleep 1
done
kubectl -n monitoring rollout status statefulset/prometheus-tabletop --timeout=300s >/dev/null
node_ip=$(kubectl get node -o jsonpath='{.items[0].status.addresses[?(@.type=="InternalIP")].address}')
log "deployed in $((SECONDS - t0)) s (images $((t_images - t0)) s, apply to ready $((t_ready - t_images)) s)"
cat <<EOF
  gateway (gRPC):   $node_ip:30050      tabletop --gateway $node_ip:30050 play crashland --bot random
  web page:         http://$node_ip:30080/
  Prometheus:       http://$node_ip:30090/
  kubectl:          export KUBECONFIG=$KUBECONFIG_FILE
EOF
