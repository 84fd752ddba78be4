"""ACLs shared with a real Kafka 3.9.2 broker in ZooKeeper mode (``AclAuthorizer`` on
the session's ZooKeeper): what our store writes on its chroot, the broker enforces;
what the broker's CreateAcls writes, our store follows.

The shared broker allows everyone on a resource without ACLs
(``allow.everyone.if.no.acl.found``), so an ACL on a test's own topic for its own
user is what turns an answer around.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram.authz import AclBindingFilter
from sasl_scram.store import ZooKeeperAclStore
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import deny
from tests.support.cluster_acls import TOPIC_AUTHORIZATION_FAILED
from tests.support.cluster_acls import add_acl
from tests.support.cluster_acls import create_topic
from tests.support.cluster_acls import wait_topic_error
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until

#: How long our store may take to follow the broker; the broker, its own notification.
WITHIN = 1.0
BROKER_WITHIN = 5.0


@pytest.fixture
def store(zookeeper_broker: KafkaBroker) -> Iterator[ZooKeeperAclStore]:
    """Our ACL store on the broker's own chroot."""
    assert zookeeper_broker.zookeeper_connect is not None
    opened = ZooKeeperAclStore(zookeeper_broker.zookeeper_connect)
    yield opened
    opened.close()


def test_the_broker_enforces_the_acls_our_store_writes(
    zookeeper_broker: KafkaBroker, store: ZooKeeperAclStore
) -> None:
    broker = zookeeper_broker
    user, topic = unique_name("acl-user"), unique_name("acl-topic")
    broker.add_user(user, "pw-" + user)
    create_topic(broker, topic)
    login = broker.credentials(user, "pw-" + user)
    wait_topic_error(broker.bootstrap, login, topic, 0)
    refusal = deny(topic, Op.DESCRIBE, f"User:{user}")
    assert store.create_acls([refusal])[0].error.name == "NONE"
    wait_topic_error(broker.bootstrap, login, topic, TOPIC_AUTHORIZATION_FAILED, BROKER_WITHIN)
    [result] = store.delete_acls([refusal.to_filter()])
    assert result.deleted == (refusal,)
    wait_topic_error(broker.bootstrap, login, topic, 0, BROKER_WITHIN)


def test_our_store_follows_the_acls_the_broker_creates(
    zookeeper_broker: KafkaBroker, store: ZooKeeperAclStore, tmp_path: Path
) -> None:
    user, topic = unique_name("acl-user"), unique_name("acl-topic")
    # kafka-acls --bootstrap-server: CreateAcls, which the broker's AclAuthorizer writes.
    add_acl(zookeeper_broker, tmp_path, user, "Read", "--topic", topic)
    granted = allow(topic, Op.READ, f"User:{user}")
    mine = AclBindingFilter(granted.pattern.to_filter(), granted.entry.to_filter())
    assert wait_until(lambda: store.describe_acls(mine) == (granted,), WITHIN) is not None
    store.delete_acls([mine])
    assert store.describe_acls(mine) == ()
