"""Authorization at the edge, decided as Kafka's ``StandardAuthorizer`` decides it.

Sans-IO: no network, event loop, clock or thread. The ACL model (Kafka's
``ResourcePattern``, ``AccessControlEntry``, ``AclBinding`` and their filters),
an immutable :class:`Authorizer` built from bindings, Kafka's CreateAcls and
DeleteAcls validity rules, ZooKeeper's ACL node formats (3.x ``AclAuthorizer``)
and the texts Kafka prints. docs/authorization.md describes the rules and where
Kafka 3.9 and 4.x differ.
"""

from __future__ import annotations

from sasl_scram.authz._authorizer import Authorizer
from sasl_scram.authz._authorizer import ResourceTypeDecision
from sasl_scram.authz._authorizer import parse_super_users
from sasl_scram.authz._decision import Action
from sasl_scram.authz._decision import AuditLevel
from sasl_scram.authz._decision import Decision
from sasl_scram.authz._decision import RuleKind
from sasl_scram.authz._decision import audit_level
from sasl_scram.authz._decision import audit_message
from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._hosts import java_host_address
from sasl_scram.authz._model import CLUSTER_NAME
from sasl_scram.authz._model import WILDCARD_HOST
from sasl_scram.authz._model import WILDCARD_PRINCIPAL
from sasl_scram.authz._model import WILDCARD_RESOURCE
from sasl_scram.authz._model import AccessControlEntry
from sasl_scram.authz._model import AccessControlEntryFilter
from sasl_scram.authz._model import AclBinding
from sasl_scram.authz._model import AclBindingFilter
from sasl_scram.authz._model import ResourcePattern
from sasl_scram.authz._model import ResourcePatternFilter
from sasl_scram.authz._requests import AclCreation
from sasl_scram.authz._requests import AclFilterFields
from sasl_scram.authz._requests import CreationResult
from sasl_scram.authz._requests import FilterResult
from sasl_scram.authz._requests import MalformedAclRequest
from sasl_scram.authz._requests import check_create_acls
from sasl_scram.authz._requests import check_delete_filters
from sasl_scram.authz._requests import check_describe_filter
from sasl_scram.authz._tables import IMPLIES_DESCRIBE
from sasl_scram.authz._tables import IMPLIES_DESCRIBE_CONFIGS
from sasl_scram.authz._tables import authorization_error
from sasl_scram.authz._tables import supported_operations
from sasl_scram.authz._text import acl_line
from sasl_scram.authz._text import acls_listing
from sasl_scram.authz._zookeeper import ACL_CHANGES_PATH
from sasl_scram.authz._zookeeper import ACL_PATH
from sasl_scram.authz._zookeeper import CHANGE_PREFIX
from sasl_scram.authz._zookeeper import EXTENDED_ACL_CHANGES_PATH
from sasl_scram.authz._zookeeper import EXTENDED_ACL_PATH
from sasl_scram.authz._zookeeper import acl_node_path
from sasl_scram.authz._zookeeper import change_node
from sasl_scram.authz._zookeeper import change_node_name
from sasl_scram.authz._zookeeper import decode_acl_node
from sasl_scram.authz._zookeeper import decode_change
from sasl_scram.authz._zookeeper import encode_acl_node
from sasl_scram.authz._zookeeper import parse_acl_node_path

__all__ = [
    "ACL_CHANGES_PATH",
    "ACL_PATH",
    "CHANGE_PREFIX",
    "CLUSTER_NAME",
    "EXTENDED_ACL_CHANGES_PATH",
    "EXTENDED_ACL_PATH",
    "IMPLIES_DESCRIBE",
    "IMPLIES_DESCRIBE_CONFIGS",
    "WILDCARD_HOST",
    "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "AclCreation",
    "AclFilterFields",
    "AclOperation",
    "AclPermissionType",
    "Action",
    "AuditLevel",
    "Authorizer",
    "AuthzError",
    "CreationResult",
    "Decision",
    "FilterResult",
    "MalformedAclRequest",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "ResourceTypeDecision",
    "RuleKind",
    "acl_line",
    "acl_node_path",
    "acls_listing",
    "audit_level",
    "audit_message",
    "authorization_error",
    "change_node",
    "change_node_name",
    "check_create_acls",
    "check_delete_filters",
    "check_describe_filter",
    "decode_acl_node",
    "decode_change",
    "encode_acl_node",
    "java_host_address",
    "parse_acl_node_path",
    "parse_super_users",
    "supported_operations",
]
