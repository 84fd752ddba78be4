"""The connection caps' keys as Kafka reads them, and their counting and logging.

Kafka's reading: ``KafkaConfig`` takes ``max.connections.per.ip`` as an INT at
least 0, zero only with overrides; ``max.connections.per.ip.overrides`` through
``Csv.parseCsvMap`` (entries split at commas, each at its last ':'), each host
checked by ``Utils.validHostPattern`` and each count by ``toInt``; the cases
are those of Kafka's ``KafkaConfigTest`` and ``DynamicBrokerConfigTest``.
"""

from __future__ import annotations

import logging

import pytest

from sasl_scram._errors import ScramConfigError
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint._edge_metrics import EdgeMetrics
from sasl_scram.endpoint._edge_metrics import UserNames
from sasl_scram.endpoint.runtime._caps import LOG_INTERVAL
from sasl_scram.endpoint.runtime._caps import ConnectionCaps
from sasl_scram.endpoint.runtime._caps import RateLimitedLines
from tests.support.clock import FakeClock

BASE = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "scram.credential.store.path": "x.db"}


def config(**keys: str) -> EndpointConfig:
    return EndpointConfig.from_properties({**BASE, **keys})


def caps_of(**keys: str) -> tuple[int, dict[str, int], int]:
    c = config(**keys)
    return c.max_connections_per_ip, c.max_connections_per_ip_overrides, c.max_connections_per_user


def test_kafkas_defaults_are_no_caps() -> None:
    assert caps_of() == (2**31 - 1, {}, 2**31 - 1)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:2, 127.0.0.2:3", {"127.0.0.1": 2, "127.0.0.2": 3}),  # KafkaConfigTest
        ("hostName1:100,127.0.0.1:0", {"127.0.0.1": 0}),  # a count of 0 (resolved below)
        ("::1:5", {"::1": 5}),  # the last ':' splits: an IPv6 host keeps its own
        ("0:0:0:0:0:0:0:1:7,", {"::1": 7}),  # written as the kernel does; a trailing comma
        ("127.0.0.1:+4", {"127.0.0.1": 4}),  # Java's parseInt takes a sign
        # InetAddress.getByName makes an IPv4-mapped address the IPv4 one: the
        # address an IPv4 client connects from.
        ("::ffff:127.0.0.2:4", {"127.0.0.2": 4}),
        ("0:0:0:0:0:ffff:7f00:3:5", {"127.0.0.3": 5}),
    ],
)
def test_overrides_as_kafka_reads_them(
    value: str, expected: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    def resolve(host: str, *_: object, **__: object) -> list[tuple[object, ...]]:
        assert host == "hostName1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    overrides = caps_of(**{"max.connections.per.ip.overrides": value})[1]
    assert {k: v for k, v in overrides.items() if k != "10.1.2.3"} == expected
    if "hostName1" in value:
        assert overrides["10.1.2.3"] == 100


def test_a_name_is_resolved_to_all_its_addresses() -> None:
    overrides = caps_of(**{"max.connections.per.ip.overrides": "localhost:9"})[1]
    assert overrides.get("127.0.0.1") == 9


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("hostName#:100", "invalid address"),  # DynamicBrokerConfigTest
        ("127.0.0.0#:100", "invalid address"),  # KafkaConfigTest
        ("127.0.0.1:not_a_number", "the count must be an integer"),  # KafkaConfigTest
        ("127.0.0.1", "is not host:count"),
        ("127.0.0.1:1,,127.0.0.2:2", "is not host:count"),
        ("127.0.0.1:-1", "the count must be an integer from 0"),
        ("no-such-host.invalid:3", "cannot resolve"),
    ],
)
def test_bad_overrides_name_the_key(value: str, problem: str) -> None:
    with pytest.raises(ScramConfigError) as raised:
        config(**{"max.connections.per.ip.overrides": value})
    assert "max.connections.per.ip.overrides" in str(raised.value)
    assert problem in str(raised.value)


