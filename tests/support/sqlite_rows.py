"""Rows written straight into a SQLite store's file, behind the store's back, as a
damaged file or another program would leave them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path


def insert_rows(path: Path, table: str, rows: Iterable[tuple[object, ...]]) -> None:
    """Insert ``rows`` into ``table`` of the database at ``path``, in one transaction."""
    db = sqlite3.connect(path)
    try:
        with db:
            for row in rows:
                marks = ", ".join("?" * len(row))
                db.execute(f"INSERT INTO {table} VALUES ({marks})", row)  # noqa: S608 - a test's table
    finally:
        db.close()
