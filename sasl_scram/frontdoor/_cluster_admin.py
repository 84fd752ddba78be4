"""Whether the principal the cluster sees behind the front door is a cluster
administrator, asked of the cluster itself (KIP-430).

The front door forwards an edge user's requests as someone the cluster knows:
the ``upstream.`` login (``upstream.identity=service``) or the user's own
principal through a token it owns (``owner-token``). Whatever that principal
may do to the cluster (ACLs, broker configs, quotas, leaders, replicas), so may
the edge user. DescribeCluster with ``include_cluster_authorized_operations``
answers, for the session that sends it, a bit field of the ``AclOperation``
codes it holds on the Cluster resource: bit ``1 << code`` for each operation of
``AclEntry.supportedOperations(CLUSTER)`` the authorizer allows, every one of
them on a broker without an authorizer (``AuthHelper.authorizedOperations``).
The broker fills it only for a session allowed DESCRIBE on the cluster and
answers 0 otherwise (``AuthHelper.computeDescribeClusterResponse``): a 0 says
nothing about ALTER_CONFIGS or CLUSTER_ACTION, which imply no DESCRIBE, so the
checks here refuse what they cannot see.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import ResourceType
from sasl_scram.authz import supported_operations
from sasl_scram.config import ClientConfig
from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor._errors import ClusterAdminError
from sasl_scram.frontdoor._errors import FrontDoorError
from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import ApiKey

__all__ = [
    "ADMIN_OPERATIONS",
    "CLUSTER_OPERATIONS",
    "KAFKA_AUTHORIZERS",
    "NOT_COMPUTED",
    "ClusterOperations",
    "OwnerAdminRefused",
    "OwnerRefusal",
    "check_service_login",
    "describe_cluster_request",
    "describe_cluster_version",
    "edge_authorizer_enabled",
    "owner_refusal",
    "upstream_login_name",
]

#: ``cluster_authorized_operations`` when the broker did not compute it: the
#: schema's default, Java's ``Integer.MIN_VALUE`` (DescribeClusterResponse.json).
NOT_COMPUTED = -(2**31)
#: Kafka's two authorizers (``authorizer.class.name``): KRaft's and ZooKeeper mode's.
KAFKA_AUTHORIZERS = frozenset(
    {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
    }
)


#: The operations Kafka authorizes on the Cluster resource
#: (``AclEntry.supportedOperations(CLUSTER)``), Kafka's own ``AclOperation``s.
CLUSTER_OPERATIONS: Final = tuple(
    sorted(supported_operations(ResourceType.CLUSTER), key=lambda op: op.code)
)


#: What makes a principal a cluster administrator. ALTER: CreateAcls and
#: DeleteAcls, ElectLeaders, partition reassignments, replica log dirs, features,
#: SCRAM credentials. ALTER_CONFIGS: broker configs (IncrementalAlterConfigs on
#: BROKER and BROKER_LOGGER) and AlterClientQuotas. CLUSTER_ACTION: what brokers
#: ask of each other, a follower's Fetch of any partition among them
#: (``KafkaApis``, ``ControllerApis``). A super user holds all three, and so does
#: every principal of a broker without an authorizer.
ADMIN_OPERATIONS = (AclOperation.ALTER, AclOperation.ALTER_CONFIGS, AclOperation.CLUSTER_ACTION)


@dataclass(frozen=True)
class ClusterOperations:
    """The operations one session holds on the Cluster, as the cluster said.

    Attributes:
        held: the operations allowed.
    """

    held: frozenset[AclOperation]

    @classmethod
    def from_bits(cls, bits: int) -> ClusterOperations:
        """DescribeCluster's ``cluster_authorized_operations``.

        Raises:
            ValueError: the broker did not compute them (``NOT_COMPUTED``).
        """
        if bits == NOT_COMPUTED:
            raise ValueError("the cluster did not compute its authorized operations")
        return cls(frozenset(op for op in CLUSTER_OPERATIONS if bits >> op.code & 1))

    @property
    def visible(self) -> bool:
        """Whether the answer says anything: 0 unless DESCRIBE is held."""
        return AclOperation.DESCRIBE in self.held

    @property
    def admin(self) -> tuple[AclOperation, ...]:
        """The administrative operations held (:data:`ADMIN_OPERATIONS`)."""
        return tuple(op for op in ADMIN_OPERATIONS if op in self.held)

    @property
    def is_admin(self) -> bool:
        """Whether these make a cluster administrator, or cannot tell (fail closed)."""
        return bool(self.admin) or not self.visible


def names(operations: Iterable[AclOperation]) -> str:
    """``Alter, AlterConfigs, ClusterAction``."""
    return ", ".join(op.display_name for op in operations)


def describe_cluster_version(api_keys: Iterable[Mapping[str, int]]) -> int | None:
    """The DescribeCluster version to send, from the cluster's ApiVersions
    entries; ``None``: the cluster has none (Kafka before 2.8)."""
    ours = ADDRESS_API_SPECS[ApiKey.DESCRIBE_CLUSTER].max_version
    for entry in api_keys:
        if entry["api_key"] == ApiKey.DESCRIBE_CLUSTER:
            return min(entry["max_version"], ours)
    return None


def describe_cluster_request() -> dict[str, Any]:
    """DescribeCluster asking for the sender's cluster operations, of the brokers'
    endpoint (KIP-919's ``endpoint_type`` 1: a controller's needs ALTER)."""
    return {
        "include_cluster_authorized_operations": True,
        "endpoint_type": 1,
        "include_fenced_brokers": False,
    }


def edge_authorizer_enabled(class_name: str | None) -> bool:
    """Whether ``authorizer.class.name`` names one of Kafka's authorizers, so the
    edge authorizes each edge user itself."""
    return (class_name or "").strip() in KAFKA_AUTHORIZERS


def upstream_login_name(client: ClientConfig) -> str:
    """The ``upstream.`` login as the messages name it (never its secret)."""
    if not client.uses_sasl:
        return "the upstream connection's principal"
    if client.token_auth:
        return "the upstream login (a delegation token)"
    return f"the upstream login '{client.username}'"


def _finding(login: str, operations: ClusterOperations | None) -> str:
    if operations is None:
        return f"the cluster cannot say what {login} may do (DescribeCluster needs Kafka 2.8+)"
    if not operations.visible:
        return (
            f"the cluster does not show what {login} may do on it: it lacks Describe on the "
            "cluster (kafka-acls.sh --add --allow-principal ... --operation Describe --cluster)"
        )
    return (
        f"{login} holds {names(operations.admin)} on the cluster (an administrator or super "
        "user; on a cluster without an authorizer every login is one)"
    )


def check_service_login(
    login: str,
    operations: ClusterOperations | None,
    *,
    allow_cluster_admin: bool,
    edge_authorizer: bool = False,
) -> str | None:
    """The start-up decision of ``upstream.identity=service``: every edge user acts
    at the cluster as the ``upstream.`` login, so that login must not be a cluster
    administrator, unless the edge authorizes each edge user itself.

    Args:
        login: the login as messages name it (:func:`upstream_login_name`).
        operations: what the cluster answered the login (``None``: the cluster
            has no DescribeCluster).
        allow_cluster_admin: ``upstream.allow.cluster.admin``.
        edge_authorizer: ``authorizer.class.name`` at the edge names one of
            Kafka's authorizers (:func:`edge_authorizer_enabled`).

    Returns:
        The WARNING to log at this start (``upstream.allow.cluster.admin=true``),
        or ``None``.

    Raises:
        ClusterAdminError: one line naming the two ways out.
    """
    if edge_authorizer:
        return None
    admin = operations is None or operations.is_admin
    if allow_cluster_admin:
        finding = _finding(login, operations) if admin else f"{login} is not one"
        return (
            "upstream.allow.cluster.admin=true: serve starts even when its upstream login is "
            f"a cluster administrator, which makes every edge user one; {finding}"
        )
    if not admin:
        return None
    raise ClusterAdminError(
        f"{_finding(login, operations)}, and every edge user would act at the cluster as it: "
        "log in upstream with a least-privilege user (the ACLs of the traffic it carries and "
        "Describe on the cluster; docs/front-door.md), or set authorizer.class.name at the "
        "edge so that serve authorizes each edge user"
    )


@dataclass(frozen=True)
class OwnerRefusal:
    """Why an owner token's owner is refused at login (``owner-token`` mode).

    Attributes:
        owner: the owner principal at the cluster.
        operations: what the cluster answered that owner's token.
    """

    owner: KafkaPrincipal
    operations: ClusterOperations

    @property
    def reason(self) -> str:
        """One word for the audit line: ``ClusterAdministrator`` or
        ``ClusterOperationsHidden`` (no Describe on the cluster)."""
        return "ClusterAdministrator" if self.operations.visible else "ClusterOperationsHidden"

    def __str__(self) -> str:
        if self.operations.visible:
            what = f"holds {names(self.operations.admin)} on the cluster"
        else:
            what = "lacks Describe on the cluster, which hides its cluster operations"
        return f"the owner {self.owner} {what} and is not in upstream.owner.admins"


def owner_refusal(
    owner: KafkaPrincipal, operations: ClusterOperations, admins: Collection[KafkaPrincipal]
) -> OwnerRefusal | None:
    """Whether a login whose owner principal holds ``operations`` is refused:
    a cluster administrator (or one whose operations the cluster hides) is,
    unless ``upstream.owner.admins`` lists it."""
    if owner in admins or not operations.is_admin:
        return None
    return OwnerRefusal(owner, operations)


class OwnerAdminRefused(FrontDoorError):
    """An edge user's login is refused: its owner principal is a cluster
    administrator that ``upstream.owner.admins`` does not list.

    Attributes:
        refusal: who, and what the cluster said it holds.
    """

    def __init__(self, refusal: OwnerRefusal) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal
