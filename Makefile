# Tabletop — one entry point for developers and CI.
#   make up      start Kafka and every service locally (twice is safe); make down stops them
#   make test    install everything, start Kafka, run unit + integration tests
#   make bench   benchmarks (beside boardgame.io, the peer) → BENCHMARKS.md and bench-results.json
#   make image   the container image (podman); make test-image runs it like k8s/ does
#   make web     build the browser client (web/dist), which the gateway serves
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell deploy/make/python.sh)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(sort $(wildcard protos/tabletop/v1/*.proto))
KAFKA := deploy/kafka/kafka.sh

include deploy/make/tools.mk
include deploy/make/image.mk
include deploy/make/cluster.mk

GRPCURL_VERSION ?= v1.9.3

.PHONY: help install pure tools tools-grpcurl tools-web web web-deps protos check-protos kafka \
        kafka-stop topics up down status test test-unit faults lint bench clean prometheus \
        prometheus-stop k8s-generate

help:  ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# The rule engines' hot modules compiled to C extensions with mypyc (pyproject.toml,
# [tool.tabletop.compiled]), beside their .py files, which Python then imports no more.
# `make install PURE=1` leaves them out; `make pure` removes them (the .py files are the
# fallback, and must stay correct on their own: CI tests the compiled ones). The image
# compiles the same list with the same script (deploy/Dockerfile, stage `engines`).
COMPILED_PY := $(shell $(PYTHON) deploy/compile_engines.py --list)
COMPILED_STAMP := $(VENV)/.compiled
$(COMPILED_STAMP): $(STAMP) $(COMPILED_PY) pyproject.toml deploy/compile_engines.py
	@command -v gcc >/dev/null || { echo "need a C compiler (apt-get install -y gcc), or make install PURE=1"; exit 1; }
	@rm -f $@; find services -name '*.cpython-*.so' -delete; rm -f ./*__mypyc.cpython-*.so
	@mkdir -p .cache
	@echo "compiling $(words $(COMPILED_PY)) engine modules with mypyc (log: .cache/mypyc.log)"
	@$(PY) deploy/compile_engines.py > .cache/mypyc.log 2>&1 || { tail -40 .cache/mypyc.log; exit 1; }
	touch $@

install: $(STAMP) $(if $(PURE),,$(COMPILED_STAMP))  ## create .venv, install the project with its dev tools, compile the engines (PURE=1: not)

pure:  ## remove the compiled engine modules: Python imports the .py files again
	find services -name '*.cpython-*.so' -delete; rm -f ./*__mypyc.cpython-*.so $(COMPILED_STAMP)

tools: tools-deploy tools-grpcurl  ## kustomize, prometheus/promtool, grpcurl (into .cache/bin)

# `go install` builds report no version, so a stamp file records which one is there.
tools-grpcurl:
	@if [ ! -x $(DEPLOY_BIN)/grpcurl ] || [ ! -f $(DEPLOY_BIN)/.grpcurl-$(GRPCURL_VERSION) ]; then \
	  echo "installing grpcurl $(GRPCURL_VERSION) into $(DEPLOY_BIN)"; \
	  GOBIN=$(DEPLOY_BIN) GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	    $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION) && \
	  touch $(DEPLOY_BIN)/.grpcurl-$(GRPCURL_VERSION); \
	fi

protos: $(STAMP) web-deps  ## write the games' .proto files from their dataclasses, then the Python and TypeScript code (checked in)
	@deploy/protos.sh protos

check-protos: $(STAMP) web-deps  ## fail if the checked-in game protos or generated code differ from the games
	@deploy/protos.sh check

WEB_STAMP := web/node_modules/.installed
$(WEB_STAMP): web/package.json web/package-lock.json
	@command -v npm >/dev/null || { echo "need node and npm (apt-get install -y nodejs npm)"; exit 1; }
	cd web && npm ci --no-audit --no-fund
	touch $@

web-deps: $(WEB_STAMP)  ## the web client's npm tools, exactly as web/package-lock.json pins them

WEB_SOURCES := $(shell find web/src web/static -type f 2>/dev/null) web/build.mjs web/tsconfig.json
web/dist/index.html: $(WEB_STAMP) $(WEB_SOURCES)
	cd web && npm run -s build

web: web/dist/index.html  ## type-check and bundle the browser client into web/dist

# Browser tests drive Debian's Chromium (Playwright never downloads a browser here).
tools-web:  ## Debian's chromium for the browser tests
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "installing chromium (Debian)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	fi

kafka: install  ## fetch (Maven Central) and start the local Kafka broker
	@$(KAFKA) start

kafka-stop:  ## stop the local Kafka broker
	@$(KAFKA) stop

topics: kafka  ## create the topics (auto-create is off)
	@$(VENV)/bin/tabletop admin create-topics

up: kafka web  ## start Kafka, every service and (if installed) Prometheus; wait until healthy
	@$(VENV)/bin/tabletop stack up
	@if command -v prometheus >/dev/null; then deploy/prometheus/prometheus.sh start; \
	  else echo "prometheus not installed (make tools installs it): skipped"; fi

down:  ## stop every service, Prometheus and Kafka
	@test ! -x $(VENV)/bin/tabletop || $(VENV)/bin/tabletop stack down
	@deploy/prometheus/prometheus.sh stop
	@$(KAFKA) stop

status:  ## show what is running
	@$(VENV)/bin/tabletop stack status || true

test: install tools tools-web kafka check-protos web  ## unit + integration tests against the real Kafka
	cd web && npm test --silent
	$(VENV)/bin/pytest -q -ra --timeout=600 -m 'not faults and not cluster'

faults: install  ## fault injection: SIGKILL each process and a private Kafka while bots play (2–3 min)
	@$(KAFKA) fetch
	FAULTS_REPORT=.cache/faults-report.json FAULTS_LOGS=.cache/faults-logs $(VENV)/bin/pytest -q -ra -s --timeout=900 -m faults tests/faults

test-unit: install  ## unit tests only (no Kafka)
	$(VENV)/bin/pytest -q -m 'not integration' tests/unit

lint: install web-deps  ## ruff, mypy and tsc
	$(VENV)/bin/ruff check services tests deploy/k8s deploy/image deploy/compile_engines.py
	$(VENV)/bin/ruff format --check services tests deploy/k8s deploy/image deploy/compile_engines.py
	$(VENV)/bin/mypy services tests deploy/k8s deploy/image deploy/compile_engines.py
	cd web && npm run -s check

prometheus: tools-prometheus  ## local Prometheus on 127.0.0.1:9090 scraping every process
	@deploy/prometheus/prometheus.sh start

prometheus-stop:  ## stop the local Prometheus
	@deploy/prometheus/prometheus.sh stop

k8s-generate: $(STAMP)  ## regenerate the PrometheusRule from the rules file
	$(PY) deploy/k8s/gen_rules.py

bench: install kafka  ## benchmarks against floors and boardgame.io (npm ci into .cache/peer; needs Node and Go) in the same run; BENCH_ARGS=--capacity-full for the full human-pace ramp
	$(VENV)/bin/python -m tests.bench $(BENCH_ARGS)

clean: down  ## remove caches and the virtual environment
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
