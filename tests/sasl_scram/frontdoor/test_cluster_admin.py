"""Whether the principal the cluster sees behind the front door is a cluster
administrator: KIP-430's bit field read, and the two decisions taken from it
(service mode's start, owner-token mode's logins). The real brokers' answers
are in tests/frontdoor/test_cluster_admin.py."""

from __future__ import annotations

import pytest

from sasl_scram.authz import AclOperation
from sasl_scram.config import ClientConfig
from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor import ADMIN_OPERATIONS
from sasl_scram.frontdoor import CLUSTER_OPERATIONS
from sasl_scram.frontdoor import KAFKA_AUTHORIZERS
from sasl_scram.frontdoor import NOT_COMPUTED
from sasl_scram.frontdoor import ClusterAdminError
from sasl_scram.frontdoor import ClusterOperations
from sasl_scram.frontdoor import OwnerAdminRefused
from sasl_scram.frontdoor import check_service_login
from sasl_scram.frontdoor import describe_cluster_request
from sasl_scram.frontdoor import describe_cluster_version
from sasl_scram.frontdoor import edge_authorizer_enabled
from sasl_scram.frontdoor import owner_refusal
from sasl_scram.frontdoor import upstream_login_name
from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.kafka import frame
from sasl_scram.kafka._primitives import Writer

C = AclOperation
#: What a super user, or anyone on a broker without an authorizer, is answered:
#: bit ``1 << code`` of every operation of AclEntry.supportedOperations(CLUSTER)
#: (CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
#: ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12).
EVERY_CLUSTER_OPERATION = 0b1_1111_1010_0000
#: ALLOW Describe on the cluster only.
DESCRIBE_ONLY = 1 << 8
LOGIN = "the upstream login 'frontdoor'"
ADMIN = KafkaPrincipal.user("admin")


def ops(bits: int) -> ClusterOperations:
    return ClusterOperations.from_bits(bits)


def test_the_codes_are_kafkas_acl_operations() -> None:
    """``org.apache.kafka.common.acl.AclOperation``'s codes and Kafka's display names."""
    assert {op.display_name: op.code for op in CLUSTER_OPERATIONS} == {
        "Create": 5,
        "Alter": 7,
        "Describe": 8,
        "ClusterAction": 9,
        "DescribeConfigs": 10,
        "AlterConfigs": 11,
        "IdempotentWrite": 12,
    }
    assert ADMIN_OPERATIONS == (C.ALTER, C.ALTER_CONFIGS, C.CLUSTER_ACTION)
    assert EVERY_CLUSTER_OPERATION == sum(1 << op.code for op in CLUSTER_OPERATIONS) == 8096


@pytest.mark.parametrize(
    ("bits", "held", "admin", "visible"),
    [
        (EVERY_CLUSTER_OPERATION, set(CLUSTER_OPERATIONS), ADMIN_OPERATIONS, True),
        (DESCRIBE_ONLY, {C.DESCRIBE}, (), True),
        # IdempotentWrite and Create: a producer's grants, no administrator.
        ((1 << 8) | (1 << 12) | (1 << 5), {C.DESCRIBE, C.IDEMPOTENT_WRITE, C.CREATE}, (), True),
        # Alter implies Describe; AlterConfigs implies DescribeConfigs.
        ((1 << 7) | (1 << 8), {C.ALTER, C.DESCRIBE}, (C.ALTER,), True),
        (
            (1 << 8) | (1 << 10) | (1 << 11),
            {C.DESCRIBE, C.DESCRIBE_CONFIGS, C.ALTER_CONFIGS},
            (C.ALTER_CONFIGS,),
            True,
        ),
        ((1 << 8) | (1 << 9), {C.DESCRIBE, C.CLUSTER_ACTION}, (C.CLUSTER_ACTION,), True),
        # No Describe on the cluster: the broker answers 0, whatever else is held.
        (0, set(), (), False),
        # Bits of no cluster operation (a topic's Read, Kafka's unknown ones) are not ours.
        ((1 << 3) | (1 << 8) | (1 << 30), {C.DESCRIBE}, (), True),
    ],
)
def test_the_bit_field_read(
    bits: int, held: set[AclOperation], admin: tuple[AclOperation, ...], visible: bool
) -> None:
    operations = ops(bits)
    assert operations.held == held
    assert operations.admin == admin
    assert operations.visible is visible
    # What the cluster hides counts as an administrator's: the checks fail closed.
    assert operations.is_admin is (bool(admin) or not visible)


