# streams-on-spark — developer and CI entry points. `make` (or `make help`) lists targets.
#
# Everything runs through the project venv's own executables (.venv/bin/python, .venv/bin/pytest);
# nothing relies on an activated shell. The project is installed in editable mode: setuptools'
# editable finder maps streams_on_spark, streams_on_spark.connectors (-> connectors/) and
# streams_on_spark.state (-> state/), so source edits need no reinstall.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON      ?= python3
PIP_VERSION := 26.3
VENV        := .venv
PY          := $(VENV)/bin/python
PYTEST      := $(VENV)/bin/pytest
STAMPS      := .stamps
SETUP_STAMP := $(STAMPS)/setup
PYTEST_ARGS ?=

# Spark workers must use the venv interpreter, and Spark binds to loopback only.
SPARK_ENV_TARGETS := test test-unit run bench bench-spark
$(SPARK_ENV_TARGETS): export PYSPARK_PYTHON := $(CURDIR)/$(PY)
$(SPARK_ENV_TARGETS): export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)
$(SPARK_ENV_TARGETS): export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: help setup test test-unit run bench bench-spark clean

help: ## List the targets
	@echo "streams-on-spark — make targets:"
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

setup: $(SETUP_STAMP) ## Create .venv and install the project (editable) with the test extra

# The venv itself; pyvenv.cfg is a real file (bin/python is a symlink whose mtime is the
# interpreter's), so it is the target. A failed pip upgrade removes the half-made venv.
$(VENV)/pyvenv.cfg:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --progress-bar off --upgrade "pip==$(PIP_VERSION)" || { rm -rf $(VENV); exit 1; }

# Reinstall only when the packaging files change or the venv was recreated.
$(SETUP_STAMP): pyproject.toml setup.py $(VENV)/pyvenv.cfg
	$(PY) -m pip install --progress-bar off -e '.[test]'
	@mkdir -p $(STAMPS)
	@touch $@

test: $(SETUP_STAMP) ## Run the whole pytest suite (tests/)
	$(PYTEST) $(PYTEST_ARGS)

test-unit: $(SETUP_STAMP) ## Run the fast unit tests only (tests/unit)
	$(PYTEST) tests/unit $(PYTEST_ARGS)

run: $(SETUP_STAMP) ## Run the word count on Spark over embedded topics, 4 partitions (examples/wordcount.py)
	$(PY) examples/wordcount.py

bench: $(SETUP_STAMP) ## Driver throughput: 1M words through the word count, 4 partitions (bench/driver_throughput.py)
	$(PY) bench/driver_throughput.py

bench-spark: $(SETUP_STAMP) ## Spark engine vs hand-written PySpark, and state-size cost (bench/spark_engine.py)
	$(PY) bench/spark_engine.py

clean: ## Remove .venv, stamps, build artifacts and caches
	rm -rf $(VENV) $(STAMPS) build dist *.egg-info .pytest_cache spark-warehouse metastore_db derby.log
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
	find . -path ./.git -prune -o -type d -name '*.egg-info' -prune -exec rm -rf {} +
