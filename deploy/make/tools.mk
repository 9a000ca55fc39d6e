# Deploy tooling for the offline k8s/Prometheus checks (tests/unit/deploy).
# Included by the main Makefile; `make test` depends on tools-deploy.
#   kustomize: a pinned tagged release built from the Go module proxy into .cache/bin
#              (v5.8.2 is the newest that builds with Go 1.26; v5.8.3 needs Go >= 1.27).
#   prometheus, promtool: Debian's `prometheus` package, its own service kept off.

KUSTOMIZE_VERSION ?= v5.8.2
DEPLOY_BIN := $(abspath .cache/bin)
KUSTOMIZE := $(DEPLOY_BIN)/kustomize
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)

.PHONY: tools-deploy tools-kustomize tools-prometheus

tools-deploy: tools-kustomize tools-prometheus  ## kustomize, prometheus and promtool for the deploy checks

tools-kustomize:
	@if [ "$$($(KUSTOMIZE) version 2>/dev/null)" != "$(KUSTOMIZE_VERSION)" ]; then \
	  echo "installing kustomize $(KUSTOMIZE_VERSION) into $(DEPLOY_BIN)"; \
	  GOBIN=$(DEPLOY_BIN) GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	    $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION); \
	fi

tools-prometheus:
	@deploy/prometheus/install-debian.sh
