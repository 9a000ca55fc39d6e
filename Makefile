# Tabletop — one entry point for developers and CI.
#   make up      start Kafka and every service locally (twice is safe); make down stops them
#   make test    install everything, start Kafka, run unit + integration tests
#   make bench   benchmarks (beside boardgame.io, the peer) → BENCHMARKS.md and bench-results.json
#   make image   the container image (podman); make test-image runs it like k8s/ does
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(sort $(wildcard protos/tabletop/v1/*.proto))
KAFKA := deploy/kafka/kafka.sh

include deploy/make/tools.mk
include deploy/make/image.mk

GRPCURL_VERSION ?= v1.9.3

.PHONY: help install tools tools-grpcurl protos check-protos kafka kafka-stop topics up down \
        status test test-unit faults lint bench clean prometheus prometheus-stop k8s-generate

help:  ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(STAMP)  ## create .venv and install the project with its dev tools

tools: tools-deploy tools-grpcurl  ## kustomize, prometheus/promtool, grpcurl (into .cache/bin)

# `go install` builds report no version, so a stamp file records which one is there.
tools-grpcurl:
	@if [ ! -x $(DEPLOY_BIN)/grpcurl ] || [ ! -f $(DEPLOY_BIN)/.grpcurl-$(GRPCURL_VERSION) ]; then \
	  echo "installing grpcurl $(GRPCURL_VERSION) into $(DEPLOY_BIN)"; \
	  GOBIN=$(DEPLOY_BIN) GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	    $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION) && \
	  touch $(DEPLOY_BIN)/.grpcurl-$(GRPCURL_VERSION); \
	fi

protos: $(STAMP)  ## write the games' .proto files from their dataclasses, then the Python code (checked in)
	@deploy/protos.sh protos

check-protos: $(STAMP)  ## fail if the checked-in game protos or generated code differ from the games
	@deploy/protos.sh check

kafka: install  ## fetch (Maven Central) and start the local Kafka broker
	@$(KAFKA) start

kafka-stop:  ## stop the local Kafka broker
	@$(KAFKA) stop

topics: kafka  ## create the topics (auto-create is off)
	@$(VENV)/bin/tabletop admin create-topics

up: kafka  ## start Kafka, every service and (if installed) Prometheus; wait until healthy
	@$(VENV)/bin/tabletop stack up
	@if command -v prometheus >/dev/null; then deploy/prometheus/prometheus.sh start; \
	  else echo "prometheus not installed (make tools installs it): skipped"; fi

down:  ## stop every service, Prometheus and Kafka
	@test ! -x $(VENV)/bin/tabletop || $(VENV)/bin/tabletop stack down
	@deploy/prometheus/prometheus.sh stop
	@$(KAFKA) stop

status:  ## show what is running
	@$(VENV)/bin/tabletop stack status || true

test: install tools kafka check-protos  ## unit + integration tests against the real Kafka
	$(VENV)/bin/pytest -q -ra --timeout=600 -m 'not faults'

faults: install  ## fault injection: SIGKILL each process and a private Kafka while bots play (2–3 min)
	@$(KAFKA) fetch
	FAULTS_REPORT=.cache/faults-report.json FAULTS_LOGS=.cache/faults-logs $(VENV)/bin/pytest -q -ra -s --timeout=900 -m faults tests/faults

test-unit: install  ## unit tests only (no Kafka)
	$(VENV)/bin/pytest -q -m 'not integration' tests/unit

lint: install  ## ruff and mypy
	$(VENV)/bin/ruff check services tests deploy/k8s deploy/image
	$(VENV)/bin/ruff format --check services tests deploy/k8s deploy/image
	$(VENV)/bin/mypy services tests deploy/k8s deploy/image

prometheus: tools-prometheus  ## local Prometheus on 127.0.0.1:9090 scraping every process
	@deploy/prometheus/prometheus.sh start

prometheus-stop:  ## stop the local Prometheus
	@deploy/prometheus/prometheus.sh stop

k8s-generate: $(STAMP)  ## regenerate the KafkaTopics and the PrometheusRule from their sources
	$(PY) deploy/k8s/gen_topics.py
	$(PY) deploy/k8s/gen_rules.py

bench: install kafka  ## benchmarks against floors and boardgame.io (npm ci into .cache/peer; needs Node) in the same run
	$(VENV)/bin/python -m tests.bench

clean: down  ## remove caches and the virtual environment
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
