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
# The pytest-xdist workers of `make test` and `make test-goldens-spark`, each with its own Spark session
# (TEST_WORKERS=0: one process); the cluster's tests run on one worker (tests/conftest.py)
TEST_WORKERS ?= 2
PYTEST_WORKERS = -n $(TEST_WORKERS) --dist loadgroup

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
# The integration-test Spark standalone cluster: one master + one worker on 127.0.0.1, run from the installed pyspark
# (SPARK_HOME = the pyspark package), free ports picked at start, logs/pids/work dirs in the run dir
# (deps/spark_cluster_ctl.py). tests/integration/cluster submits to it with the library shipped as $(WHEEL).
SPARK_CLUSTER_RUN    := $(DEPS)/spark-cluster-run
SPARK_CLUSTER_CORES  ?= 2
SPARK_CLUSTER_MEMORY ?= 2g
SPARK_CLUSTER_CTL     = $(if $(wildcard $(PY)),$(PY),$(PYTHON)) deps/spark_cluster_ctl.py --run-dir $(SPARK_CLUSTER_RUN) \
	--cores $(SPARK_CLUSTER_CORES) --memory $(SPARK_CLUSTER_MEMORY)

# The library as a user installs or ships it: a pure-Python wheel built from the working tree (pyproject.toml's
# pinned setuptools, fetched by pip's isolated build). Built from a copy of the sources in a temp dir, so no build/
# or *.egg-info lands in the checkout (a stale build/lib would also leak deleted modules into the next wheel).
VERSION       := $(shell sed -n 's/^version *= *"\(.*\)"/\1/p' pyproject.toml)
WHEEL         := dist/streams_on_spark-$(VERSION)-py3-none-any.whl
# The local file system jar (jvm/local-fs), package data of the library: built by `make setup`
LOCAL_FS_SOURCES := $(wildcard jvm/local-fs/src/streamsonspark/hadoop/*.java)
LOCAL_FS_JAR  := streams_on_spark/jars/streams-on-spark-local-fs.jar
WHEEL_SOURCES := pyproject.toml setup.py $(LOCAL_FS_JAR) $(shell find streams_on_spark connectors state -name __pycache__ -prune -o \( -type d -o -name '*.py' \) -print 2>/dev/null)
# The sources a build sees, copied into the temp dir "$$src" (the wheel's and the sdist's recipes share it)
COPY_SOURCES  = tar -cf - --exclude=__pycache__ --exclude='*.py[cod]' pyproject.toml setup.py $(wildcard README.md LICENSE*) \
	streams_on_spark connectors state | tar -xf - -C "$$src"
# The sdist: the same copy, built by pyproject's pinned setuptools (PEP 517 build_sdist) in a throwaway venv, as pip
# builds the wheel in an isolated environment; no `build` package needed.
SDIST         := dist/streams_on_spark-$(VERSION).tar.gz
SETUPTOOLS_REQ := $(shell sed -n 's/^requires *= *\["\([^"]*\)"\]/\1/p' pyproject.toml)

# Spark workers must use the venv interpreter, and Spark binds to loopback only.
SPARK_ENV_TARGETS := test test-unit test-goldens-spark run bench bench-spark bench-kafka stress-submit checkpoint-fixture
$(SPARK_ENV_TARGETS): export PYSPARK_PYTHON := $(CURDIR)/$(PY)
$(SPARK_ENV_TARGETS): export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)
$(SPARK_ENV_TARGETS): export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: help setup local-fs-jar class-archive deps deps-kafka-broker deps-spark-kafka kafka-up kafka-down spark-cluster-up spark-cluster-down \
	wheel dist test stress-submit test-unit test-goldens-spark run bench bench-kafka bench-spark clean clean-deps kafka-reference \
	checkpoint-fixture docs quix-venv

help: ## List the targets
	@echo "streams-on-spark — make targets:"
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-20s %s\n", $$1, $$2}'

setup: $(SETUP_STAMP) ## Create .venv and install the project (editable) with the test and docs extras

# The venv itself; pyvenv.cfg is a real file (bin/python is a symlink whose mtime is the
# interpreter's), so it is the target. A failed pip upgrade removes the half-made venv.
$(VENV)/pyvenv.cfg:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --progress-bar off --upgrade "pip==$(PIP_VERSION)" || { rm -rf $(VENV); exit 1; }

# Reinstall only when the packaging files change or the venv was recreated.
$(SETUP_STAMP): pyproject.toml setup.py $(VENV)/pyvenv.cfg
	$(PY) -m pip install --progress-bar off -e '.[test,docs]'
	@mkdir -p $(STAMPS)
	@touch $@

# Hadoop's local file system without a process per chmod/readlink (jvm/local-fs; local_session() puts it on the
# driver's class path): javac against the Hadoop jars of the installed pyspark, packaged into the library as
# package data. Every target that runs Spark, and setup, builds it.
local-fs-jar: $(LOCAL_FS_JAR) ## Build the local file system jar (jvm/local-fs) into streams_on_spark/jars/

$(LOCAL_FS_JAR): $(LOCAL_FS_SOURCES) | $(SETUP_STAMP)
	@command -v javac >/dev/null || { echo "javac not found: install a JDK 17 (Maven needs one too)" >&2; exit 1; }
	@classes="$$(mktemp -d)" && trap 'rm -rf "$$classes"' EXIT && \
	jars="$$($(PY) -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')" && \
	javac --release 17 -nowarn -cp "$$jars/*" -d "$$classes" $(LOCAL_FS_SOURCES) && \
	mkdir -p $(dir $@) && jar --create --file $@ -C "$$classes" .
	@echo "built $@"

setup $(SPARK_ENV_TARGETS) bench-latency bench-scale-out bench-test-time: $(LOCAL_FS_JAR)

# A class-data-sharing archive of the classes a Spark JVM loads (streams_on_spark/class_archive.py,
# runtime/spark/session.py): a local session started while STREAMS_ON_SPARK_CLASS_ARCHIVE names it (the suite's, the
# applications its tests start, `make run` once it exists) starts in about half the time, and so do the drivers the
# tests spark-submit (tests/integration/conftest.py's fast_jvm_env, with C1 only) and the test cluster's daemons and
# executors.
# Written by one word count run (~1 min, ~175 MB); rebuilt when the installed packages change (the JVM refuses an
# archive whose class path changed, and starts as without one).
CLASS_ARCHIVE := $(DEPS)/spark-classes.jsa
class-archive: $(CLASS_ARCHIVE) ## Build the class archive that halves a Spark JVM's start (.deps/spark-classes.jsa)

$(CLASS_ARCHIVE): $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	@PYSPARK_PYTHON=$(CURDIR)/$(PY) PYSPARK_DRIVER_PYTHON=$(CURDIR)/$(PY) SPARK_LOCAL_IP=127.0.0.1 \
		$(PY) -m streams_on_spark.class_archive $@ 2>&1 | grep -v "^\(WARNING: Using incubator\|Using Spark's default\|Setting default log level\|To adjust logging\)" || true
	@test -f $@ || { echo "no class archive was written to $@" >&2; exit 1; }

test: $(CLASS_ARCHIVE)
$(SPARK_ENV_TARGETS) bench-latency bench-scale-out bench-test-time: export STREAMS_ON_SPARK_CLASS_ARCHIVE := $(CURDIR)/$(CLASS_ARCHIVE)

# Graphviz's `dot`: the CLI tests render `streams-on-spark visualize --format dot` with it and fail (never skip)
# without it. Installed with apt-get (as root, else through sudo) when absent; the stamp goes with `make clean`.
GRAPHVIZ_STAMP := $(STAMPS)/graphviz
$(GRAPHVIZ_STAMP):
	@command -v dot >/dev/null || { \
		command -v apt-get >/dev/null || { echo "dot not found: install Graphviz (https://graphviz.org/download/)" >&2; exit 1; }; \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends graphviz || \
		{ $$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends graphviz; }; }
	@command -v dot >/dev/null || { echo "Graphviz's dot is still missing after apt-get install graphviz" >&2; exit 1; }
	@mkdir -p $(STAMPS)
	@touch $@

deps: deps-kafka-broker deps-spark-kafka ## Resolve the Kafka broker and Spark Kafka connector jars (mvn, Maven Central)

deps-kafka-broker: $(BROKER_STAMP) ## Resolve the Kafka broker jars (deps/kafka-broker/pom.xml) into .deps/kafka-broker

deps-spark-kafka: $(SPARK_KAFKA_STAMP) ## Resolve the Spark Kafka connector jars (deps/spark-kafka/pom.xml) into .deps/spark-kafka

# A stamp per jar folder: re-resolved only when its pom or the Maven settings change. The folder is emptied
# first, so a version change leaves no stale jar behind.
$(DEPS)/%.stamp: deps/%/pom.xml deps/settings.xml
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(DEPS)/$* && mkdir -p $(DEPS)/$*
	$(MVN_CMD) -f deps/$*/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(DEPS)/$*
	@touch $@

kafka-up: $(SETUP_STAMP) $(BROKER_STAMP) ## Start the test broker (KRaft, 127.0.0.1) in the background; prints its bootstrap address
	@$(KAFKA_CTL) up

kafka-down: ## Stop the test broker started by kafka-up and remove its data
	@$(KAFKA_CTL) down

spark-cluster-up: $(SETUP_STAMP) ## Start the test Spark standalone cluster (master + 1 worker, 127.0.0.1); prints its master URL
	@$(SPARK_CLUSTER_CTL) up

spark-cluster-down: ## Stop the test Spark cluster and any executor it left behind (logs stay in .deps/spark-cluster-run)
	@$(SPARK_CLUSTER_CTL) down

dist: $(WHEEL) $(SDIST) ## Build the wheel and the sdist into dist/ (what users install; README "On a cluster")

$(SDIST): $(WHEEL_SOURCES) | $(SETUP_STAMP)
	@rm -f dist/streams_on_spark-*.tar.gz
	@mkdir -p dist
	@src="$$(mktemp -d)" && env="$$(mktemp -d)" && trap 'rm -rf "$$src" "$$env"' EXIT && $(COPY_SOURCES) && \
	$(PY) -m venv "$$env" && "$$env/bin/pip" install --progress-bar off -q "$(SETUPTOOLS_REQ)" && \
	(cd "$$src" && "$$env/bin/python" -c 'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' \
		"$(CURDIR)/dist" >/dev/null)
	@test -f $@ || { echo "the build did not produce $@: $$(ls dist)" >&2; exit 1; }
	@echo "built $@"

wheel: $(WHEEL) ## Build the library's wheel into dist/ (what tests/integration/cluster ships to executors)

$(WHEEL): $(WHEEL_SOURCES) | $(SETUP_STAMP)
	@rm -f dist/streams_on_spark-*.whl
	@mkdir -p dist
	@src="$$(mktemp -d)" && trap 'rm -rf "$$src"' EXIT && $(COPY_SOURCES) && \
	$(PY) -m pip wheel --no-deps --progress-bar off -q -w dist "$$src"
	@test -f $@ || { echo "the build did not produce $@: $$(ls dist)" >&2; exit 1; }
	@echo "built $@"

# The broker and the Spark cluster are up for the whole suite and stopped afterwards whatever pytest's outcome (EXIT
# trap, also on Ctrl-C/TERM); the kafka- and cluster-marked tests find them through STREAMS_ON_SPARK_KAFKA and
# STREAMS_ON_SPARK_SPARK_MASTER (+ STREAMS_ON_SPARK_WHEEL, the library they ship) and fail (never skip) if they do
# not answer.
test: $(SETUP_STAMP) $(GRAPHVIZ_STAMP) $(BROKER_STAMP) $(SPARK_KAFKA_STAMP) $(WHEEL) ## Run the whole pytest suite (tests/) on TEST_WORKERS pytest-xdist workers (default 2, 0: one process), with a Kafka broker and a Spark cluster for tests/integration
	@$(MAKE) --no-print-directory kafka-up
	@trap '$(MAKE) --no-print-directory spark-cluster-down; $(MAKE) --no-print-directory kafka-down' EXIT; \
	trap 'exit 130' INT; trap 'exit 143' TERM; \
	$(MAKE) --no-print-directory spark-cluster-up || exit $$?; \
	export STREAMS_ON_SPARK_KAFKA="$$(cat $(KAFKA_RUN)/bootstrap)"; \
	export STREAMS_ON_SPARK_SPARK_MASTER="$$(cat $(SPARK_CLUSTER_RUN)/master)"; \
	export STREAMS_ON_SPARK_SPARK_CLUSTER_DIR="$(abspath $(SPARK_CLUSTER_RUN))"; \
	export STREAMS_ON_SPARK_WHEEL="$(abspath $(WHEEL))"; \
	echo "$(PYTEST) $(PYTEST_WORKERS) $(PYTEST_ARGS)  (STREAMS_ON_SPARK_KAFKA=$$STREAMS_ON_SPARK_KAFKA" \
		"STREAMS_ON_SPARK_SPARK_MASTER=$$STREAMS_ON_SPARK_SPARK_MASTER STREAMS_ON_SPARK_WHEEL=$(WHEEL))"; \
	$(PYTEST) $(PYTEST_WORKERS) $(PYTEST_ARGS)

# The spark-submit test 20 times in a row with two busy loops loading the machine (not part of `make test`).
stress-submit: $(SETUP_STAMP) $(BROKER_STAMP) $(SPARK_KAFKA_STAMP) ## Run the spark-submit test 20x under CPU load (deps/stress_submit.py)
	@$(MAKE) --no-print-directory kafka-up
	@trap '$(MAKE) --no-print-directory kafka-down' EXIT; \
	export STREAMS_ON_SPARK_KAFKA="$$(cat $(KAFKA_RUN)/bootstrap)"; \
	$(PY) deps/stress_submit.py $(STRESS_ARGS)

test-unit: $(SETUP_STAMP) $(GRAPHVIZ_STAMP) ## Run the fast unit tests only (tests/unit), in one process
	$(PYTEST) tests/unit $(PYTEST_ARGS)

test-goldens-spark: $(SETUP_STAMP) ## Every Kafka golden on the Spark engine at 1 and 4 partitions, on TEST_WORKERS workers (~30 min in one process on a loaded 2-core box; the suite runs 1 partition)
	STREAMS_ON_SPARK_GOLDENS=all $(PYTEST) $(PYTEST_WORKERS) tests/conformance/test_kafka_reference.py -m spark $(PYTEST_ARGS)

run: $(SETUP_STAMP) ## Run the word count on Spark over embedded topics, 4 partitions (examples/wordcount.py)
	$(PY) examples/wordcount.py

# The documentation site (mkdocs.yml over docs/): strict, so a broken link, anchor or nav entry fails the build.
docs: $(SETUP_STAMP) ## Build the documentation site into site/
	$(VENV)/bin/mkdocs build --strict -d site

# Kafka's own TopologyTestDriver on the word count, the Java baseline of `make bench` (defined before the rule: make
# expands prerequisites when it reads them).
JAVA_DRIVER_BENCH     := bench/baselines/kafka-streams-driver-wordcount
JAVA_DRIVER_BENCH_JAR := $(JAVA_DRIVER_BENCH)/target/kafka-streams-driver-wordcount.jar

bench: $(SETUP_STAMP) $(JAVA_DRIVER_BENCH_JAR) ## Driver throughput, 1M-word word count: ours (4 partitions) vs plain Python vs Kafka's Java TopologyTestDriver (bench/driver_throughput.py)
	$(PY) bench/driver_throughput.py $(BENCH_ARGS)

bench-spark: $(SETUP_STAMP) ## Spark engine vs hand-written PySpark, state-size and global-table cost (bench/spark_engine.py)
	$(PY) bench/spark_engine.py

clean-deps: kafka-down spark-cluster-down ## Remove the resolved jars (.deps/) and run dirs; the next `make test` resolves them again
	rm -rf $(DEPS)

JAVA_BENCH     := bench/baselines/kafka-streams-wordcount
JAVA_BENCH_JAR := $(JAVA_BENCH)/target/kafka-streams-wordcount.jar

# The Java Kafka Streams baseline (kafka-streams at the broker's version, from Maven Central); target/ is emptied
# first so a version change leaves no stale jar in target/lib.
$(JAVA_BENCH_JAR): $(JAVA_BENCH)/pom.xml $(JAVA_BENCH)/src/main/java/WordCount.java deps/settings.xml
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(JAVA_BENCH)/target
	$(MVN_CMD) -f $(JAVA_BENCH)/pom.xml package

# Kafka's own TopologyTestDriver (kafka-streams-test-utils at the broker's version) on the same word count: the Java
# baseline of `make bench` (bench/driver_throughput.py --runs java,java-nocache).
$(JAVA_DRIVER_BENCH_JAR): $(JAVA_DRIVER_BENCH)/pom.xml $(JAVA_DRIVER_BENCH)/src/main/java/DriverWordCount.java deps/settings.xml
	@command -v $(MVN) >/dev/null || { echo "$(MVN) not found: install Maven 3.8+ (apt-get install maven)" >&2; exit 1; }
	rm -rf $(JAVA_DRIVER_BENCH)/target
	$(MVN_CMD) -f $(JAVA_DRIVER_BENCH)/pom.xml package

# Quix Streams, the Python peer of bench-kafka (--runs quix), in its own venv so that its dependencies never touch the
# project's pinned set. Rebuilt from scratch when the pinned version changes; a failed install removes the half-made venv.
QUIX_VENV  := .venv-quix
QUIX_REQS  := bench/baselines/quix/requirements.txt
QUIX_STAMP := $(QUIX_VENV)/.installed

quix-venv: $(QUIX_STAMP) ## Create .venv-quix with Quix Streams (bench/baselines/quix/requirements.txt) for bench-kafka

$(QUIX_STAMP): $(QUIX_REQS)
	rm -rf $(QUIX_VENV)
	$(PYTHON) -m venv $(QUIX_VENV)
	{ $(QUIX_VENV)/bin/python -m pip install --progress-bar off -q --upgrade "pip==$(PIP_VERSION)" && \
	  $(QUIX_VENV)/bin/python -m pip install --progress-bar off -q -r $(QUIX_REQS); } || { rm -rf $(QUIX_VENV); exit 1; }
	@touch $@

bench-kafka: $(SETUP_STAMP) $(BROKER_STAMP) $(SPARK_KAFKA_STAMP) $(JAVA_BENCH_JAR) $(QUIX_STAMP) ## Word count end to end on Kafka: ours vs PySpark vs Java Kafka Streams vs Quix Streams (bench/kafka_end_to_end.py)
	@$(MAKE) --no-print-directory kafka-up
	@trap '$(MAKE) --no-print-directory kafka-down' EXIT; \
	export STREAMS_ON_SPARK_KAFKA="$$(cat $(KAFKA_RUN)/bootstrap)"; \
	$(PY) bench/kafka_end_to_end.py $(BENCH_ARGS)

# Issue 25's fixed-cost benchmarks. bench-latency runs local[2] over embedded topics; BENCH_ARGS="--kafka" runs it on the
# broker of `make kafka-up` (STREAMS_ON_SPARK_KAFKA, else .deps/kafka-run/bootstrap), e.g. BENCH_ARGS="--samples 20
# --trigger-interval '50 milliseconds'". bench-scale-out starts its own standalone cluster in .deps/bench-spark-cluster-run
# and stops it afterwards (BENCH_ARGS="--master spark://..." uses a running one), shipping the wheel of `make wheel` as
# the cluster tests do.
.PHONY: bench-latency bench-scale-out bench-test-time
bench-latency bench-scale-out bench-test-time: export PYSPARK_PYTHON := $(CURDIR)/$(PY)
bench-latency bench-scale-out bench-test-time: export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)
bench-latency bench-scale-out bench-test-time: export SPARK_LOCAL_IP := 127.0.0.1

