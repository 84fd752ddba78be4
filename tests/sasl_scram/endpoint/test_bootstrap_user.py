"""The bootstrap user: its password is never in the store without a file that holds it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram.endpoint import ensure_bootstrap_user
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AlterResult
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion

MECHANISMS = (SCRAM_SHA_256, SCRAM_SHA_512)


class RefusingStore(InMemoryCredentialStore):
    """A store whose alter refuses every user (a store that fails after the files)."""

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> list[AlterResult]:
        return [AlterResult(u.user, ErrorCode.UNKNOWN_SERVER_ERROR, "no") for u in upsertions]


def test_the_files_are_in_place_once_the_user_is_created(tmp_path: Path) -> None:
    store = InMemoryCredentialStore()
    path = tmp_path / "state" / "admin.properties"
    files = ensure_bootstrap_user(store, "admin", path, MECHANISMS, "127.0.0.1:9092")
    assert files.created and store.lookup("admin", SCRAM_SHA_512) is not None
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "admin-kcat.conf",
        "admin.properties",
    ]
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def test_a_refused_user_leaves_no_file_with_its_password(tmp_path: Path) -> None:
    path = tmp_path / "admin.properties"
    with pytest.raises(RuntimeError, match="could not create bootstrap user 'admin'"):
        ensure_bootstrap_user(RefusingStore(), "admin", path, MECHANISMS, "127.0.0.1:9092")
    assert list(tmp_path.iterdir()) == []


class UnsureStore(InMemoryCredentialStore):
    """A store whose write is applied but answered as failed: ZooKeeper's
    "outcome unknown" when the connection drops mid-request."""

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> list[AlterResult]:
        super().alter(deletions, upsertions)
        return [AlterResult(u.user, ErrorCode.UNKNOWN_SERVER_ERROR, "unknown") for u in upsertions]


def test_a_user_created_despite_a_failed_answer_keeps_its_files(tmp_path: Path) -> None:
    # Its password is only in these files: dropping them would lose it for good.
    store = UnsureStore()
    path = tmp_path / "admin.properties"
    files = ensure_bootstrap_user(store, "admin", path, MECHANISMS, "127.0.0.1:9092")
    assert files.created and store.lookup("admin", SCRAM_SHA_256) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["admin-kcat.conf", "admin.properties"]
