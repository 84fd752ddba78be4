"""Delegation tokens shared, both ways, between a real Kafka 3.9 broker in ZooKeeper
mode and a real ``kafka-scram serve`` on the same chroot with the same
``delegation.token.secret.key``.

The broker keeps tokens in its own ``DelegationTokenCache``, fed at start-up and
then only by ``/delegation_token/token_changes`` notifications
(``DelegationTokenManagerZk``'s ``TokenChangedNotificationHandler``); it recomputes
each HMAC from the id. So a token ``serve`` creates logging in to the broker proves
our znode, JSON and notification are what the broker reads, and the broker
describing it proves it sits in the broker's cache. Every change must arrive within
``PROPAGATION_S`` (polled with a deadline); an expiry that only moves the expiry
timestamp reaches the broker's logins at its next sweep
(``delegation.token.expiry.check.interval.ms``, 1 s on both sides).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import jaas
from sasl_scram import ScramMechanism
from sasl_scram.admin import SaslCredentials
from sasl_scram.config import ClientConfig
from tests.support.broker_and_serve import PROPAGATION_S
from tests.support.broker_and_serve import REFUSED
from tests.support.broker_and_serve import login_error
from tests.support.broker_and_serve import login_within
from tests.support.broker_and_serve import within
from tests.support.cli_process import kafka_scram
from tests.support.kafka_broker import MECHANISMS
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess
from tokenauth import DelegationToken
from tokenauth import DelegationTokenClient

SHA256, SHA512 = MECHANISMS
#: An expiry that leaves the token in ZooKeeper is enforced by the broker only when a
#: sweep removes the token (every second here); serve refuses it at once (docs/tokens.md).
SWEEP_BOUND_S = PROPAGATION_S + 1.0


@pytest.fixture
def serve(zookeeper_broker_serve: ServeProcess) -> ServeProcess:
    """The session's serve on the broker's chroot (``tests/support/broker_and_serve.py``)."""
    return zookeeper_broker_serve


@pytest.fixture
def owner(zookeeper_broker: KafkaBroker, serve: ServeProcess) -> str:
    """A user of the test's own (tokens are owned by it), known to both sides."""
    user = unique_name("token-owner")
    zookeeper_broker.add_user(user, "owner-secret")
    creds = zookeeper_broker.credentials(user, "owner-secret")
    login_within(10.0, serve.bootstrap, creds, 0, f"{user} on serve")
    return user


def _client(bootstrap: str, user: str) -> DelegationTokenClient:
    return DelegationTokenClient.connect(
        ClientConfig.from_properties(
            {
                "bootstrap.servers": bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": jaas.scram_login_line(user, "owner-secret"),
            }
        )
    )


def _token(token_id: str, hmac: str, mechanism: ScramMechanism = SHA256) -> SaslCredentials:
    return SaslCredentials(mechanism, token_id, hmac, token_auth=True)


def _logs_in(where: str, bootstrap: str, token_id: str, hmac: str) -> None:
    """The token logs in at ``bootstrap`` with both mechanisms within the limit; a
    wrong HMAC is refused."""
    for mechanism in MECHANISMS:
        what = f"token {token_id} ({mechanism.mechanism_name}) on {where}"
        login_within(PROPAGATION_S, bootstrap, _token(token_id, hmac, mechanism), 0, what)
    assert login_error(bootstrap, _token(token_id, "A" * 86 + "==")) == REFUSED


def _on_both(
    broker: KafkaBroker, serve: ServeProcess, token: DelegationToken, expect: int, limit: float
) -> None:
    """Both sides answer a login with ``token`` with ``expect`` within ``limit`` s."""
    creds = _token(token.token_id, token.hmac_base64)
    for where, bootstrap in (("the broker", broker.bootstrap), ("serve", serve.bootstrap)):
        what = f"token {token.token_id} on {where} answers {expect}"
        login_within(limit, bootstrap, creds, expect, what)


def test_tokens_the_broker_creates_log_in_to_serve(
    zookeeper_broker: KafkaBroker, serve: ServeProcess, owner: str
) -> None:
    with _client(zookeeper_broker.bootstrap, owner) as client:
        token = client.create_token()
    assert token.info.owner.name == owner
    _logs_in("serve", serve.bootstrap, token.token_id, token.hmac_base64)
    # And serve lists it as the owner's, with the broker's timestamps.
    with _client(serve.bootstrap, owner) as client:
        [seen] = [t for t in client.describe_tokens() if t.token_id == token.token_id]
    assert seen.info == token.info
    assert seen.hmac == token.hmac


