"""ZooKeeper's ACL nodes as Kafka 3.x's ``AclAuthorizer`` writes and reads them.

The expected bytes are what Kafka 3.9.2's own ``ResourceZNode.encode``,
``ResourceZNode.path`` and the two change stores produced for the same input (run
once with Kafka's jars); the 3.7 layout is read from its Scala ``AclEntry.toMap``.
"""

from __future__ import annotations

import pytest

from sasl_scram.authz import ACL_CHANGES_PATH
from sasl_scram.authz import EXTENDED_ACL_CHANGES_PATH
from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import AuthzError
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType
from sasl_scram.authz import acl_node_path
from sasl_scram.authz import change_node
from sasl_scram.authz import change_node_name
from sasl_scram.authz import decode_acl_node
from sasl_scram.authz import decode_change
from sasl_scram.authz import encode_acl_node
from sasl_scram.authz import parse_acl_node_path

ALICE_READ = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
ODD = AccessControlEntry(
    'User:b"o\\b\u00e9\u0001\n', "10.0.0.1", AclOperation.IDEMPOTENT_WRITE, AclPermissionType.DENY
)
KAFKA_3_9_NODE = (
    b'{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"},'
    b'{"principal":"User:b\\"o\\\\b\xc3\xa9\\u0001\\n","permissionType":"Deny","host":"10.0.0.1",'
    b'"operation":"IdempotentWrite"}],"version":1}'
)
KAFKA_3_7_NODE = (
    b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",'
    b'"operation":"Read","host":"*"}]}'
)


def test_a_node_is_written_byte_for_byte_as_kafka_3_9_writes_it() -> None:
    assert encode_acl_node([ALICE_READ, ODD]) == KAFKA_3_9_NODE


def test_and_as_kafka_3_7_wrote_it() -> None:
    assert encode_acl_node([ALICE_READ], before_3_8=True) == KAFKA_3_7_NODE


def test_jackson_escapes_control_characters_in_upper_case_hex() -> None:
    entry = AccessControlEntry("User:\u001f\t", "*", AclOperation.ALL, AclPermissionType.ALLOW)
    assert b'"principal":"User:\\u001F\\t"' in encode_acl_node([entry])


@pytest.mark.parametrize("data", [KAFKA_3_9_NODE, KAFKA_3_7_NODE])
def test_nodes_of_either_layout_read_back(data: bytes) -> None:
    entries = decode_acl_node(data)
    assert entries[0] == ALICE_READ
    assert decode_acl_node(encode_acl_node(entries)) == entries


def test_reading_is_as_lenient_as_kafkas_names_and_drops_repeats() -> None:
    data = (
        b'{"version":1,"acls":['
        b'{"host":"h","permissionType":"DENY","operation":"idempotentwrite","principal":"User:a"},'
        b'{"host":"h","permissionType":"Deny","operation":"IdempotentWrite","principal":"User:a"}]}'
    )
    assert decode_acl_node(data) == (
        AccessControlEntry("User:a", "h", AclOperation.IDEMPOTENT_WRITE, AclPermissionType.DENY),
    )
    assert decode_acl_node(b"") == ()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{not json", "not JSON"),
        (b'{"version":2,"acls":[]}', '"version":1'),
        (b'{"version":1}', 'no "acls" list'),
        (
            b'{"version":1,"acls":[{"principal":"alice","permissionType":"Allow",'
            b'"operation":"Read","host":"*"}]}',
            "not Type:Name",
        ),
        (
            b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Maybe",'
            b'"operation":"Read","host":"*"}]}',
            "write Allow or Deny",
        ),
        (
            b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow",'
            b'"operation":"Idempotent_Write","host":"*"}]}',
            "write one such as Read",
        ),
        (b'{"version":1,"acls":[{"principal":"User:a"}]}', "'permissionType' is missing"),
    ],
)
def test_damaged_nodes_are_refused_with_the_fix(data: bytes, problem: str) -> None:
    with pytest.raises(AuthzError, match=problem):
        decode_acl_node(data)


