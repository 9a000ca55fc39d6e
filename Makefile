# Tabletop — one entry point for developers and CI.
#   make up      start Kafka and every service locally (twice is safe); make down stops them
#   make test    install everything, start Kafka, run unit + integration tests
#   make bench   benchmarks → BENCHMARKS.md and bench-results.json
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(sort $(wildcard protos/tabletop/v1/*.proto))
KAFKA := deploy/kafka/kafka.sh

include deploy/make/tools.mk

.PHONY: help install protos check-protos kafka kafka-stop topics up down status test test-unit \
        test-integration lint bench clean

help:  ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(STAMP) protos  ## create .venv and install the project with its dev tools

protos: $(STAMP)  ## generate Python code from protos/ (checked in; see check-protos)
	@deploy/protos.sh protos

check-protos: $(STAMP)  ## fail if the checked-in generated code does not match the protos
	@deploy/protos.sh check

kafka: install  ## fetch (Maven Central) and start the local Kafka broker
	@$(KAFKA) start

kafka-stop:  ## stop the local Kafka broker
	@$(KAFKA) stop

topics: kafka  ## create the topics (auto-create is off)
	@$(VENV)/bin/tabletop admin create-topics

up: kafka  ## start Kafka and every service, wait until healthy
	@$(VENV)/bin/tabletop stack up

down:  ## stop every service and Kafka
	@test ! -x $(VENV)/bin/tabletop || $(VENV)/bin/tabletop stack down
	@$(KAFKA) stop

status:  ## show what is running
	@$(VENV)/bin/tabletop stack status || true

test: install tools-deploy kafka check-protos  ## unit + integration tests against the real Kafka
	$(VENV)/bin/pytest -q -ra --timeout=600

test-unit: install  ## unit tests only (no Kafka)
	$(VENV)/bin/pytest -q -m 'not integration' tests/unit

lint: install  ## ruff and mypy
	$(VENV)/bin/ruff check services tests
	$(VENV)/bin/ruff format --check services tests
	$(VENV)/bin/mypy services tests

bench: install kafka  ## benchmarks against floors measured in the same run
	$(VENV)/bin/python -m tests.bench

clean: down  ## remove caches and the virtual environment
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
