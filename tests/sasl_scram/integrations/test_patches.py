"""PatchSet, the one install/uninstall of every integration, on plain objects."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from sasl_scram.integrations._patches import PatchSet


class Owner:
    method = "own"


def mine() -> None: ...


def test_apply_then_revert_restores_attributes_and_keys_and_absence() -> None:
    registry: dict[str, Any] = {"A": "theirs"}
    patches = PatchSet("demo")
    targets = [(Owner, "method", mine), (Owner, "added", mine), (registry, "A", mine)]
    targets.append((registry, "B", mine))
    assert patches.apply(targets) and patches.applied
    assert Owner.method is mine and Owner.added is mine  # type: ignore[attr-defined]
    assert registry == {"A": mine, "B": mine}
    assert PatchSet.in_place(targets)
    assert patches.original("method") == "own" and patches.original("A") == "theirs"
    assert patches.original("added", "none") == "none"  # held nothing
    assert not patches.apply(targets)  # idempotent: the originals stay the real ones
    assert patches.original("method") == "own"
    assert patches.revert() and not patches.applied
    assert Owner.method == "own" and not hasattr(Owner, "added")
    assert registry == {"A": "theirs"}
    assert not PatchSet.in_place(targets)
    assert not patches.revert()
    assert patches.original("method") is None


def test_a_target_replaced_since_is_left_alone() -> None:
    registry: dict[str, Any] = {}
    patches = PatchSet("demo")
    patches.apply([(registry, "A", mine), (registry, "B", mine)])
    registry["A"] = "someone else's"
    patches.revert()
    assert registry == {"A": "someone else's"}


def test_a_name_patched_twice_is_refused_before_anything_changes() -> None:
    registry: dict[str, Any] = {}
    with pytest.raises(ValueError, match="patched twice"):
        PatchSet("demo").apply([(registry, "A", mine), (Owner, "A", mine)])
    assert registry == {} and not hasattr(Owner, "A")


def test_concurrent_installs_apply_once() -> None:
    registry: dict[str, Any] = {"A": "theirs"}
    patches = PatchSet("demo")
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(patches.apply([(registry, "A", mine)])))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1
    assert patches.original("A") == "theirs"