PATHS = {
    "/kafka-acl/TransactionalId/tx-1": (ResourceType.TRANSACTIONAL_ID, "tx-1", PatternType.LITERAL),
    "/kafka-acl-extended/prefixed/Topic/ord": (ResourceType.TOPIC, "ord", PatternType.PREFIXED),
    "/kafka-acl/Cluster/kafka-cluster": (
        ResourceType.CLUSTER,
        "kafka-cluster",
        PatternType.LITERAL,
    ),
    "/kafka-acl/Topic/*": (ResourceType.TOPIC, "*", PatternType.LITERAL),
    "/kafka-acl/DelegationToken/t": (ResourceType.DELEGATION_TOKEN, "t", PatternType.LITERAL),
    "/kafka-acl/User/User:bob": (ResourceType.USER, "User:bob", PatternType.LITERAL),
}


@pytest.mark.parametrize(("path", "pattern"), PATHS.items(), ids=PATHS.keys())
def test_node_paths(path: str, pattern: tuple[ResourceType, str, PatternType]) -> None:
    assert acl_node_path(ResourcePattern(*pattern)) == path
    assert parse_acl_node_path(path) == ResourcePattern(*pattern)


def test_paths_kafka_cannot_have() -> None:
    with pytest.raises(AuthzError, match="holds '/'"):
        acl_node_path(ResourcePattern(ResourceType.TOPIC, "a/b", PatternType.LITERAL))
    for name in ("", ".", "..", "a\x00", "a\x1f", "a\x7f", "a\x9f", "a\ue000", "a\U0001f600"):
        with pytest.raises(AuthzError, match="names no ZooKeeper node"):
            acl_node_path(ResourcePattern(ResourceType.GROUP, name, PatternType.PREFIXED))
    for name in ("a\xa0", "\u4e2d", "a\uf900", "a\uffef", "a b", "..."):
        assert acl_node_path(ResourcePattern(ResourceType.GROUP, name, PatternType.LITERAL))
    for path in ("/kafka-acl/Topic", "/kafka-acl/Queue/q", "/kafka-acl-extended/PREFIXED/Topic/t"):
        with pytest.raises(AuthzError, match="is not an ACL node"):
            parse_acl_node_path(path)


def test_change_nodes_as_kafka_3_9_writes_them() -> None:
    literal = ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx-1", PatternType.LITERAL)
    prefixed = ResourcePattern(ResourceType.TOPIC, "ord", PatternType.PREFIXED)
    assert change_node(literal) == ("/kafka-acl-changes/acl_changes_", b"TRANSACTIONAL_ID:tx-1")
    assert change_node(prefixed) == (
        "/kafka-acl-extended-changes/acl_changes_",
        b'{"version":1,"resourceType":"TOPIC","name":"ord","patternType":"PREFIXED"}',
    )
    assert change_node_name(42) == "acl_changes_0000000042"
    for pattern in (literal, prefixed):
        path, data = change_node(pattern)
        assert decode_change(path + change_node_name(7), data) == pattern


def test_change_nodes_read_as_kafka_reads_them() -> None:
    literal_path = f"{ACL_CHANGES_PATH}/{change_node_name(1)}"
    extended_path = f"{EXTENDED_ACL_CHANGES_PATH}/{change_node_name(1)}"
    # The literal store splits at the first colon and reads the type in any case.
    assert decode_change(literal_path, b"topic:a:b") == ResourcePattern(
        ResourceType.TOPIC, "a:b", PatternType.LITERAL
    )
    event = b'{"version":1,"resourceType":"group","name":"g","patternType":"PREFIXED"}'
    assert decode_change(extended_path, event) == ResourcePattern(
        ResourceType.GROUP, "g", PatternType.PREFIXED
    )
    bad = {
        (literal_path, b"orders"): "ResourceType:ResourceName",
        (literal_path, b"Queue:q"): "ResourceType:ResourceName",
        (extended_path, event.replace(b"PREFIXED", b"Prefixed")): "in capitals",
        (extended_path, event.replace(b'"version":1', b'"version":2')): "unsupported version: 2",
        (extended_path, b'{"version":1}'): "those four properties",
        ("/kafka-acl/Topic/t", b"TOPIC:t"): "not an ACL change node",
    }
    for (path, data), problem in bad.items():
        with pytest.raises(AuthzError, match=problem):
            decode_change(path, data)
