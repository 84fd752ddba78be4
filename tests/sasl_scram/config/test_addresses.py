"""``host:port`` lists: bootstrap.servers as Kafka's clients read it, ZooKeeper's connect string."""

from __future__ import annotations

import re

import pytest

from sasl_scram.config import bootstrap_servers
from sasl_scram.config import zookeeper_connect


def test_bootstrap_servers_as_kafka_reads_them() -> None:
    # Empty entries are skipped (ClientUtils); the port follows the last colon.
    assert bootstrap_servers(" a:1,,b:2 ") == [("a", 1), ("b", 2)]
    assert bootstrap_servers("[::1]:9092,::1:9093") == [("::1", 9092), ("::1", 9093)]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("127.0.0.1", "'127.0.0.1' is not host:port"),
        ("h:abc", "'h:abc' is not host:port"),
        (":9092", "':9092' is not host:port"),
        ("h:0", "port 0 is out of range (1-65535)"),
        ("h:65536", "port 65536 is out of range (1-65535)"),
        ("h:\u0663", "'h:\u0663' is not host:port"),  # an Arabic-Indic 3: not an ASCII digit
        ("[::1]", "'[::1]' is not host:port"),
        ("[::1]x:1", "'[::1]x:1' is not host:port"),
        (" , ", "no host:port given"),
    ],
)
def test_bootstrap_servers_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(problem)}$"):
        bootstrap_servers(text)


def test_zookeeper_connect_takes_a_default_port_and_a_chroot() -> None:
    for text in ("zk", "zk1,zk2:2182", "zk:2181/kafka/prod", "[::1]:2181", "[::1]"):
        assert zookeeper_connect(f" {text} ") == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("zk:abc", "'zk:abc' is not host:port"),
        ("zk:1,,", "an empty host:port in 'zk:1,,'"),
        ("zk:99999/x", "port 99999 is out of range"),
        ("/chroot", "no host:port given"),
    ],
)
def test_zookeeper_connect_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        zookeeper_connect(text)
    assert str(caught.value).startswith(problem)
