# The two set-up commands of the README: `make run` and `make test`.
# Both create .venv. `make run` installs the package and the one client library
# the README's steps use ([kafka-python]), no test tools and no system packages;
# `make test` installs the [test] extra, system packages (a JDK, ZooKeeper, kcat),
# Kafka's client jars and pyspark.

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

.PHONY: run test bench lint typecheck pytest system jars brokers spark venv native clean

# The interpreter and pip; built only when missing (or after `make clean`).
$(PY):
	$(PYTHON) -m venv --clear $(VENV)
	$(PY) -m pip install -q --upgrade pip

# What `make run` needs: the package and the README's client library.
$(VENV)/.run-installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[kafka-python]'
	touch $@

# Everything the tests need.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test,native]'
	touch $@

venv: $(VENV)/.installed

# System packages the interop tests need. A JDK (not only a JRE) is needed
# because the Java harnesses are compiled at test time.
system:
	@pkgs=""; \
	if ! command -v javac >/dev/null 2>&1; then pkgs="$$pkgs openjdk-17-jdk-headless"; fi; \
	if [ ! -f /usr/share/java/zookeeper.jar ]; then pkgs="$$pkgs zookeeper"; fi; \
	if ! command -v kcat >/dev/null 2>&1; then pkgs="$$pkgs kcat"; fi; \
	if ! command -v mvn >/dev/null 2>&1; then pkgs="$$pkgs maven"; fi; \
	if ! command -v cc >/dev/null 2>&1; then pkgs="$$pkgs gcc"; fi; \
	if [ ! -f /usr/include/openssl/hmac.h ]; then pkgs="$$pkgs libssl-dev"; fi; \
	if [ ! -f "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then \
	  pkgs="$$pkgs $$(basename $$(readlink -f $(PYTHON)))-dev"; fi; \
	if [ -n "$$pkgs" ]; then apt-get update -q && apt-get install -y -q $$pkgs; fi

jars: venv
	$(PY) tools/fetch_kafka_jars.py

# Apache Kafka's brokers and tools (4.x for KRaft, 3.9 for ZooKeeper mode) from
# Maven Central into $(CACHE)/kafka-<version>/libs; offline once cached.
brokers: system
	$(PYTHON) tools/fetch_kafka_broker.py

# The compiled core (sasl_scram/_native): mypyc builds the login path's modules
# from their sources; skipped while no source has changed. `make test` and
# `make bench` require it; `make run` installs no compiler and uses it only
# when an earlier `make test` or `make bench` built it (else pure Python).
native: venv system
	$(PY) tools/build_native.py --require

# The main job: the Kafka-protocol endpoint on 127.0.0.1:9092 (Ctrl-C stops it).
run: $(VENV)/.run-installed
	$(PY) examples/quickstart.py
	$(VENV)/bin/kafka-scram serve --config config/server.properties

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: venv spark
	$(VENV)/bin/mypy

# PySpark 4.3.0 is a ~450 MB sdist: build its wheel once into $(CACHE)/wheels
# (outside the repository, kept across clones), then install from there.
# Fast and idempotent once installed.
spark: venv
	@$(PY) -c "import sys, pyspark; sys.exit(pyspark.__version__ != '4.3.0')" 2>/dev/null || { \
	  ls $(CACHE)/wheels/pyspark-4.3.0-*.whl >/dev/null 2>&1 || \
	    $(PY) -m pip wheel -q pyspark==4.3.0 -w $(CACHE)/wheels; \
	  $(PY) -m pip install -q --find-links $(CACHE)/wheels 'pyspark==4.3.0'; }

# The whole suite runs the compiled core; the core's own tests run once more
# as pure Python, the form a plain `pip install` gets.
PURE_TESTS := tests/sasl_scram/test_exchange.py tests/sasl_scram/test_fuzz.py \
  tests/sasl_scram/test_messages.py tests/sasl_scram/test_vectors.py tests/sasl_scram/kafka \
  $(addprefix tests/sasl_scram/endpoint/test_,connection.py deadlines.py protocol_writes.py hostile_peers.py)

pytest: venv system jars brokers spark native
	$(VENV)/bin/pytest -q
	KAFKA_SCRAM_PURE_PYTHON=1 $(VENV)/bin/pytest -q $(PURE_TESTS)

test: lint typecheck pytest

# The endpoint bench builds bench/java_style_client.c with the system compiler
# and libcrypto (make system installs both) and runs it against this tree's
# `serve` and Apache Kafka's own broker (make brokers), pinned side by side.
# `make bench BENCH_BASELINE=/tmp/old` also runs the code of another checkout
# (git worktree add /tmp/old <commit>), in alternating rounds.
bench: venv system brokers native
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/bench_scram.py
	$(PY) bench/bench_endpoint.py $(if $(BENCH_BASELINE),--baseline $(BENCH_BASELINE))
	$(PY) bench/bench_stores.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis \
	  sasl_scram/_native/lib sasl_scram/_native/*.so sasl_scram/_native/manifest.json