bench-latency: $(SETUP_STAMP) ## End-to-end latency, one sentence at a time through the README word count's 2 hops: p50/p90/p99/max, per-query trigger floor (bench/latency.py)
	$(PY) bench/latency.py $(BENCH_ARGS)

bench-test-time: $(SETUP_STAMP) ## One Spark-engine test (README word count, 4 partitions) once the session is up, beside the in-process engine (bench/test_time.py)
	$(PY) bench/test_time.py $(BENCH_ARGS)

bench-scale-out: $(SETUP_STAMP) $(WHEEL) ## Standalone cluster (one 2-core worker): word count words/s with spark.cores.max 1 vs 2 and the ratio (bench/scale_out.py)
	$(PY) bench/scale_out.py $(BENCH_ARGS)

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

# A checkpoint written by this version that later versions must keep resuming
# (tests/integration/spark/test_checkpoint_fixture.py): rewrite it only for a deliberate format change.
checkpoint-fixture: $(SETUP_STAMP) ## Rewrite tests/data/checkpoint-fixture (a checkpoint later versions must resume)
	cd tests/integration/spark/apps && $(CURDIR)/$(PY) make_checkpoint_fixture.py $(CURDIR)/tests/data/checkpoint-fixture

kafka-reference: $(KAFKA_REF_JAR) ## Regenerate the Kafka Streams 4.3.1 goldens tests/data/kafka-reference/*.json (Java, mvn)
	$(if $(SCENARIOS),,rm -f tests/data/kafka-reference/*.json)
	java -cp '$(KAFKA_REF_JAR):$(KAFKA_REF)/target/lib/*' streamsonspark.reference.ReferenceMain tests/data/kafka-reference $(SCENARIOS)

clean: spark-cluster-down ## Stop the Spark cluster; remove .venv, .venv-quix, stamps, dist/, build artifacts, caches (jars stay: clean-deps)
	rm -rf $(VENV) $(QUIX_VENV) $(STAMPS) build dist site *.egg-info .pytest_cache spark-warehouse metastore_db derby.log \
		$(JAVA_BENCH)/target $(JAVA_DRIVER_BENCH)/target $(KAFKA_REF)/target
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
	find . -path ./.git -prune -o -type d -name '*.egg-info' -prune -exec rm -rf {} +