def test_tokens_serve_creates_log_in_to_the_broker(
    zookeeper_broker: KafkaBroker, serve: ServeProcess, owner: str
) -> None:
    with _client(serve.bootstrap, owner) as client:
        token = client.create_token(renewers=[])
    _logs_in("the broker", zookeeper_broker.bootstrap, token.token_id, token.hmac_base64)
    # It came through the broker's notification listener, not a reload.
    notified = f"Processing Token Notification for tokenId: {token.token_id}"
    assert notified in zookeeper_broker.log_path.read_text(errors="replace")
    # The broker's own cache holds it: DescribeDelegationToken answers from there.
    with _client(zookeeper_broker.bootstrap, owner) as client:
        [seen] = [t for t in client.describe_tokens() if t.token_id == token.token_id]
    assert seen.info == token.info
    assert seen.hmac == token.hmac
    # The broker renews a token serve created, and serve sees the new expiry.
    with _client(zookeeper_broker.bootstrap, owner) as client:
        expiry = client.renew_token(token.hmac, 3_600_000)
    with _client(serve.bootstrap, owner) as client:
        within(
            PROPAGATION_S,
            lambda: any(
                t.token_id == token.token_id and t.info.expiry_timestamp_ms == expiry
                for t in client.describe_tokens()
            ),
            "renewal on serve",
        )


def test_tokens_the_delegation_tokens_command_creates_on_serve_log_in_to_the_broker(
    zookeeper_broker: KafkaBroker, serve: ServeProcess, owner: str, tmp_path: Path
) -> None:
    props = zookeeper_broker.client_properties(
        tmp_path / "owner.properties", owner, "owner-secret", "SCRAM-SHA-256"
    )
    done = kafka_scram(
        "delegation-tokens",
        "--bootstrap-server",
        serve.bootstrap,
        "--command-config",
        str(props),
        "--create",
        "--max-life-time-period",
        "-1",
    )
    assert done.returncode == 0, done.stderr
    row = re.search(r"^(\S{22})\s+(\S{86}==)\s+User:" + re.escape(owner), done.stdout, re.M)
    assert row is not None, done.stdout
    token_id, hmac = row.groups()
    _logs_in("the broker", zookeeper_broker.bootstrap, token_id, hmac)


@pytest.mark.parametrize("expire_on", ["broker", "serve"])
def test_a_token_expired_now_on_either_side_is_refused_on_both(
    zookeeper_broker: KafkaBroker, serve: ServeProcess, owner: str, expire_on: str
) -> None:
    """ExpireDelegationToken with -1 (the Java admin client's default) removes the
    token on either side: the znode goes, with a notification."""
    creator, expirer = (
        (serve.bootstrap, zookeeper_broker.bootstrap)
        if expire_on == "broker"
        else (zookeeper_broker.bootstrap, serve.bootstrap)
    )
    with _client(creator, owner) as client:
        token = client.create_token()
    _on_both(zookeeper_broker, serve, token, 0, PROPAGATION_S)
    with _client(expirer, owner) as client:
        client.expire_token(token.hmac, -1)
    _on_both(zookeeper_broker, serve, token, REFUSED, PROPAGATION_S)


@pytest.mark.parametrize("expire_on", ["broker", "serve"])
def test_a_token_whose_expiry_passes_is_refused_on_both(
    zookeeper_broker: KafkaBroker, serve: ServeProcess, owner: str, expire_on: str
) -> None:
    """ExpireDelegationToken with a period of 0 only moves the expiry timestamp to
    now: serve refuses at once (it checks the expiry at authentication), the broker
    once a sweep has removed the token (its own or serve's, whichever runs first;
    both run every second here)."""
    expirer = zookeeper_broker.bootstrap if expire_on == "broker" else serve.bootstrap
    with _client(expirer, owner) as client:
        token = client.create_token()
    _on_both(zookeeper_broker, serve, token, 0, PROPAGATION_S)
    with _client(expirer, owner) as client:
        client.expire_token(token.hmac, 0)
    _on_both(zookeeper_broker, serve, token, REFUSED, SWEEP_BOUND_S)
