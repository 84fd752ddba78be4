"""The bench's broker path: ``bench/java_style_client.c``, driven by
``bench/_java_style.py`` as ``make bench`` drives it, logs in to the real Kafka
4.x broker and counts only logins the broker verified. No figure is asserted
(a machine's noise must never fail a test); what is asserted is that the
bench's broker rows measure logins, not refusals, and that the broker refuses
the re-authentication the bench leaves it out of.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sasl_scram import ScramMechanism
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name

BENCH = Path(__file__).resolve().parent.parent / "bench"
PASSWORD = "bench-test-secret"


def _load_java_style() -> ModuleType:
    """``bench/`` is scripts, not a package: load its module by path (with the
    folder on the path, for its own imports, as when a bench runs)."""
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))
    spec = importlib.util.spec_from_file_location("_java_style", BENCH / "_java_style.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_java_style", module)
    spec.loader.exec_module(module)
    return module


java_style = _load_java_style()


@pytest.fixture(scope="module")
def client() -> Path:
    """The load generator, compiled as the bench compiles it (cached)."""
    exe: Path = java_style.build_client()
    return exe


@pytest.fixture(scope="module")
def user(kraft_broker: KafkaBroker) -> str:
    """A user with the bench's mechanism and iterations, created through the broker."""
    name = unique_name("bench")
    kraft_broker.add_user(
        name, PASSWORD, [ScramMechanism.SCRAM_SHA_256], iterations=java_style.ITERATIONS
    )
    return name


def _run(
    client: Path, broker: KafkaBroker, port: int, mode: str, seconds: float, **kwargs: object
) -> object:
    assert broker.pid is not None
    return java_style.java_style(client, broker.pid, port, mode=mode, seconds=seconds, **kwargs)


def test_java_style_logins_to_the_broker_are_counted_with_its_cpu(
    client: Path, kraft_broker: KafkaBroker, user: str
) -> None:
    sample = _run(
        client, kraft_broker, kraft_broker.port, "login", 1.0, concurrency=5, user=user,
        password=PASSWORD,
    )  # fmt: skip
    assert isinstance(sample, java_style.Sample)
    assert sample.logins > 0
    assert sample.rate > 0
    # The JVM's CPU, all its threads, is read over the window.
    assert sample.server_us > 0


def test_a_refused_login_fails_the_run_with_the_brokers_error(
    client: Path, kraft_broker: KafkaBroker, user: str
) -> None:
    with pytest.raises(java_style.LoginsFailed, match="SaslAuthenticate error 58"):
        _run(
            client, kraft_broker, kraft_broker.port, "login", 0.3, concurrency=2, user=user,
            password="wrong-password",
        )  # fmt: skip


def test_paced_reauthentication_on_the_reauth_listener(
    client: Path, kraft_broker: KafkaBroker, user: str
) -> None:
    """KIP-368: with connections.max.reauth.ms set, each connection
    re-authenticates every REAUTH_INTERVAL_MS; every turn completes within
    1.5 s of the window opening."""
    sample = _run(
        client, kraft_broker, kraft_broker.reauth_port, "reauth", 1.5, concurrency=3,
        interval_ms=java_style.REAUTH_INTERVAL_MS, user=user, password=PASSWORD,
    )  # fmt: skip
    assert isinstance(sample, java_style.Sample)
    assert sample.logins >= 3


@pytest.mark.parametrize(
    ("listener", "interval_ms"),
    [
        # KafkaChannel: one re-authentication start per second per connection.
        ("reauth", 0),
        # No connections.max.reauth.ms: no session lifetime, no re-authentication.
        ("plain", 1100),
    ],
    ids=["back-to-back", "without-max-reauth-ms"],
)
def test_the_broker_refuses_reauthentication_the_bench_leaves_it_out_of(
    client: Path, kraft_broker: KafkaBroker, user: str, listener: str, interval_ms: int
) -> None:
    port = kraft_broker.reauth_port if listener == "reauth" else kraft_broker.port
    with pytest.raises(java_style.LoginsFailed, match="SaslHandshake error"):
        _run(
            client, kraft_broker, port, "reauth", 1.5, concurrency=1, interval_ms=interval_ms,
            user=user, password=PASSWORD,
        )  # fmt: skip


def test_the_load_generator_is_rebuilt_for_another_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkouts of different commits share the cache (``~/.cache/kafka-scram``):
    a binary built from one source must never serve another, whatever the
    files' times say."""
    monkeypatch.setenv("KAFKA_SCRAM_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "client.c"
    monkeypatch.setattr(java_style, "CLIENT_SOURCE", source)
    source.write_text("int main(void) { return 1; }\n")
    first: Path = java_style.build_client()
    source.write_text("int main(void) { return 2; }\n")
    # The second source is older than the first binary, as a checkout of an
    # older commit is.
    os.utime(source, (first.stat().st_mtime - 60, first.stat().st_mtime - 60))
    second: Path = java_style.build_client()
    assert subprocess.run([first], check=False).returncode == 1
    assert subprocess.run([second], check=False).returncode == 2
    assert java_style.build_client() == second  # and it is cached
