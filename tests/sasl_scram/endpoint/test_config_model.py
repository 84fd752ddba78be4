"""One configuration model: each key of the table names the typed field it fills,
and the typed configuration is built from one parse, so adding a key is one
entry plus its use (here a fixture table and a subclass with the field)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import sasl_scram.endpoint
import sasl_scram.store
from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ConfigKey
from sasl_scram.config import ConfigValueError
from sasl_scram.config import integer
from sasl_scram.config import parse_properties
from sasl_scram.config import text
from sasl_scram.endpoint import ENDPOINT_KEYS
from sasl_scram.endpoint import ConnectionSettings
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import ListenerAddress
from sasl_scram.endpoint import ScramEndpoint
from sasl_scram.endpoint._config import SSL_KEYSTORE_KEYS
from sasl_scram.endpoint._keystore import SslKeystore
from sasl_scram.frontdoor import UPSTREAM_KEYS
from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.store import ChangeListener
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import StoreLocation
from sasl_scram.store.zookeeper import ZOOKEEPER_KEYS
from sasl_scram.store.zookeeper import ZooKeeperOptions

BASE = "listeners=SASL_PLAINTEXT://127.0.0.1:9092\nscram.credential.store.path=/tmp/x/creds.db\n"


@dataclasses.dataclass(frozen=True)
class WithNewKey(EndpointConfig):
    """What a new key adds besides its entry: the field it fills."""

    new_limit: int = 7
    example: Mapping[str, str] = dataclasses.field(default_factory=dict)


NEW_KEY = ConfigKey(
    "scram.new.limit", "7", integer(1), "an integer >= 1", "a new key", field="new_limit"
)
# A family: every scram.example.* key, passed on as a map.
EXAMPLE = ConfigKey(
    "scram.example.", None, text, "any text", "a family", field="example", family=True
)
FIXTURE = (*ENDPOINT_KEYS, NEW_KEY, EXAMPLE)


def load(extra: str, keys: tuple[ConfigKey, ...] = FIXTURE) -> Any:
    return WithNewKey.from_properties(
        parse_properties(BASE + extra, "server.properties"), (), keys=keys
    )


def test_a_new_key_arrives_typed_from_one_entry() -> None:
    config = load("scram.new.limit=42\n")
    assert config.new_limit == 42 and config.settings["scram.new.limit"] == 42
    assert load("").new_limit == 7  # its default


def test_a_new_keys_bad_value_names_its_file_and_line() -> None:
    with pytest.raises(ConfigValueError) as caught:
        load("node.id=2\nscram.new.limit=0\n")
    assert str(caught.value) == (
        "server.properties:4: scram.new.limit: must be at least 1, got 0; accepted: an integer >= 1"
    )
    assert caught.value.origin == "server.properties:4"


def test_a_key_family_arrives_as_one_map_and_is_not_unknown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = load("scram.example.security.protocol=SASL_SSL\nscram.example.sasl.mechanism=X\n")
    assert config.example == {"security.protocol": "SASL_SSL", "sasl.mechanism": "X"}
    assert "Unknown configuration key" not in caplog.text
    assert load("").example == {}


def test_without_the_entry_the_key_is_unknown_and_the_field_keeps_its_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = load("scram.new.limit=42\n", ENDPOINT_KEYS)
    assert config.new_limit == 7
    assert "Unknown configuration key 'scram.new.limit' is ignored" in caplog.text


def test_every_entry_names_a_field_of_its_type() -> None:
    own_types = {
        **{key.name: ZooKeeperOptions for key in ZOOKEEPER_KEYS},
        **{key.name: UpstreamConfig for key in UPSTREAM_KEYS},
        **{key.name: SslKeystore for key in SSL_KEYSTORE_KEYS},
    }
    for key in ENDPOINT_KEYS:
        owner = own_types.get(key.name, EndpointConfig)
        assert key.field in {f.name for f in dataclasses.fields(owner)}, key.name
    named = [key.field for key in ENDPOINT_KEYS if key.name not in own_types]
    assert len(named) == len(set(named))


def test_the_zookeeper_keys_are_typed_once_for_the_field_and_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``EndpointConfig.zookeeper`` and the store's options come from one
    ``ZooKeeperOptions`` (its login reads a JAAS file: once, not twice)."""
    made: list[ZooKeeperOptions] = []
    typed = ZooKeeperOptions.from_settings

    def counted(settings: Mapping[str, Any]) -> ZooKeeperOptions:
        made.append(typed(settings))
        return made[-1]

    monkeypatch.setattr(ZooKeeperOptions, "from_settings", staticmethod(counted))
    config = EndpointConfig.from_properties(
        {"zookeeper.connect": "127.0.0.1:2181", "zookeeper.session.timeout.ms": "6000"}, ()
    )
    assert made == [config.zookeeper]
    assert config.store.options["session_timeout"] == 6.0


def test_the_store_is_a_typed_location_from_the_same_parse(tmp_path: Path) -> None:
    config = EndpointConfig.from_properties(parse_properties(BASE, "server.properties"), ())
    assert config.store == StoreLocation.sqlite("/tmp/x/creds.db")
    assert config.store.path == Path("/tmp/x/creds.db") and config.store.options == {}
    zk = EndpointConfig.from_properties(
        {"zookeeper.connect": "127.0.0.1:2181/kafka", "zookeeper.session.timeout.ms": "6000"}, ()
    )
    assert (zk.store.scheme, zk.store.target) == ("zookeeper", "127.0.0.1:2181/kafka")
    assert zk.zookeeper.session_timeout_ms == 6000
    assert zk.store.options["session_timeout"] == 6.0 and zk.store.options["share_session"]
    with pytest.raises(
        ScramConfigError, match=r"set either zookeeper\.connect or scram\.credential"
    ):
        EndpointConfig.from_properties(
            {"zookeeper.connect": "127.0.0.1:2181", "scram.credential.store.path": "/tmp/x"}, ()
        )


def test_the_two_listeners_have_distinct_names_and_the_old_alias_is_gone() -> None:
    assert not hasattr(sasl_scram.endpoint, "Listener")
    assert not hasattr(sasl_scram.store, "Listener")
    assert ListenerAddress is not ChangeListener


def test_a_connection_gets_each_serve_key_by_its_own_name() -> None:
    """The login state machine's settings take each key's value under the
    field the key names (no second mapping), defaults from the table alone."""
    config = EndpointConfig.from_properties(
        {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:9092",
            "scram.credential.store.path": "/tmp/x/creds.db",
            "sasl.server.max.receive.size": "1001",
            "socket.request.max.bytes": "1002",
            "scram.user.request.max.bytes": "1003",
            "scram.user.request.max.array.length": "1004",
            "connections.max.reauth.ms": "1005",
            "scram.legacy.librdkafka.nonce.enable": "true",
            "super.users": "User:admin;Group:ops",
        },
        (),
    )
    settings = ScramEndpoint(config, InMemoryCredentialStore()).settings
    assert (settings.sasl_max_receive, settings.max_request) == (1001, 1002)
    assert (settings.user_max_request, settings.user_max_array) == (1003, 1004)
    assert settings.max_reauth_ms == 1005 and settings.legacy_librdkafka_nonce
    assert settings.mechanisms == config.mechanisms
    # The user names of super.users' User: principals: another fact, another name.
    assert settings.super_user_names == frozenset({"admin"})
    key_fields = {key.field for key in ENDPOINT_KEYS}
    for each in dataclasses.fields(ConnectionSettings):
        if each.name in key_fields:
            assert each.default is dataclasses.MISSING, each.name
