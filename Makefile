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

# Jars resolved with Maven from Maven Central (deps/*/pom.xml) into .deps/ (ignored; kept by `make clean`:
# resolving them takes a minute or two, once per machine). MAVEN_REPO_LOCAL=dir overrides ~/.m2/repository.
MVN         ?= mvn
MVN_FLAGS   ?= -B -q -Dstyle.color=never
MVN_CMD      = $(MVN) $(MVN_FLAGS) -s deps/settings.xml $(if $(MAVEN_REPO_LOCAL),-Dmaven.repo.local=$(MAVEN_REPO_LOCAL))
DEPS        := .deps
BROKER_JARS := $(DEPS)/kafka-broker
SPARK_KAFKA_JARS := $(DEPS)/spark-kafka
BROKER_STAMP := $(DEPS)/kafka-broker.stamp
SPARK_KAFKA_STAMP := $(DEPS)/spark-kafka.stamp
# The integration-test broker: KRaft, single node, loopback, free ports picked at start (deps/kafka_ctl.py).
KAFKA_RUN   := $(DEPS)/kafka-run
KAFKA_CTL   = $(if $(wildcard $(PY)),$(PY),$(PYTHON)) deps/kafka_ctl.py --jars $(BROKER_JARS) --run-dir $(KAFKA_RUN)

# Spark workers must use the venv interpreter, and Spark binds to loopback only.
SPARK_ENV_TARGETS := test test-unit run bench bench-spark bench-kafka
$(SPARK_ENV_TARGETS): export PYSPARK_PYTHON := $(CURDIR)/$(PY)
$(SPARK_ENV_TARGETS): export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)
$(SPARK_ENV_TARGETS): export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: help setup deps deps-kafka-broker deps-spark-kafka kafka-up kafka-down test test-unit run bench bench-kafka \
	bench-spark clean clean-deps kafka-reference

help: ## List the targets
	@echo "streams-on-spark — make targets:"
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-18s %s\n", $$1, $$2}'

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

deps: deps-kafka-broker deps-spark-kafka ## Resolve the Kafka broker and Spark Kafka connector jars (mvn, Maven Central)

deps-kafka-broker: $(BROKER_STAMP) ## Resolve the Kafka broker jars (deps/kafka-broker/pom.xml) into .deps/kafka-broker

deps-spark-kafka: $(SPARK_KAFKA_STAMP) ## Resolve the Spark Kafka connector jars and build ours (deps/spark-kafka) into .deps/spark-kafka

# A stamp per jar folder: re-resolved only when its pom or the Maven settings change. The folder is emptied
# first, so a version change leaves no stale jar behind.
$(DEPS)/%.stamp: deps/%/pom.xml deps/settings.xml
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(DEPS)/$* && mkdir -p $(DEPS)/$*
	$(MVN_CMD) -f deps/$*/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(DEPS)/$*
	@touch $@

# The Spark Kafka connector's jars, plus the project's own streams-on-spark-kafka.jar built from
# deps/spark-kafka/src (the connector's record batch writer), so one folder holds everything spark.jars needs.
SPARK_KAFKA_SOURCES := $(shell find deps/spark-kafka/src -name '*.java' 2>/dev/null)
$(SPARK_KAFKA_STAMP): deps/spark-kafka/pom.xml deps/settings.xml $(SPARK_KAFKA_SOURCES)
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(SPARK_KAFKA_JARS) $(DEPS)/build/spark-kafka && mkdir -p $(SPARK_KAFKA_JARS)
	$(MVN_CMD) -f deps/spark-kafka/pom.xml package dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(SPARK_KAFKA_JARS)
	cp $(DEPS)/build/spark-kafka/streams-on-spark-kafka.jar $(SPARK_KAFKA_JARS)/
	@touch $@

kafka-up: $(SETUP_STAMP) $(BROKER_STAMP) ## Start the test broker (KRaft, 127.0.0.1) in the background; prints its bootstrap address
	@$(KAFKA_CTL) up

kafka-down: ## Stop the test broker started by kafka-up and remove its data
	@$(KAFKA_CTL) down

