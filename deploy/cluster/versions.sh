# Pinned versions of the local cluster's parts (sourced by deploy/cluster/*.sh).
# Kubernetes 1.34: the last minor whose kubelet still runs on cgroup v1 (failCgroupV1: false).
KUBERNETES_VERSION=${KUBERNETES_VERSION:-v1.34.4}
COREDNS_VERSION=${COREDNS_VERSION:-v1.14.7}
PROMETHEUS_OPERATOR_VERSION=${PROMETHEUS_OPERATOR_VERSION:-v0.93.0}
# Prometheus: a version the operator's compatibility matrix lists (LTS).
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v3.13.1}
CLUSTER_CACHE=${CLUSTER_CACHE:-$PWD/.cache/cluster}

# Images the cluster runs, built locally with podman and imported into containerd (never
# pulled: no registry is reachable here). deploy/cluster/images.sh builds each once.
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' deploy/kafka/pom.xml)
PAUSE_IMAGE=localhost/tabletop-pause:3.10
COREDNS_IMAGE=localhost/tabletop-coredns:$COREDNS_VERSION
KAFKA_IMAGE=localhost/tabletop-kafka:$KAFKA_VERSION
PROMETHEUS_IMAGE=localhost/tabletop-prometheus:$PROMETHEUS_VERSION
PROMETHEUS_OPERATOR_IMAGE=localhost/tabletop-prometheus-operator:$PROMETHEUS_OPERATOR_VERSION
PROMETHEUS_CONFIG_RELOADER_IMAGE=localhost/tabletop-prometheus-config-reloader:$PROMETHEUS_OPERATOR_VERSION
# podman keeps its images under the project's cache, never in /var/lib/containers.
export CONTAINERS_STORAGE_CONF=${CONTAINERS_STORAGE_CONF:-$PWD/.cache/podman/storage.conf}
