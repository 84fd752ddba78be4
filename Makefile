# The two set-up commands of the README: `make run` and `make test`.
# Both create .venv. `make run` installs the package, compiled (a C compiler
# and the Python headers, from Debian when missing), what serve needs
# ([server]) and the one client library the README's steps use
# ([kafka-python]), no test tools; `make test` installs
# the [test] extra, system packages (a JDK, ZooKeeper, kcat), Kafka's client
# jars, pyspark and Spark's Kafka connector.

# The distribution's CPython 3.11 when there is one: Debian and Ubuntu build it
# with profile-guided optimisation and link it statically, about 25% faster
# than a default pyenv or source build (docs/performance.md).
# `make PYTHON=...` overrides.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3.11) python3)
VENV := .venv
PY := $(VENV)/bin/python
CACHE ?= $(HOME)/.cache/kafka-scram
export KAFKA_SCRAM_CACHE := $(CACHE)
export KAFKA_SCRAM_JARS := $(CACHE)/jars
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test check bench fuzz soak lint typecheck pytest system toolchain jars brokers kroxylicious spark venv native clean

# The interpreter and pip; built only when missing (or after `make clean`).
$(PY):
	$(PYTHON) -m venv --clear $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The sources of the compiled modules: an edit to one reinstalls, which rebuilds.
NATIVE_SOURCES := $(shell $(PYTHON) tools/build_native.py --sources)

# What `make run` needs: the package, what serve needs ([server]: its event
# loop and metrics library; a ZooKeeper store would need [zookeeper]) and the
# README's client library. The install compiles the login path (setup.py runs
# tools/build_native.py with mypyc in pip's build environment, so the venv
# gets no test tool).
$(VENV)/.run-installed: pyproject.toml setup.py tools/build_native.py $(NATIVE_SOURCES) | $(PY) toolchain
	$(PY) -m pip install -q -e '.[kafka-python,server]'
	touch $@

# Everything the tests need.
$(VENV)/.installed: pyproject.toml setup.py tools/build_native.py | $(PY) toolchain
	$(PY) -m pip install -q -e '.[test,native]'
	touch $@

venv: $(VENV)/.installed

