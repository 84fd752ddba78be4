from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.sqlite_rows import insert_rows
from tests.tokenauth.conftest import ALICE
from tokenauth import SQLiteTokenStore
from tokenauth import TokenInformation
from tokenauth import encode_token


def info(token_id: str) -> TokenInformation:
    return TokenInformation(token_id, ALICE, ALICE, (), 1, 2, 3)


def test_rows_hold_the_zookeeper_json(tmp_path: Path) -> None:
    store = SQLiteTokenStore(tmp_path / "t.db", poll_interval=0)
    store.put(info("t1"))
    db = sqlite3.connect(tmp_path / "t.db")
    (data,) = db.execute("SELECT data FROM delegation_tokens WHERE token_id='t1'").fetchone()
    assert bytes(data) == encode_token(info("t1"))
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    store.close()


def test_malformed_rows_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SQLiteTokenStore(path, poll_interval=0).close()
    rows = [
        ("bad", b'{"version":7}'),
        ("junk", b"junk"),
        ("other", encode_token(info("x"))),
        ("good", encode_token(info("good"))),
    ]
    insert_rows(path, "delegation_tokens", rows)
    store = SQLiteTokenStore(path, poll_interval=0)
    assert [t.token_id for t in store.tokens()] == ["good"]
    store.close()


def test_reader_behind_the_purge_reloads_everything(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    now = [1000.0]
    writer = SQLiteTokenStore(path, poll_interval=0, change_retention=10, clock=lambda: now[0])
    reader = SQLiteTokenStore(path, poll_interval=0)
    seen: list[str] = []
    reader.add_listener(seen.append)
    writer.put(info("t1"))
    writer.put(info("t2"))
    now[0] += 100  # the next write purges the two rows above
    writer.put(info("t3"))
    writer.remove("t1")
    reader.refresh()
    assert sorted(t.token_id for t in reader.tokens()) == ["t2", "t3"]
    assert sorted(seen) == ["t2", "t3"]
    writer.close()
    reader.close()