def test_a_field_the_broker_did_not_compute_is_no_answer() -> None:
    """Integer.MIN_VALUE: the schema's default, when the request did not ask."""
    assert NOT_COMPUTED == -(2**31)
    with pytest.raises(ValueError, match="did not compute"):
        ops(NOT_COMPUTED)


@pytest.mark.parametrize(("max_version", "sent"), [(0, 0), (1, 1), (2, 2), (7, 2)], ids=str)
def test_the_describe_cluster_version(max_version: int, sent: int) -> None:
    entries = [
        {"api_key": ApiKey.METADATA, "min_version": 0, "max_version": 13},
        {"api_key": ApiKey.DESCRIBE_CLUSTER, "min_version": 0, "max_version": max_version},
    ]
    assert describe_cluster_version(entries) == sent
    assert describe_cluster_version(entries[:1]) is None


@pytest.mark.parametrize("version", [0, 1, 2])
def test_the_request_and_its_answer_through_the_codec(version: int) -> None:
    """Our own request encodes at each version (the endpoint still refuses
    DescribeCluster as unknown), and the answer's field reads back."""
    request = encode_request(ApiKey.DESCRIBE_CLUSTER, version, 7, "c", describe_cluster_request())
    # size, key 60, version, correlation id, client id "c": then the body.
    assert request[4:8] == bytes([0, 60, 0, version])
    spec = ADDRESS_API_SPECS[ApiKey.DESCRIBE_CLUSTER]
    body: dict[str, object] = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "endpoint_type": 1,
        "cluster_id": "c1",
        "controller_id": 1,
        "brokers": [],
        "cluster_authorized_operations": EVERY_CLUSTER_OPERATION,
    }
    w = Writer()
    w.int32(7)
    w.uvarint(0)  # flexible from v0: the response header's tags
    spec.response.write(w, body, version, spec.flexible(version))
    got, decoded = decode_response(ApiKey.DESCRIBE_CLUSTER, version, frame(w.getvalue())[4:])
    assert got == 7 and ops(decoded["cluster_authorized_operations"]).admin == ADMIN_OPERATIONS


# -- service mode: the start -----------------------------------------------------


def test_an_administrator_login_is_one_line_naming_the_two_ways_out() -> None:
    with pytest.raises(ClusterAdminError) as caught:
        check_service_login(LOGIN, ops(EVERY_CLUSTER_OPERATION), allow_cluster_admin=False)
    line = str(caught.value)
    assert "\n" not in line
    assert line.startswith(
        "the upstream login 'frontdoor' holds Alter, AlterConfigs, ClusterAction on the cluster"
    )
    assert "least-privilege" in line and "set authorizer.class.name at the edge" in line


@pytest.mark.parametrize(
    ("operations", "finding"),
    [
        (ops(0), "lacks Describe on the cluster"),
        (None, "DescribeCluster needs Kafka 2.8+"),
        (ops((1 << 8) | (1 << 9)), "holds ClusterAction on the cluster"),
    ],
    ids=["hidden", "no-describe-cluster", "cluster-action"],
)
def test_what_the_cluster_does_not_show_is_refused_too(
    operations: ClusterOperations | None, finding: str
) -> None:
    with pytest.raises(ClusterAdminError, match=finding):
        check_service_login(LOGIN, operations, allow_cluster_admin=False)


@pytest.mark.parametrize("bits", [DESCRIBE_ONLY, DESCRIBE_ONLY | (1 << 12) | (1 << 5) | (1 << 10)])
def test_a_least_privilege_login_starts_without_a_word(bits: int) -> None:
    assert check_service_login(LOGIN, ops(bits), allow_cluster_admin=False) is None


