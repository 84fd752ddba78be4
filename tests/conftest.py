from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# The repository root holds the three packages; make `tests.*` helpers importable.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The ZooKeeper fixtures (a real Debian ZooKeeper per session, dedicated servers,
# SASL and TLS variants) and the real Kafka brokers (4.x KRaft, 3.9 ZooKeeper
# mode), Kafka's own tools beside ours, and a kafka-scram serve beside the
# ZooKeeper-mode broker serve every test folder.
pytest_plugins = [
    "tests.support.zookeeper_server",
    "tests.support.kafka_broker",
    "tests.support.broker_and_serve",
    "tests.support.side_by_side",
    # tests/test_markers.py runs a small suite in a temporary folder.
    "pytester",
]

# -- Hypothesis profiles --------------------------------------------------------
#
# HYPOTHESIS_PROFILE picks one: `ci` (make test) tries more examples of the
# properties that do not set their own count, `dev` (make check) fewer. Both
# drop the per-example deadline: two cores shared with brokers and JVMs make
# example timings noise. A test's own @settings(max_examples=...) still wins.
settings.register_profile("ci", max_examples=300, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=20, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# -- markers, applied from the fixtures a test uses ------------------------------
#
# A test is marked by what it starts, read from its fixture closure, so a new
# test that uses the broker fixture is marked `broker` without anyone writing
# it. A test that starts a JVM itself (a JavaHarness or a ZooKeeperServer in its
# body) carries the mark by hand; the guard below fails it if it does not.

#: Fixtures that run a ZooKeeper server (a JVM).
ZOOKEEPER_FIXTURES = frozenset(
    {
        "zookeeper_server",
        "zookeeper_hosts",
        "dedicated_zookeeper",
        "secure_zookeeper_server",
        "tls_zookeeper_server",
        "zookeeper_ensemble",
        "zookeeper_broker",
    }
)
#: Fixtures that run a real Kafka broker (a JVM each).
BROKER_FIXTURES = frozenset(
    {
        "kraft_broker",
        "strict_kraft_broker",
        "zookeeper_broker",
        "kafka_broker",
        "zookeeper_broker_serve",
        "kafka_tools",
    }
)
#: Fixtures that run Kafka's Java classes in a harness JVM.
JVM_FIXTURES = frozenset(
    {"kafka_java", "java_jaas", "java_clients", "java", "java_properties", "kafkas"}
)
#: Fixtures that run a local SparkSession (a JVM).
SPARK_FIXTURES = frozenset({"spark", "warm_kafka_connector"})
#: Parametrised fixtures that pick a backend by name: which names mean ZooKeeper.
_BACKEND_FIXTURES = ("store_factory", "acl_store_factory", "kafka_broker")

#: The xdist group of the tests that share the session's real brokers and Spark:
#: one worker starts them once (``--dist loadgroup``), the others never do.
HEAVY_GROUP = "brokers-and-spark"


def _needs(item: pytest.Item) -> set[str]:
    """The resource markers ``item`` earns from its fixtures and explicit marks."""
    names = set(getattr(item, "fixturenames", ()))
    needs = {m.name for m in item.iter_markers() if m.name in ("zookeeper", "broker", "spark")}
    callspec = getattr(item, "callspec", None)
    params: dict[str, Any] = callspec.params if callspec is not None else {}
    for fixture in _BACKEND_FIXTURES:
        if str(params.get(fixture, "")).startswith("zookeeper"):
            needs.add("zookeeper")
    if "kafka_broker" in params:
        needs.add("broker")
    if names & ZOOKEEPER_FIXTURES:
        needs.add("zookeeper")
    if names & BROKER_FIXTURES:
        needs.add("broker")
    if names & SPARK_FIXTURES:
        needs.add("spark")
    if needs or names & JVM_FIXTURES or item.get_closest_marker("jvm") is not None:
        needs.add("jvm")  # ZooKeeper, Kafka's brokers and Spark are all JVMs
    return needs


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups it adds
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        needs = _needs(item)
        for name in sorted(needs):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)
        # One xdist worker runs a whole module (its module fixtures start once),
        # and one worker every test of the brokers and Spark.
        group = HEAVY_GROUP if needs & {"broker", "spark"} else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


#: Programs that start a JVM: a test that runs one must be marked ``jvm``.
_JVM_PROGRAMS = frozenset({"java", "javac", "spark-submit"})


def _program(args: Any) -> str:
    """The program a ``Popen`` call runs, without its folder."""
    if not isinstance(args, str | bytes | os.PathLike):
        args = next(iter(args), "")
    words = os.fsdecode(args).split()
    return os.path.basename(words[0]) if words else ""


@pytest.fixture(autouse=True)
def _jvm_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that starts a JVM without the ``jvm`` mark (its fixtures or an
    explicit mark), so ``make check``'s selection can be trusted."""
    if request.node.get_closest_marker("jvm") is not None:
        yield
        return
    original = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        program = _program(args)
        if program in _JVM_PROGRAMS:
            raise AssertionError(
                f"{request.node.nodeid} runs {program} but is not marked jvm: use a fixture "
                "of tests/support (or the conftests) that starts it, or mark the test "
                "@pytest.mark.jvm (and zookeeper/broker/spark as it applies)"
            )
        original(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = guarded  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]


def pytest_report_header() -> str:
    """Which form of the core this run tests: compiled, or pure Python and why."""
    from sasl_scram import _native

    return f"sasl_scram core: {_native.status()}"