# The broker is up for the whole suite and stopped afterwards whatever pytest's outcome (EXIT trap); the
# kafka-marked tests find it through STREAMS_ON_SPARK_KAFKA and fail (never skip) if it does not answer.
test: $(SETUP_STAMP) $(BROKER_STAMP) $(SPARK_KAFKA_STAMP) ## Run the whole pytest suite (tests/), with a Kafka broker for tests/integration/kafka
	@$(MAKE) --no-print-directory kafka-up
	@trap '$(MAKE) --no-print-directory kafka-down' EXIT; \
	export STREAMS_ON_SPARK_KAFKA="$$(cat $(KAFKA_RUN)/bootstrap)"; \
	echo "$(PYTEST) $(PYTEST_ARGS)  (STREAMS_ON_SPARK_KAFKA=$$STREAMS_ON_SPARK_KAFKA)"; \
	$(PYTEST) $(PYTEST_ARGS)

test-unit: $(SETUP_STAMP) ## Run the fast unit tests only (tests/unit)
	$(PYTEST) tests/unit $(PYTEST_ARGS)

run: $(SETUP_STAMP) ## Run the word count on Spark over embedded topics, 4 partitions (examples/wordcount.py)
	$(PY) examples/wordcount.py

bench: $(SETUP_STAMP) ## Driver throughput: 1M words through the word count, 4 partitions (bench/driver_throughput.py)
	$(PY) bench/driver_throughput.py

bench-spark: $(SETUP_STAMP) ## Spark engine vs hand-written PySpark, and state-size cost (bench/spark_engine.py)
	$(PY) bench/spark_engine.py

clean-deps: kafka-down ## Remove the resolved jars (.deps/); the next `make test` resolves them again
	rm -rf $(DEPS)

JAVA_BENCH     := bench/baselines/kafka-streams-wordcount
JAVA_BENCH_JAR := $(JAVA_BENCH)/target/kafka-streams-wordcount.jar

# The Java Kafka Streams baseline (kafka-streams at the broker's version, from Maven Central); target/ is emptied
# first so a version change leaves no stale jar in target/lib.
$(JAVA_BENCH_JAR): $(JAVA_BENCH)/pom.xml $(JAVA_BENCH)/src/main/java/WordCount.java deps/settings.xml
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(JAVA_BENCH)/target
	$(MVN_CMD) -f $(JAVA_BENCH)/pom.xml package

bench-kafka: $(SETUP_STAMP) $(BROKER_STAMP) $(SPARK_KAFKA_STAMP) $(JAVA_BENCH_JAR) ## Word count end to end on Kafka: ours vs PySpark vs Java Kafka Streams (bench/kafka_end_to_end.py)
	@$(MAKE) --no-print-directory kafka-up
	@trap '$(MAKE) --no-print-directory kafka-down' EXIT; \
	export STREAMS_ON_SPARK_KAFKA="$$(cat $(KAFKA_RUN)/bootstrap)"; \
	$(PY) bench/kafka_end_to_end.py $(BENCH_ARGS)

# Kafka Streams reference goldens (deps/kafka-reference): the scenarios run with Kafka's own TopologyTestDriver
# (kafka-streams-test-utils 4.3.1, Maven Central) write tests/data/kafka-reference/*.json, which
# tests/conformance/test_kafka_reference.py compares our outputs with. The goldens are committed; `make test` only
# reads them and never rebuilds them. SCENARIOS="wordcount- reduce-" regenerates only files with those prefixes.
KAFKA_REF     := deps/kafka-reference
KAFKA_REF_JAR := $(KAFKA_REF)/target/kafka-reference.jar
KAFKA_REF_SOURCES := $(shell find $(KAFKA_REF)/src -name '*.java' 2>/dev/null)

$(KAFKA_REF_JAR): $(KAFKA_REF)/pom.xml $(KAFKA_REF_SOURCES) deps/settings.xml
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(KAFKA_REF)/target
	$(MVN_CMD) -f $(KAFKA_REF)/pom.xml package

kafka-reference: $(KAFKA_REF_JAR) ## Regenerate the Kafka Streams 4.3.1 goldens tests/data/kafka-reference/*.json (Java, mvn)
	$(if $(SCENARIOS),,rm -f tests/data/kafka-reference/*.json)
	java -cp '$(KAFKA_REF_JAR):$(KAFKA_REF)/target/lib/*' streamsonspark.reference.ReferenceMain tests/data/kafka-reference $(SCENARIOS)

clean: ## Remove .venv, stamps, build artifacts and caches (not the resolved jars: see clean-deps)
	rm -rf $(VENV) $(STAMPS) build dist *.egg-info .pytest_cache spark-warehouse metastore_db derby.log $(JAVA_BENCH)/target \
		$(KAFKA_REF)/target
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
	find . -path ./.git -prune -o -type d -name '*.egg-info' -prune -exec rm -rf {} +
