"""StoreLocation: a store's location parsed once, then typed (scheme, target, options)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sasl_scram.store import Backends
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import StoreLocation
from sasl_scram.store import open_location
from sasl_scram.store import open_store
from sasl_scram.store import parse_location


def test_parse_and_str_round_trip() -> None:
    for text in ("sqlite:/var/lib/creds.db", "zookeeper:h1:2181,h2:2181/kafka", "memory:"):
        assert str(StoreLocation.parse(text)) == text
    assert StoreLocation.parse("sqlite:/a/b.db").path == Path("/a/b.db")
    assert parse_location("zookeeper:h:2181") == ("zookeeper", "h:2181")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "creds.db",
            "store location must be sqlite:PATH, zookeeper:HOSTS[/chroot] or memory:, "
            "got 'creds.db'",
        ),
        ("redis:x", "unknown store scheme 'redis'; expected sqlite, zookeeper or memory"),
        ("sqlite:", "store location 'sqlite:' has nothing after 'sqlite:'"),
    ],
)
def test_bad_locations_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        StoreLocation.parse(text)
    assert str(caught.value) == message
    with pytest.raises(ValueError, match="token store"):
        StoreLocation.parse(text, what="token store")


def test_options_travel_with_the_location_and_stay_out_of_its_repr() -> None:
    location = StoreLocation.zookeeper("h:2181", security="a-password-holder", share_session=True)
    assert "a-password-holder" not in repr(location)
    opened: list[tuple[Any, ...]] = []
    backends = Backends(
        sqlite=lambda *a, **k: opened.append(("sqlite", a, k)),
        zookeeper=lambda *a, **k: opened.append(("zookeeper", a, k)),
        memory=lambda *a, **k: opened.append(("memory", a, k)),
    )
    location.open(backends, share_session=False)
    open_location("memory:", backends, what="store", options={"x": 1})
    assert opened == [
        ("zookeeper", ("h:2181",), {"security": "a-password-holder", "share_session": False}),
        ("memory", (), {"x": 1}),
    ]
    with pytest.raises(ValueError, match="not an SQLite store"):
        _ = location.path


def test_open_store_takes_a_location_or_its_line() -> None:
    assert isinstance(open_store(StoreLocation.memory()), InMemoryCredentialStore)
    assert isinstance(open_store("memory:"), InMemoryCredentialStore)
