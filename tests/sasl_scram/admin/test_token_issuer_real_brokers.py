"""Owner tokens from real clusters: Kafka 4.x (KRaft, StandardAuthorizer) and 3.9
(ZooKeeper, AclAuthorizer), whose super user is the upstream login.

A token owned by a user logs in to the cluster as that user; it is renewed and
expired by the login that asked for it; a login without CreateTokens on the
user gets the one-line refusal.
"""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import ClusterTokenIssuer
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.config import ClientConfig
from sasl_scram.frontdoor import OwnerTokenError
from sasl_scram.frontdoor import OwnerTokens
from sasl_scram.frontdoor import TokenChange
from sasl_scram.frontdoor import read_upstream
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from tests.support.clock import FakeClock
from tests.support.cluster_acls import TOPIC_AUTHORIZATION_FAILED
from tests.support.cluster_acls import add_acl
from tests.support.cluster_acls import create_topic
from tests.support.cluster_acls import wait_topic_error
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name

_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule"
_DAY_MS = 86_400_000


def upstream(
    broker: KafkaBroker, user: str = ADMIN_USER, password: str = ADMIN_PASSWORD
) -> ClientConfig:
    """The ``upstream.`` keys of a front door in front of ``broker``, as serve types them."""
    properties = {
        "upstream.bootstrap.servers": broker.bootstrap,
        "upstream.identity": "owner-token",
        "upstream.security.protocol": "SASL_PLAINTEXT",
        "upstream.sasl.mechanism": "SCRAM-SHA-256",
        "upstream.sasl.jaas.config": f'{_JAAS} required username="{user}" password="{password}";',
    }
    config = read_upstream(properties, listener_port=9092)
    assert config is not None
    return config.client


def token_login(token_id: str, hmac: bytes) -> SaslCredentials:
    password = base64.b64encode(hmac).decode()
    return SaslCredentials(ScramMechanism.SCRAM_SHA_256, token_id, password, token_auth=True)


def owners_tokens(broker: KafkaBroker, owner: str) -> list[dict[str, object]]:
    """DescribeDelegationToken for ``User:<owner>``, as the super user."""
    body = {"owners": [{"principal_type": "User", "principal_name": owner}]}
    with broker.connect() as conn:
        response = conn.request(ApiKey.DESCRIBE_DELEGATION_TOKEN, body)
    assert response["error_code"] == 0
    tokens: list[dict[str, object]] = response["tokens"]
    return tokens


def test_a_token_owned_by_alice_logs_in_is_renewed_and_expired(kafka_broker: KafkaBroker) -> None:
    alice = unique_name("alice")
    issuer = ClusterTokenIssuer(upstream(kafka_broker))
    try:
        before = time.time_ns() // 1_000_000
        token = issuer.create(alice)
        assert before < token.expiry_ms <= token.max_ms
        login = token_login(token.token_id, token.hmac)
        # A new token reaches the broker's token cache asynchronously (KRaft's
        # metadata log, ZooKeeper's change notifications).
        kafka_broker.wait_login(login)
        [described] = owners_tokens(kafka_broker, alice)
        assert described["token_id"] == token.token_id
        assert described["renewers"] == [{"principal_type": "User", "principal_name": ADMIN_USER}]
        with KafkaConnection(kafka_broker.bootstrap, login, timeout=10.0) as conn:
            # KIP-368: the cluster ends a token's session at the token's expiry.
            remaining = token.expiry_ms - time.time_ns() // 1_000_000
            assert 0 < conn.session_lifetime_ms <= remaining + 1000

        renewed = issuer.renew(token.hmac)
        assert token.expiry_ms <= renewed <= token.max_ms
        issuer.expire(token.hmac)
        kafka_broker.wait_refused(login)
        assert owners_tokens(kafka_broker, alice) == []
        with pytest.raises(OwnerTokenError) as gone:
            issuer.renew(token.hmac)
        assert gone.value.error_code in (
            ErrorCode.DELEGATION_TOKEN_NOT_FOUND,
            ErrorCode.DELEGATION_TOKEN_EXPIRED,
        )
    finally:
        issuer.close()


