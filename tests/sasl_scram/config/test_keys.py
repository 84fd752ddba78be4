"""read_keys and build: one parse, each key filling the field it names."""

from __future__ import annotations

import dataclasses

import pytest

from sasl_scram.config import ConfigKey
from sasl_scram.config import ConfigValueError
from sasl_scram.config import build
from sasl_scram.config import integer
from sasl_scram.config import is_known
from sasl_scram.config import read_keys
from sasl_scram.config import text


@dataclasses.dataclass(frozen=True)
class Typed:
    size: int = 1
    name: str | None = None
    client: dict[str, int] = dataclasses.field(default_factory=dict)


TABLE = (
    ConfigKey("a.size", "1", integer(1), "an integer >= 1", "size", field="size"),
    ConfigKey("a.name", None, text, "any text", "name", field="name"),
    ConfigKey(
        "client.", None, integer(0), "an integer >= 0", "client", field="client", family=True
    ),
)


def test_build_fills_each_named_field_from_one_parse() -> None:
    values = read_keys(TABLE, {"a.size": " 5 ", "client.retries": "3", "client.linger.ms": "0"})
    assert build(Typed, TABLE, values) == Typed(5, None, {"linger.ms": 0, "retries": 3})


def test_a_family_members_bad_value_names_the_member_and_its_origin() -> None:
    with pytest.raises(ConfigValueError) as caught:
        read_keys(TABLE, {"client.retries": "-1"}, {"client.retries": "f.properties:3"})
    assert str(caught.value).startswith("f.properties:3: client.retries: must be at least 0")


def test_is_known_covers_families() -> None:
    assert is_known(TABLE, "client.anything") and is_known(TABLE, "a.size")
    assert not is_known(TABLE, "a.sizes") and not is_known(TABLE, "client")


def test_two_keys_cannot_fill_one_field() -> None:
    twice = (*TABLE, ConfigKey("b.size", "2", integer(1), "", "", field="size"))
    with pytest.raises(ValueError, match="filled twice"):
        build(Typed, twice, read_keys(twice, {}))