# The compiled core's build needs a C compiler and the headers of the venv's
# Python (python3.11-dev for /usr/bin/python3.11); installed only when missing.
toolchain:
	@pkgs=""; \
	if ! command -v cc >/dev/null 2>&1; then pkgs="$$pkgs gcc"; fi; \
	if [ ! -f /usr/include/openssl/hmac.h ]; then pkgs="$$pkgs libssl-dev"; fi; \
	if [ ! -f "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then \
	  pkgs="$$pkgs $$(basename $$(readlink -f $(PYTHON)))-dev"; fi; \
	if [ -n "$$pkgs" ]; then apt-get update -q && apt-get install -y -q $$pkgs; fi

# System packages the interop tests need. A JDK (not only a JRE) is needed
# because the Java harnesses are compiled at test time.
system: toolchain
	@pkgs=""; \
	if ! command -v javac >/dev/null 2>&1; then pkgs="$$pkgs openjdk-17-jdk-headless"; fi; \
	if [ ! -f /usr/share/java/zookeeper.jar ]; then pkgs="$$pkgs zookeeper"; fi; \
	if ! command -v kcat >/dev/null 2>&1; then pkgs="$$pkgs kcat"; fi; \
	if ! command -v mvn >/dev/null 2>&1; then pkgs="$$pkgs maven"; fi; \
	if [ -n "$$pkgs" ]; then apt-get update -q && apt-get install -y -q $$pkgs; fi

jars: venv system
	$(PY) -m tools.fetch_kafka_jars

# Apache Kafka's brokers and tools (4.x for KRaft, 3.9 for ZooKeeper mode) from
# Maven Central into $(CACHE)/kafka-<version>/libs; offline once cached.
brokers: system
	$(PYTHON) tools/fetch_kafka_broker.py

# Kroxylicious's proxy runtime and its dependencies from Maven Central into
# $(CACHE)/kroxylicious-<version>/libs, for the front-door bench's
# side-by-side row (the bench compiles its launcher against them); offline
# once cached.
kroxylicious: system
	$(PYTHON) -m tools.fetch_kroxylicious

# The compiled core (sasl_scram/_native): mypyc builds the login path's modules
# from their sources; skipped while no source has changed. The editable
# install builds it too; `make test` and `make bench` require it, `make run`
# reinstalls, so rebuilds, after an edit (pure Python, said at start, if it cannot).
native: venv system
	$(PY) tools/build_native.py --require

# The main job: the Kafka-protocol endpoint on 127.0.0.1:9092 (Ctrl-C stops it).
# `make run PORT=9093` picks another port without editing a tracked file
# (advertised.listeners, unset, follows listeners).
SERVE_PORT = $(if $(PORT),--override listeners=SASL_PLAINTEXT://127.0.0.1:$(PORT))
run: $(VENV)/.run-installed
	$(PY) examples/quickstart.py
	$(VENV)/bin/kafka-scram serve --config config/server.properties $(SERVE_PORT)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: venv spark
	$(VENV)/bin/mypy

# PySpark is pinned to a release whose Kafka connector
# (org.apache.spark:spark-sql-kafka-0-10_2.13) is on Maven Central: 4.3.0's is
# not. Its PyPI release is a ~450 MB sdist: build the wheel once into
# $(CACHE)/wheels (outside the repository, kept across clones), then install
# from there. Then Spark's Ivy resolves that connector into $(CACHE)/ivy
# (spark.jars.packages, as the tests load it); offline once cached.
# Fast and idempotent once installed.
PYSPARK_VERSION := 4.2.0
spark: venv system
	@$(PY) -c "import sys, pyspark; sys.exit(pyspark.__version__ != '$(PYSPARK_VERSION)')" 2>/dev/null || { \
	  ls $(CACHE)/wheels/pyspark-$(PYSPARK_VERSION)-*.whl >/dev/null 2>&1 || \
	    $(PY) -m pip wheel -q pyspark==$(PYSPARK_VERSION) -w $(CACHE)/wheels; \
	  $(PY) -m pip install -q --find-links $(CACHE)/wheels 'pyspark==$(PYSPARK_VERSION)'; }
	$(PY) -m tools.fetch_spark_connector

# The whole suite runs the compiled core; the core's own tests run once more
# as pure Python, the form a plain `pip install` gets.
PURE_TESTS := tests/sasl_scram/test_exchange.py tests/sasl_scram/test_fuzz.py \
  tests/sasl_scram/test_messages.py tests/sasl_scram/test_vectors.py tests/sasl_scram/kafka \
  $(addprefix tests/sasl_scram/endpoint/test_,connection.py deadlines.py protocol_writes.py hostile_peers.py)

# pytest-xdist runs the suite on every core. --dist loadgroup keeps the tests
# that share the session's real brokers and Spark (xdist_group, set in
# tests/conftest.py from their fixtures) on one worker, so those JVMs start
# once; ZooKeeper tests isolate themselves with chroots and free ports.
# HYPOTHESIS_PROFILE: `ci` here (more examples), `dev` in `make check`.
XDIST := -n auto --dist loadgroup
pytest: venv system jars brokers spark native
	HYPOTHESIS_PROFILE=ci $(VENV)/bin/pytest -q $(XDIST) --durations=25
	KAFKA_SCRAM_PURE_PYTHON=1 HYPOTHESIS_PROFILE=ci $(VENV)/bin/pytest -q $(XDIST) $(PURE_TESTS)

test: lint typecheck pytest

# The one-minute loop: lint, types and every test that needs no JVM (no
# ZooKeeper, broker or Spark) and is not marked slow, on the venv alone.
# tests/conftest.py marks tests from the fixtures they use (docs/architecture.md).
# pytest-xdist on every core (-n auto), grouped as `make test` groups them:
# about 40 s for the whole loop on the 2-core machine.
CHECK_TESTS := not jvm and not zookeeper and not broker and not spark and not slow
check: venv
	@start=$$(date +%s); \
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy && \
	  HYPOTHESIS_PROFILE=dev $(VENV)/bin/pytest -q -n auto --dist loadgroup -m "$(CHECK_TESTS)"; \
	status=$$?; echo "make check: $$(( $$(date +%s) - start )) s"; exit $$status

# The endpoint bench builds bench/java_style_client.c with the system compiler
# and libcrypto (make system installs both) and runs it against this tree's
# `serve` and Apache Kafka's own broker (make brokers), pinned side by side.
# `make bench BENCH_BASELINE=/tmp/old` also runs the code of another checkout
# (git worktree add /tmp/old <commit>), in alternating rounds: the endpoint's
# rows and the front door's (one worker). The front-door
# bench runs Kafka's own ProducerPerformance and ConsumerPerformance (the
# kafka-tools jar make brokers fetched) direct to a broker and through serve;
# its side-by-side row runs Kroxylicious (make kroxylicious) as a
# pass-through beside serve, in front of the same broker;
# the rewrite bench weighs rewriting KIP-951's NodeEndpoints against capping
# Fetch and Produce below them, on a real broker's responses; the proxy-core
# bench times the forwarding path per request, pure Python and compiled (with
# BENCH_BASELINE, against the other checkout's too).
bench: venv system brokers kroxylicious native
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/bench_scram.py
	$(PY) bench/bench_endpoint.py $(if $(BENCH_BASELINE),--baseline $(BENCH_BASELINE))
	$(PY) bench/bench_stores.py
	$(PY) bench/bench_frontdoor.py $(if $(BENCH_BASELINE),--baseline $(BENCH_BASELINE))
	$(PY) bench/bench_rewrite.py
	$(PY) bench/bench_authorization.py
	$(PY) bench/bench_proxy_core.py $(if $(BENCH_BASELINE),--compare $(BENCH_BASELINE))

# `serve` under churn for SOAK_MINUTES (default 30), its RSS, descriptors,
# tasks and connections sampled every minute; writes docs/soak/soak.{md,png}.
# (`system` brings the compiler and OpenSSL's headers the load generator needs.)
SOAK_MINUTES ?= 30
soak: venv system
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/soak.py --minutes $(SOAK_MINUTES)

# Coverage-guided fuzzing (atheris) of every input surface, FUZZ_SECONDS each
# (default 60); crashes are saved to fuzz/crashes/<target>/ and replayed by
# `make test`. `python fuzz/seeds.py` rewrites the seed corpus. FUZZ_JOBS
# targets run side by side (default 1: one core each, clean figures).
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
fuzz: venv
	$(PY) fuzz/run.py --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis \
	  sasl_scram/_native/lib sasl_scram/_native/*.so sasl_scram/_native/manifest.json \
	  sasl_scram/_native/not-built.txt build
