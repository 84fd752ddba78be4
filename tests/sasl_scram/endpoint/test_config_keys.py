"""server.properties errors name the file, line and key, say what is accepted,
and suggest the known key a typo was meant to be."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import pytest

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ConfigKey
from sasl_scram.config import integer
from sasl_scram.config import parse_properties
from sasl_scram.config import read_keys
from sasl_scram.endpoint import ENDPOINT_KEYS
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import _config as endpoint_config
from sasl_scram.endpoint import _extension as endpoint_extension
from sasl_scram.endpoint import extension_keys
from sasl_scram.endpoint import load_extensions
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.zookeeper_server import free_port


def write_server_properties(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "server.properties"
    path.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{free_port()}\n"
        f"scram.credential.store.path={tmp_path}/creds.db\n" + extra
    )
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "delegation.token.max.lifetime.ms=abc",
            "delegation.token.max.lifetime.ms: invalid value 'abc': Not a number of type LONG; "
            "accepted: an integer from 1 to",
        ),
        (
            "delegation.token.expiry.time.ms=-1",
            "delegation.token.expiry.time.ms: invalid value '-1': Value must be at least 1",
        ),
        (
            "sasl.enabled.mechanisms=PLAIN",
            "sasl.enabled.mechanisms: 'PLAIN' is not supported; accepted: a comma-separated "
            "list of SCRAM-SHA-256, SCRAM-SHA-512",
        ),
        ("connections.max.idle.ms=0", "connections.max.idle.ms: must be at least 1, got 0"),
        # Keys serve used to read outside the table (no file and line).
        (
            "scram.event.loop=fast",
            "scram.event.loop: expected auto, uvloop or asyncio, got 'fast'; "
            "accepted: auto, uvloop (when installed) or asyncio",
        ),
        (
            "scram.metrics.listener=9404",
            "scram.metrics.listener: expected HOST:PORT (e.g. 127.0.0.1:9404), got '9404'; "
            "accepted: HOST:PORT (empty: off)",
        ),
        (
            # A line break (\n in a properties file) would split the client files.
            "scram.bootstrap.user=ad\\nmin",
            "scram.bootstrap.user: a user name must not contain control characters; "
            "accepted: a user name without control characters",
        ),
        (
            "scram.legacy.librdkafka.nonce.enable=yes",
            "scram.legacy.librdkafka.nonce.enable: expected true or false, got 'yes'; "
            "accepted: true or false",
        ),
        # Kafka's BOOLEAN keys are checked at start, even with a SQLite store.
        (
            "zookeeper.set.acl=maybe",
            "zookeeper.set.acl: expected true or false, got 'maybe'; accepted: true or false",
        ),
        (
            "zookeeper.ssl.client.enable=1",
            "zookeeper.ssl.client.enable: expected true or false, got '1'; accepted: true or false",
        ),
        (
            "scram.bootstrap.client.properties=  ",
            "scram.bootstrap.client.properties: expected a file path, got nothing",
        ),
        (
            "scram.workers=0",
            "scram.workers: expected auto or an integer from 1 to 1024; accepted: auto (one "
            "per core this process may use) or an integer from 1 to 1024",
        ),
    ],
)
def test_serve_names_file_line_key_and_what_is_accepted(
    tmp_path: Path, line: str, expected: str
) -> None:
    config = write_server_properties(tmp_path, f"# a comment\n{line}\n")
    error = assert_one_error(kafka_scram("serve", "--config", str(config)), "serve")
    assert f"error: {config}:4: {expected}" in error


@pytest.mark.slow
def test_a_bootstrap_file_that_is_a_directory_is_refused_before_the_user_exists(
    tmp_path: Path,
) -> None:
    config = write_server_properties(
        tmp_path, f"scram.bootstrap.user=admin\nscram.bootstrap.client.properties={tmp_path}\n"
    )
    error = assert_one_error(kafka_scram("serve", "--config", str(config)), "serve")
    assert (
        f"error: {config}:4: scram.bootstrap.client.properties: '{tmp_path}' is a directory; "
        "accepted: a file path (not a directory)" in error
    )
    # Refused before the store was opened: no user with a password nobody has.
    assert not (tmp_path / "creds.db").exists()


@pytest.mark.slow
def test_a_bootstrap_file_whose_folder_cannot_be_made_fails_before_ready(
    tmp_path: Path,
) -> None:
    # /proc refuses a new folder: the user must not be created with a password
    # no file will hold, and serve must not say it is ready first.
    config = write_server_properties(
        tmp_path,
        "scram.bootstrap.user=admin\nscram.bootstrap.client.properties=/proc/nope/admin.properties\n",
    )
    result = kafka_scram("serve", "--config", str(config))
    error = assert_one_error(result, "serve")
    assert "scram.bootstrap.client.properties: cannot create the folder /proc/nope" in error, error
    assert "ready" not in result.stdout
    # Refused before the store was opened: no user with a password nobody has.
    assert not (tmp_path / "creds.db").exists()


@pytest.mark.slow
def test_a_store_whose_folder_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    config = write_server_properties(tmp_path, "")
    result = kafka_scram(
        "serve", "--config", str(config), "--override",
        "scram.credential.store.path=/proc/nope/creds.db",
    )  # fmt: skip
    error = assert_one_error(result, "serve")
    assert "scram.credential.store.path: cannot create the folder /proc/nope" in error, error


def test_an_extension_gets_the_values_the_table_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    given: list[object] = []

    def twice(value: str, _: object) -> int:
        parsed.append(value)
        return 2 * int(value)

    def factory(properties: object, settings: object = None) -> None:
        given.append(settings)

    factory.config_keys = (  # type: ignore[attr-defined]
        ConfigKey("scram.example.ms", "5", twice, "an integer", "an example"),
    )
    monkeypatch.setattr(endpoint_config, "extension_factories", lambda names: [factory])
    monkeypatch.setattr(endpoint_extension, "extension_factories", lambda names: [factory])
    config = EndpointConfig.from_properties(
        {"scram.credential.store.path": "x.db", "scram.example.ms": "7"}
    )
    assert load_extensions(config.properties, config.settings) == []
    assert parsed == ["7"]  # once, by the table
    assert len(given) == 1 and isinstance(given[0], Mapping)
    assert given[0]["scram.example.ms"] == 14
    assert given[0]["node.id"] == 1


@pytest.mark.slow
def test_typo_gets_a_suggestion_with_file_and_line(tmp_path: Path) -> None:
    config = write_server_properties(
        tmp_path,
        "sasl.enabeld.mechanisms=SCRAM-SHA-256\ndelegation.token.secret.kye=s3cret\nnode.id=x\n",
    )
    result = kafka_scram("serve", "--config", str(config))
    assert_one_error(result, "serve")
    assert (
        f"{config}:3: Unknown configuration key 'sasl.enabeld.mechanisms' is ignored; "
        "did you mean 'sasl.enabled.mechanisms'?" in result.stderr
    )
    assert "did you mean 'delegation.token.secret.key'?" in result.stderr
    assert "s3cret" not in result.stderr


@pytest.mark.slow
def test_an_override_is_named_as_such(tmp_path: Path) -> None:
    config = write_server_properties(tmp_path, "")
    result = kafka_scram("serve", "--config", str(config), "--override", "node.id=-3")
    # Typed on the command line: a usage error (2), where the file's value is a failure (1).
    error = assert_one_error(result, "serve", status=2)
    assert "--override: node.id: must be at least 0, got -3" in error


def test_a_far_off_key_gets_no_suggestion(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    EndpointConfig.from_properties({"scram.credential.store.path": "x.db", "log.dirs": "/tmp"})
    assert "Unknown configuration key 'log.dirs' is ignored" in caplog.text
    assert "did you mean" not in caplog.text


def test_token_keys_are_known_through_the_extension() -> None:
    names = {key.name for key in extension_keys()}
    assert "delegation.token.secret.key" in names
    assert {key.name for key in ENDPOINT_KEYS}.isdisjoint(names)


def test_a_secret_value_is_never_echoed() -> None:
    props = parse_properties(
        "scram.credential.store.path=x.db\ndelegation.token.secret.key=a,,b\n", "s.properties"
    )
    with pytest.raises(ScramConfigError) as info:
        EndpointConfig.from_properties(props)
    assert "s.properties:2: delegation.token.secret.key: " in str(info.value)
    assert "a,,b" not in str(info.value)


def test_adding_a_key_is_one_entry() -> None:
    table = (ConfigKey("scram.example.ms", "5", integer(1), "an integer >= 1", "an example"),)
    assert read_keys(table, {}) == {"scram.example.ms": 5}
    with pytest.raises(ScramConfigError, match=r"f:2: scram\.example\.ms: must be at least 1"):
        read_keys(table, {"scram.example.ms": "0"}, {"scram.example.ms": "f:2"})


def test_a_secret_keys_bad_value_is_never_quoted() -> None:
    def strict(value: str, _: object) -> str:
        raise ValueError(f"{value!r} is too short")

    table = (ConfigKey("scram.example.secret", None, strict, "32 characters", "x", secret=True),)
    with pytest.raises(ScramConfigError) as info:
        read_keys(table, {"scram.example.secret": "hunter2"})
    assert "hunter2" not in str(info.value)
    assert "scram.example.secret: invalid value; accepted: 32 characters" in str(info.value)


@pytest.mark.parametrize(("value", "expected"), [(None, False), (" TRUE ", True), ("false", False)])
def test_the_legacy_librdkafka_nonce_key_is_a_kafka_boolean_and_off_by_default(
    value: str | None, expected: bool
) -> None:
    # Read as Kafka's ConfigDef reads a BOOLEAN: trimmed, any case.
    props = {"scram.credential.store.path": "x.db"}
    if value is not None:
        props["scram.legacy.librdkafka.nonce.enable"] = value
    assert EndpointConfig.from_properties(props).legacy_librdkafka_nonce is expected