def test_the_override_starts_with_a_warning_each_time() -> None:
    warning = check_service_login(LOGIN, ops(EVERY_CLUSTER_OPERATION), allow_cluster_admin=True)
    assert warning is not None and warning.startswith("upstream.allow.cluster.admin=true: ")
    assert (
        "every edge user one" in warning and "holds Alter, AlterConfigs, ClusterAction" in warning
    )
    # Set without need: still said, so that it is not left on by mistake.
    needless = check_service_login(LOGIN, ops(DESCRIBE_ONLY), allow_cluster_admin=True)
    assert needless is not None and needless.endswith("the upstream login 'frontdoor' is not one")


@pytest.mark.parametrize("allow", [False, True])
def test_an_edge_authorizer_takes_the_check_over(allow: bool) -> None:
    """Each edge user is then authorized at the edge: nothing to refuse or warn of."""
    for operations in (ops(EVERY_CLUSTER_OPERATION), ops(0), None):
        assert (
            check_service_login(LOGIN, operations, allow_cluster_admin=allow, edge_authorizer=True)
            is None
        )


def test_the_edge_authorizer_is_one_of_kafkas_two() -> None:
    kafkas = {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
    }
    assert kafkas == KAFKA_AUTHORIZERS
    for name in KAFKA_AUTHORIZERS:
        assert edge_authorizer_enabled(name) and edge_authorizer_enabled(f" {name} ")
    for other in (None, "", "com.example.MyAuthorizer", "StandardAuthorizer"):
        assert not edge_authorizer_enabled(other)


@pytest.mark.parametrize(
    ("properties", "name"),
    [
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                'required username="frontdoor" password="fd-secret";',
            },
            "the upstream login 'frontdoor'",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                'required username="tok1" password="hmac" tokenauth=true;',
            },
            "the upstream login (a delegation token)",
        ),
        ({"security.protocol": "PLAINTEXT"}, "the upstream connection's principal"),
    ],
    ids=["user", "token", "plaintext"],
)
def test_the_login_as_messages_name_it(properties: dict[str, str], name: str) -> None:
    client = ClientConfig.from_properties({"bootstrap.servers": "k:9092", **properties})
    assert upstream_login_name(client) == name
    assert "secret" not in name and "hmac" not in name


# -- owner-token mode: each login ------------------------------------------------


def test_an_administrator_owner_is_refused_unless_listed() -> None:
    refusal = owner_refusal(ADMIN, ops(EVERY_CLUSTER_OPERATION), frozenset())
    assert refusal is not None and refusal.reason == "ClusterAdministrator"
    assert str(refusal) == (
        "the owner User:admin holds Alter, AlterConfigs, ClusterAction on the cluster "
        "and is not in upstream.owner.admins"
    )
    assert str(OwnerAdminRefused(refusal)) == str(refusal)
    assert owner_refusal(ADMIN, ops(EVERY_CLUSTER_OPERATION), frozenset({ADMIN})) is None
    other = frozenset({KafkaPrincipal.user("root")})
    assert owner_refusal(ADMIN, ops(EVERY_CLUSTER_OPERATION), other) is not None


def test_an_owner_whose_operations_are_hidden_is_refused() -> None:
    """No Describe on the cluster: its answer is 0, which could hide ClusterAction
    or AlterConfigs (neither implies Describe)."""
    alice = KafkaPrincipal.user("alice")
    refusal = owner_refusal(alice, ops(0), frozenset())
    assert refusal is not None and refusal.reason == "ClusterOperationsHidden"
    assert "lacks Describe on the cluster" in str(refusal)
    assert owner_refusal(alice, ops(0), frozenset({alice})) is None


def test_an_owner_with_describe_only_is_forwarded() -> None:
    alice = KafkaPrincipal.user("alice")
    assert owner_refusal(alice, ops(DESCRIBE_ONLY), frozenset()) is None
    assert owner_refusal(alice, ops(DESCRIBE_ONLY | (1 << 12)), frozenset()) is None