def test_zero_per_ip_needs_overrides() -> None:
    """KafkaConfig: "max.connections.per.ip can be set to zero only if
    max.connections.per.ip.overrides property is set"."""
    with pytest.raises(ScramConfigError, match=r"max\.connections\.per\.ip: can be set to zero"):
        config(**{"max.connections.per.ip": "0"})
    keys = {"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:100"}
    assert caps_of(**keys)[:2] == (0, {"127.0.0.1": 100})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max.connections.per.ip", "-1"),
        ("max.connections.per.ip", "not_a_number"),
        ("scram.max.connections.per.user", "0"),
        ("scram.max.connections.per.user", "many"),
    ],
)
def test_bad_counts_are_refused(key: str, value: str) -> None:
    with pytest.raises(ScramConfigError, match=key.replace(".", r"\.")):
        config(**{key: value})


# -- counting -------------------------------------------------------------------------------


def test_places_per_address_are_counted_and_given_back_once() -> None:
    caps = ConnectionCaps(2, {"10.0.0.9": 1}, 2**31 - 1)
    first, second = caps.admit_address("10.0.0.1"), caps.admit_address("10.0.0.1")
    assert first is not None and second is not None
    assert caps.admit_address("10.0.0.1") is None
    assert caps.admit_address("10.0.0.9") is not None and caps.admit_address("10.0.0.9") is None
    first()
    first()  # a second release gives nothing back
    assert caps.addresses == {"10.0.0.1": 1, "10.0.0.9": 1}
    second()
    assert "10.0.0.1" not in caps.addresses  # forgotten with its last connection


def test_a_link_local_peers_zone_is_not_part_of_its_address() -> None:
    """Python writes a link-local peer with its zone (``fe80::1%eth0``); Kafka's
    ``Inet6Address.equals`` ignores it: the override applies, and one count."""
    caps = ConnectionCaps(1, {"fe80::1": 2}, 2**31 - 1)
    assert caps.admit_address("fe80::1%eth0") is not None
    assert caps.admit_address("fe80::1%eth1") is not None
    assert caps.admit_address("fe80::1%eth0") is None
    assert caps.addresses == {"fe80::1": 2}


def test_users_are_counted_only_with_a_cap() -> None:
    unlimited = ConnectionCaps(2**31 - 1, {}, 2**31 - 1)
    assert not unlimited.per_address and not unlimited.per_user
    for _ in range(5):
        assert unlimited.admit_user("alice", "c") is not None
    assert unlimited.users == {}
    capped = ConnectionCaps(2**31 - 1, {}, 1)
    release = capped.admit_user("alice", "c")
    assert release is not None and capped.admit_user("alice", "c") is None
    assert capped.admit_user("bob", "c") is not None
    release()
    assert capped.admit_user("alice", "c") is not None


def test_refusals_are_counted_and_said_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sasl_scram.endpoint")
    clock = FakeClock(100.0)
    metrics = EdgeMetrics(UserNames(0))
    caps = ConnectionCaps(1, {}, 1, metrics, clock=lambda: clock.now)
    assert caps.admit_address("10.0.0.1") and caps.admit_address("10.0.0.2")
    assert caps.admit_user("alice", "c1") and caps.admit_user("bob", "c2")
    for _ in range(3):
        assert caps.admit_address("10.0.0.1") is None
        assert caps.admit_address("10.0.0.2") is None  # another address, the same turn
        assert caps.admit_user("alice", "c3") is None
        assert caps.admit_user("bob", "c4") is None  # another user: a line of its own
    assert metrics.cells[:2] == [6, 6]

    def said() -> list[str]:
        return [record.getMessage() for record in caplog.records]

    assert len(said()) == 3, said()
    clock.now += LOG_INTERVAL
    assert caps.admit_address("10.0.0.2") is None and caps.admit_user("alice", "c5") is None
    assert "; 5 more refused since the last line" in said()[3]
    assert "; 2 more refused since the last line" in said()[4]
    assert "[c5] Refused User:'alice' after its login" in said()[4]


def test_the_lines_remember_a_bounded_number_of_keys() -> None:
    clock = FakeClock(0.0)
    lines = RateLimitedLines(60.0, 2, clock=lambda: clock.now)
    assert lines.due("a") == 0 and lines.due("b") == 0
    # Past the bound every new key shares one turn.
    assert lines.due("c") == 0 and lines.due("d") is None and lines.due("e") is None
    clock.now += 60.0
    assert lines.due("f") == 0  # the old keys are forgotten once their minute is over
