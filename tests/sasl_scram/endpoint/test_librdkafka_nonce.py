"""The SCRAM client-final nonce rule, per Kafka version, and ``serve``'s setting for it.

Kafka 3.7.2 to 3.9.x (CVE-2024-56128) check ``clientFinal.nonce().endsWith(
serverFirst.nonce())`` in ``ScramSaslServer``, which librdkafka before 2.6.1
relies on: it sends ``r=<clientNonce><clientNonce><serverNonce>``
(confluentinc/librdkafka#4895). Kafka 4.x requires equality. Debian's ``kcat``
links librdkafka 2.0.2, so it is the real old client here: against the real
brokers (3.9.2 accepts it, 4.4.0 refuses it) and against a real ``kafka-scram
serve`` process, which refuses it by default, says why in its log, and accepts
exactly that form with ``scram.legacy.librdkafka.nonce.enable=true``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram import ScramMechanism
from sasl_scram.endpoint._config import LEGACY_NONCE_KEY
from tests.sasl_scram.endpoint.serve_process import SASL_AUTHENTICATE
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.endpoint_harness import ALICE
from tests.support.forged_nonce import client_final_with_nonce
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.kcat import kcat_metadata

GENERIC = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"
)
MECHS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]


def forged_login(port: int, user: str, password: str, prefix: str) -> int:
    """A login over a raw connection whose client-final nonce is ``prefix`` followed by the
    server-first nonce, with a valid proof; the last SaslAuthenticate error code."""
    with Peer(port) as peer:
        client = ScramClient(SCRAM_SHA_256, user, password, key_cache=None)
        first = client.client_first()
        server_first = peer.server_first(first)
        nonce = server_first.decode("ascii").split(",", 1)[0][2:]
        final = client_final_with_nonce(
            SCRAM_SHA_256, password, first, server_first, prefix + nonce
        )
        answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
        return int(answer["error_code"])


# -- the real brokers: 3.9.2 ends-with, 4.4.0 equality ----------------------------------


@pytest.mark.parametrize("mech", MECHS)
def test_kcat_logs_in_to_kafka_3_9_and_is_refused_by_kafka_4(
    kafka_broker: KafkaBroker, mech: str
) -> None:
    user = unique_name("kcat")
    kafka_broker.add_user(user, "kcat-password", [ScramMechanism.from_name(mech)])
    proc = kcat_metadata(kafka_broker.bootstrap, mech, user, "kcat-password", wait_s=5)
    if kafka_broker.version.startswith("3."):
        assert proc.returncode == 0, proc.stderr
        assert "1 brokers:" in proc.stdout
    else:
        assert proc.returncode != 0, proc.stdout
        assert f"SASL authentication error: {GENERIC.format(mech)}" in proc.stderr


def test_kafka_3_9_accepts_any_prefix_and_kafka_4_none(kafka_broker: KafkaBroker) -> None:
    # Why the setting accepts only librdkafka's form: 3.9's endsWith lets any
    # prefix through (shown here with a valid proof), which RFC 5802 section 5.1 does not.
    user = unique_name("prefix")
    kafka_broker.add_user(user, "prefix-password", [SCRAM_SHA_256])
    port = int(kafka_broker.bootstrap.rsplit(":", 1)[1])
    expected = 0 if kafka_broker.version.startswith("3.") else 58
    assert forged_login(port, user, "prefix-password", "anything") == expected
    assert forged_login(port, user, "prefix-password", "") == 0


# -- kafka-scram serve: refused and explained by default, accepted with the setting -------


@pytest.fixture(scope="module")
def strict_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    """``serve`` with the default: Kafka 4.x's equality."""
    base = tmp_path_factory.mktemp("strict")
    seed(base / "creds.db")
    with Serve(base, base / "creds.db") as serve:
        yield serve


@pytest.fixture(scope="module")
def legacy_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    """``serve`` that also accepts librdkafka < 2.6.1's nonce."""
    base = tmp_path_factory.mktemp("legacy")
    seed(base / "creds.db")
    with Serve(base, base / "creds.db", {LEGACY_NONCE_KEY: "true"}) as serve:
        yield serve


def failed_lines(serve: Serve, user: str) -> list[str]:
    return [
        line
        for line in serve.log_lines()
        if "Failed authentication" in line and f"user {user!r}" in line
    ]


@pytest.mark.slow
@pytest.mark.parametrize("mech", MECHS)
def test_serve_refuses_kcat_by_default_and_logs_why_once_per_connection(
    strict_serve: Serve, mech: str
) -> None:
    user, password = ALICE
    before = len(failed_lines(strict_serve, user))
    proc = kcat_metadata(strict_serve.bootstrap, mech, user, password, wait_s=2)
    assert proc.returncode != 0, proc.stdout
    # The client sees Kafka 4.x's generic text, nothing about the cause.
    assert f"SASL authentication error: {GENERIC.format(mech)}" in proc.stderr
    assert "librdkafka" not in proc.stderr
    strict_serve.wait_for_log(f"mechanism {mech}, user 'alice'): ")
    lines = failed_lines(strict_serve, user)[before:]
    # One line per refused connection (kcat may reconnect), each naming the cause
    # and the setting, and nothing else about it in the log.
    assert lines
    for line in lines:
        assert line.endswith(
            f"{GENERIC.format(mech)}; the client-final nonce repeats the client nonce, as "
            "librdkafka < 2.6.1 sends it (confluentinc/librdkafka#4895) and Kafka "
            "3.7.2-3.9.x accept but Kafka 4.x refuses: upgrade the client to librdkafka "
            f"2.6.1 or later, or set {LEGACY_NONCE_KEY}=true"
        ), line
    log = strict_serve.log_text()
    assert all("Failed authentication" in line for line in log.splitlines() if "librdkafka" in line)
    assert password not in log


def test_serve_names_no_librdkafka_cause_for_another_prefix(strict_serve: Serve) -> None:
    assert forged_login(strict_serve.port, "admin", "admin-secret", "X") == 58
    line = strict_serve.wait_for_log("user 'admin'): ")
    assert line.endswith(GENERIC.format("SCRAM-SHA-256")), line
    assert forged_login(strict_serve.port, "admin", "admin-secret", "") == 0


@pytest.mark.slow
@pytest.mark.parametrize("mech", MECHS)
def test_serve_with_the_setting_lets_kcat_log_in(legacy_serve: Serve, mech: str) -> None:
    user, password = ALICE
    proc = kcat_metadata(legacy_serve.bootstrap, mech, user, password, wait_s=5)
    assert proc.returncode == 0, proc.stderr
    # librdkafka checked our server signature (v=) too, then read the metadata.
    assert f"1 brokers:\n  broker 1 at {legacy_serve.bootstrap} (controller)" in proc.stdout
    assert failed_lines(legacy_serve, user) == []


def test_serve_with_the_setting_refuses_every_other_prefix(legacy_serve: Serve) -> None:
    admin, password = "admin", "admin-secret"
    for prefix in ("X", "cnonce", "anything-at-all"):
        assert forged_login(legacy_serve.port, admin, password, prefix) == 58
    assert forged_login(legacy_serve.port, admin, password, "") == 0
    assert forged_login(legacy_serve.port, admin, "wrong-password", "") == 58
