#!/usr/bin/env bash
# Applies an overlay whose board shard count differs from the running one, so that no match
# ever has two owners. A plain `kubectl apply` would start the new shards (which rebuild
# and serve the matches they own under the new count) while the old ones still serve every
# match under the old count.
#   deploy/k8s/reshard.sh OVERLAY [NAMESPACE]      (KUBECTL=... to use another kubectl)
# OVERLAY has the new count: the replicas of board, dice and decks and the three
# TABLETOP_{BOARD,DICE,DECKS}_ADDRS lists (k8s/README.md, "Changing the shard count").
#   1. board is scaled to 0: each shard drains (answers what it has in flight) and stops.
#      Clients get UNAVAILABLE meanwhile and retry with the same command id;
#   2. everything but board is applied: dice and decks restart with the new count after the
#      last board write, so each rebuilds exactly the matches it now owns; the gateways
#      route by the new count;
#   3. board is applied: each shard rebuilds its matches from board.events (a snapshot of
#      another shard count is never read) and serves.
# With the same count as running, it is a plain apply.
set -euo pipefail
overlay=${1:?usage: $0 OVERLAY [NAMESPACE]}
ns=${2:-tabletop}
KUBECTL=${KUBECTL:-kubectl}
k() { $KUBECTL "$@"; }
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
k kustomize "$overlay" >"$rendered"
board=app.kubernetes.io/name=board
# (create --dry-run=client prints the rendered objects as they are, without the cluster)
wanted=$(k create --dry-run=client -o jsonpath='{.kind}={.spec.replicas} ' -f "$rendered" -l "$board" |
  tr ' ' '\n' | sed -n 's/^StatefulSet=//p')
running=$(k -n "$ns" get statefulset board -o jsonpath='{.spec.replicas}' 2>/dev/null || true)
if [ -z "$running" ] || [ "$running" = "$wanted" ]; then
  k apply -f "$rendered"
  exit 0
fi
# every pod NAME-0 … NAME-(N-1) of a StatefulSet exists and is ready (rollout status can
# answer from a status the controller has not updated yet)
ready() {  # NAME N
  local i
  for ((i = 0; i < $2; i++)); do
    until k -n "$ns" get pod "$1-$i" >/dev/null 2>&1; do sleep 0.5; done
    k -n "$ns" wait --for=condition=Ready "pod/$1-$i" --timeout=300s >/dev/null
  done
}
t0=$SECONDS
log "resharding board from $running to $wanted shards"
k -n "$ns" scale statefulset board --replicas=0 >/dev/null
k -n "$ns" wait --for=delete pod -l "$board" --timeout=300s >/dev/null
log "old shards stopped ($((SECONDS - t0)) s)"
k apply -f "$rendered" -l "app.kubernetes.io/name!=board" >/dev/null
for workload in statefulset/dice statefulset/decks deployment/gateway; do
  k -n "$ns" rollout status "$workload" --timeout=300s >/dev/null
done
ready dice "$wanted"
ready decks "$wanted"
log "dice, decks and gateway on $wanted shards ($((SECONDS - t0)) s)"
k apply -f "$rendered" -l "$board" >/dev/null
k -n "$ns" rollout status statefulset/board --timeout=300s >/dev/null
ready board "$wanted"
log "board on $wanted shards: resharded in $((SECONDS - t0)) s"
