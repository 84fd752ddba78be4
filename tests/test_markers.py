"""The resource marks come from the fixtures a test uses (tests/conftest.py), so
``make check``'s ``-m "not jvm and ..."`` cannot pick a test that starts one.

Each case collects or runs a small suite in a temporary folder with this
repository's conftest as its plugin; nothing heavy starts (collection does not
set fixtures up, and the guard refuses ``java`` before it runs)."""

from __future__ import annotations

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