def test_the_cluster_authorizes_a_token_as_its_owner(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    """What owner-token mode is for: the cluster's ACLs apply to each user by name."""
    alice, bob = unique_name("alice"), unique_name("bob")
    topic = unique_name("owner-token")
    create_topic(kafka_broker, topic)
    # An ACL on the topic (the shared broker allows everyone on a resource
    # without ACLs): alice may read it, bob may not.
    add_acl(kafka_broker, tmp_path, alice, "Read", "--topic", topic)
    issuer = ClusterTokenIssuer(upstream(kafka_broker))
    try:
        tokens = {user: issuer.create(user) for user in (alice, bob)}
        logins = {user: token_login(t.token_id, t.hmac) for user, t in tokens.items()}
        for login in logins.values():
            kafka_broker.wait_login(login)
        wait_topic_error(kafka_broker.bootstrap, logins[bob], topic, TOPIC_AUTHORIZATION_FAILED)
        wait_topic_error(kafka_broker.bootstrap, logins[alice], topic, ErrorCode.NONE)
        for token in tokens.values():
            issuer.expire(token.hmac)
    finally:
        issuer.close()


def test_owner_tokens_renew_and_close_against_the_cluster(kafka_broker: KafkaBroker) -> None:
    alice = unique_name("alice")
    clock = FakeClock.wall_ms()
    tokens = OwnerTokens(ClusterTokenIssuer(upstream(kafka_broker)), clock)
    try:
        tokens.acquire(alice)
        token = tokens.login_for(alice)
        login = token_login(token.token_id, token.hmac)
        kafka_broker.wait_login(login)
        # Half the cluster's default expiry period (one day) from the create,
        # which the cluster timed a little after this frozen clock.
        clock.advance(_DAY_MS // 2 + 60_000)
        assert [c.change for c in tokens.maintain(clock())] == [TokenChange.RENEWED]
        assert tokens.login_for(alice).token_id == token.token_id
    finally:
        tokens.close()
    kafka_broker.wait_refused(login)


def test_create_tokens_on_the_user_is_what_a_login_needs(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    alice, granted, other = (unique_name(n) for n in ("alice", "granted", "other"))
    for user in (granted, other):
        kafka_broker.add_user(user, f"{user}-secret")
    # An ACL on User:<alice> (the shared broker allows everyone on a resource
    # without ACLs): only the granted login may create alice's tokens.
    add_acl(kafka_broker, tmp_path, granted, "CreateTokens", "--user-principal", f"User:{alice}")
    allowed = ClusterTokenIssuer(upstream(kafka_broker, granted, f"{granted}-secret"))
    refused = ClusterTokenIssuer(upstream(kafka_broker, other, f"{other}-secret"))
    try:
        deadline = time.monotonic() + 20
        while True:  # ACLs reach the authorizer asynchronously
            try:
                token = allowed.create(alice)
                break
            except OwnerTokenError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        # The requester is the token's renewer: it renews and expires it, once
        # the broker knows the token (a KRaft broker answers DELEGATION_TOKEN_NOT_FOUND
        # until the metadata log has reached it).
        kafka_broker.wait_login(token_login(token.token_id, token.hmac))
        assert allowed.renew(token.hmac) >= token.expiry_ms
        allowed.expire(token.hmac)

        with pytest.raises(OwnerTokenError) as info:
            refused.create(alice)
        assert info.value.error_code == ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED
        assert str(info.value) == (
            f"the upstream login {other!r} may not create tokens for User:{alice}: grant it "
            f"CreateTokens on that user (kafka-acls.sh --add --allow-principal User:{other} "
            f"--operation CreateTokens --user-principal User:{alice}) or make it a super user "
            "(super.users)"
        )
        with pytest.raises(OwnerTokenError, match="may not create tokens"):
            OwnerTokens(refused, FakeClock.wall_ms()).check(alice)
    finally:
        allowed.close()
        refused.close()
