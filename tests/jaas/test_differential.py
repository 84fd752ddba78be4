"""Differential tests: ``jaas`` against Kafka's JaasContext and the JDK's ConfigFile.

Thousands of seeded, mostly near-valid inputs go through one JVM; both sides
must accept or reject alike, yield the same options, and give the same message.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from tests.jaas.generate import PROPERTIES
from tests.jaas.generate import file_inputs
from tests.jaas.generate import property_inputs
from tests.jaas.java_peer import JavaJaas
from tests.jaas.java_peer import Outcome
from tests.jaas.java_peer import python_file
from tests.jaas.java_peer import python_property

pytestmark = pytest.mark.jvm

SEED = int(os.environ.get("JAAS_DIFF_SEED", "20240917"))
COUNT = int(os.environ.get("JAAS_DIFF_COUNT", "3000"))


def _compare(kind: str, text: str, ours: Outcome, theirs: Outcome) -> str | None:
    if ours.accepted != theirs.accepted:
        return f"{kind} decision differs for {text!r}: ours={ours} java={theirs}"
    if ours.contexts != theirs.contexts:
        return f"{kind} options differ for {text!r}: ours={ours} java={theirs}"
    # A secret's value is masked in our copy of Java's message.
    if ours.message != theirs.message and "********" not in (ours.message or ""):
        return f"{kind} message differs for {text!r}: ours={ours.message!r} java={theirs.message!r}"
    return None


def test_property_form_matches_kafka(java_jaas: JavaJaas) -> None:
    inputs = property_inputs(SEED, COUNT)
    failures = []
    outcomes: Counter[bool] = Counter()
    for text in inputs:
        theirs = java_jaas.property(text)
        outcomes[theirs.accepted] += 1
        problem = _compare("property", text, python_property(text), theirs)
        if problem:
            failures.append(problem)
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} of {len(inputs)})"
    # The generator must exercise both sides of the decision.
    assert outcomes[True] > COUNT // 10 and outcomes[False] > COUNT // 10, outcomes


def test_file_form_matches_jdk(java_jaas: JavaJaas) -> None:
    inputs = file_inputs(SEED, COUNT)
    failures = []
    outcomes: Counter[bool] = Counter()
    for text in inputs:
        theirs = java_jaas.file(text, PROPERTIES)
        outcomes[theirs.accepted] += 1
        problem = _compare("file", text, python_file(text, PROPERTIES), theirs)
        if problem:
            failures.append(problem)
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} of {len(inputs)})"
    assert outcomes[True] > COUNT // 10 and outcomes[False] > COUNT // 10, outcomes
