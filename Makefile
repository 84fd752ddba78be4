# The two set-up commands of the README: `make run` and `make test`.
# Both create .venv and install what they need on a fresh machine.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CACHE ?= $(HOME)/.cache/kafka-scram
export KAFKA_SCRAM_CACHE := $(CACHE)
export KAFKA_SCRAM_JARS := $(CACHE)/jars
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test bench lint typecheck pytest system jars venv clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

# System packages the interop tests need. A JDK (not only a JRE) is needed
# because the Java harnesses are compiled at test time.
system:
	@pkgs=""; \
	if ! command -v javac >/dev/null 2>&1; then pkgs="$$pkgs openjdk-17-jdk-headless"; fi; \
	if [ ! -f /usr/share/java/zookeeper.jar ]; then pkgs="$$pkgs zookeeper"; fi; \
	if ! command -v kcat >/dev/null 2>&1; then pkgs="$$pkgs kcat"; fi; \
	if [ -n "$$pkgs" ]; then apt-get update -q && apt-get install -y -q $$pkgs; fi

jars: venv
	$(PY) tools/fetch_kafka_jars.py

run: venv
	$(PY) examples/quickstart.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: venv
	$(VENV)/bin/mypy

pytest: venv system jars
	$(VENV)/bin/pytest -q

test: lint typecheck pytest

bench: venv
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/bench_scram.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
