#!/bin/bash
# The broker in a pod. server.properties: the mounted template (KAFKA_CONFIG_TEMPLATE) with
# ${NAME} replaced from the environment, then every KAFKA_CFG_<NAME> variable as property
# <name> (lower case, "_" → "."; ${NAME} replaced too), e.g. KAFKA_CFG_MIN_INSYNC_REPLICAS=2. The node id is the
# StatefulSet ordinal unless KAFKA_NODE_ID says otherwise. The storage is formatted once,
# with KAFKA_CLUSTER_ID. SIGTERM reaches the JVM (exec): a controlled shutdown.
set -euo pipefail
template=${KAFKA_CONFIG_TEMPLATE:-/etc/kafka/server.properties}
config=${KAFKA_CONFIG:-/tmp/server.properties}
export KAFKA_NODE_ID=${KAFKA_NODE_ID:-${HOSTNAME##*-}}
: "${KAFKA_CLUSTER_ID:?set KAFKA_CLUSTER_ID (22 characters, base64 of a UUID)}"

python3 - "$template" "$config" <<'PY'
import os, string, sys
source, target = sys.argv[1:3]
text = "\n".join(
    line if line.lstrip().startswith("#") else string.Template(line).substitute(os.environ)
    for line in open(source).read().splitlines()
)
overrides = {
    key[len("KAFKA_CFG_"):].lower().replace("_", "."): string.Template(value).substitute(os.environ)
    for key, value in sorted(os.environ.items())
    if key.startswith("KAFKA_CFG_")
}
lines = [
    line for line in text.splitlines()
    if line.split("=", 1)[0].strip() not in overrides
]
lines += [f"{key}={value}" for key, value in overrides.items()]
with open(target, "w") as out:
    out.write("\n".join(lines) + "\n")
PY

java_opts=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20
           -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
           -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.yaml ${KAFKA_JVM_OPTS:-})
log_dirs=$(sed -n 's/^log\.dirs=//p' "$config")
if [ ! -f "${log_dirs%%,*}/meta.properties" ]; then
  # A static quorum (controller.quorum.voters): no --standalone.
  java "${java_opts[@]}" -cp "/opt/kafka/libs/*" kafka.tools.StorageTool format \
    --ignore-formatted -t "$KAFKA_CLUSTER_ID" -c "$config"
fi
exec java "${java_opts[@]}" -cp "/opt/kafka/libs/*" kafka.Kafka "$config"
