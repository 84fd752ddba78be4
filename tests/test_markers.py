"""The resource marks come from the fixtures a test uses (tests/conftest.py), so
``make check``'s ``-m "not jvm and ..."`` cannot pick a test that starts one.

Each case collects or runs a small suite in a temporary folder with this
repository's conftest as its plugin; nothing heavy starts (collection does not
set fixtures up, and the guard refuses ``java`` before it runs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SUITE = """
import subprocess

import pytest


def test_kraft(kraft_broker):
    pass


def test_both(kafka_broker):
    pass


def test_chroot(zookeeper_hosts):
    pass


def test_session(spark):
    pass


def test_java_classes(kafka_java):
    pass


@pytest.mark.parametrize("store_factory", ["memory", "zookeeper"], indirect=False)
def test_backend(store_factory):
    pass


def test_pure():
    pass


def test_starts_a_jvm_unmarked():
    subprocess.run(["java", "-version"], check=False)
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]\n')
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def _selected(pytester: pytest.Pytester, expression: str) -> set[str]:
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-m", expression)
    return {
        line.split("::", 1)[1] for line in result.outlines if line.startswith("test_suite.py::")
    }


def test_a_test_using_the_broker_fixture_is_marked_broker_and_jvm(suite: pytest.Pytester) -> None:
    assert _selected(suite, "broker") == {
        "test_kraft",
        "test_both[kafka4-kraft]",
        "test_both[kafka39-zookeeper]",
    }
    assert "test_kraft" not in _selected(suite, "not jvm")


def test_each_resource_is_read_from_the_fixtures(suite: pytest.Pytester) -> None:
    assert _selected(suite, "zookeeper") == {
        "test_both[kafka39-zookeeper]",
        "test_chroot",
        "test_backend[zookeeper]",
    }
    assert _selected(suite, "spark") == {"test_session"}
    assert _selected(suite, "jvm and not zookeeper and not broker and not spark") == {
        "test_java_classes"
    }
    assert _selected(suite, "not jvm") == {
        "test_backend[memory]",
        "test_pure",
        "test_starts_a_jvm_unmarked",
    }


def test_a_test_that_runs_java_without_the_mark_fails(suite: pytest.Pytester) -> None:
    result = suite.runpytest_inprocess("-q", "-k", "test_starts_a_jvm_unmarked or test_pure")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*runs java but is not marked jvm*"])


GROUPED = """
import os

import pytest


@pytest.fixture(scope="module")
def built():
    with open(os.environ["BUILDS_LOG"], "a") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")


@pytest.mark.parametrize("n", range(6))
def test_grouped(built, n):
    pass


@pytest.mark.parametrize("n", range(12))
def test_elsewhere(n):
    pass
"""


def test_one_worker_runs_a_whole_module_so_its_fixtures_start_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # make test's --dist loadgroup with the groups of tests/conftest.py: a
    # module's fixtures (a wheel build, a broker) start on one worker only.
    # pytest 9.2 with pytest-xdist 3.8 silently stopped grouping.
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]\n')
    pytester.makepyfile(test_grouped=GROUPED)
    builds = pytester.path / "builds.log"
    monkeypatch.setenv("BUILDS_LOG", str(builds))
    root = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    result = pytester.runpytest_subprocess("-q", "-n", "2", "--dist", "loadgroup", "-p", "xdist")
    result.assert_outcomes(passed=18)
    assert len(builds.read_text().splitlines()) == 1, builds.read_text()
