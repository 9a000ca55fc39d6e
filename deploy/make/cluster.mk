# A real single-node Kubernetes cluster on this machine, the platform in it, and its tests
# (deploy/cluster/). Binaries are built once into .cache/cluster/<part>-<version>/.
#   make cluster          start it (cold: builds Kubernetes, CoreDNS; warm: seconds)
#   make deploy-cluster   images + k8s/overlays/local into it, wait until ready
#   make test-cluster     the end-to-end tests in it (tests/cluster)
#   make cluster-down     remove every trace of it
CLUSTER := deploy/cluster/cluster.sh

.PHONY: cluster cluster-down cluster-status cluster-build deploy-cluster test-cluster

cluster-build:  ## build the cluster's binaries and images once (Go module proxy, podman)
	@deploy/cluster/build.sh all

cluster:  ## start a single-node Kubernetes cluster here (kubeconfig: .cache/cluster/kubeconfig)
	@$(CLUSTER) up

cluster-down:  ## stop the cluster and remove every trace of it (processes, mounts, network)
	@$(CLUSTER) down

cluster-status:  ## what of the cluster runs
	@$(CLUSTER) status

deploy-cluster: image  ## put the platform into the cluster (k8s/overlays/local) and wait until ready
	@IMAGE=$(IMAGE) deploy/cluster/deploy.sh

# In this order: played first, then broken, upgraded and rescaled (each leaves it serving).
CLUSTER_TESTS := tests/cluster/test_play.py tests/cluster/test_break.py \
  tests/cluster/test_upgrade.py tests/cluster/test_rescale.py

test-cluster: install cluster deploy-cluster  ## play, break, upgrade and rescale in the cluster (tests/cluster)
	CLUSTER_REPORT=.cache/cluster-report.json $(VENV)/bin/pytest -q -ra -s --timeout=3600 \
	  -m cluster $(CLUSTER_TESTS)
