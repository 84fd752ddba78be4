"""Kafka 3.x's ZooKeeper layout for ACLs (``AclAuthorizer``, ``kafka.zk.ZkData``).

One node per resource pattern holds all its entries as JSON:

- LITERAL: ``/kafka-acl/<Type>/<name>`` (``LiteralAclStore``), e.g.
  ``/kafka-acl/Topic/orders``, ``/kafka-acl/Cluster/kafka-cluster``, ``/kafka-acl/Topic/*``;
- PREFIXED: ``/kafka-acl-extended/prefixed/<Type>/<name>`` (``ExtendedAclStore``:
  the pattern's name in lower case; ZkData's comment says ``PREFIXED``, its code does not).

Each change also writes a sequential node that brokers watch, then re-read the node
it names: ``/kafka-acl-changes/acl_changes_<10 digits>`` holding ``TOPIC:orders``
for a LITERAL pattern (``LiteralAclChangeStore``), and
``/kafka-acl-extended-changes/acl_changes_<10 digits>`` holding
``{"version":1,"resourceType":"TOPIC","name":"ord","patternType":"PREFIXED"}``
otherwise (``ExtendedAclChangeStore``, ``ExtendedAclChangeEvent``). Both use the
enum constant names, not the display names of the paths and the ACL JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from typing import Final

from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._model import AccessControlEntry
from sasl_scram.authz._model import ResourcePattern

__all__ = [
    "ACL_CHANGES_PATH",
    "ACL_PATH",
    "CHANGE_PREFIX",
    "EXTENDED_ACL_CHANGES_PATH",
    "EXTENDED_ACL_PATH",
    "acl_node_path",
    "change_node",
    "change_node_name",
    "decode_acl_node",
    "decode_change",
    "encode_acl_node",
    "parse_acl_node_path",
]

ACL_PATH: Final = "/kafka-acl"
EXTENDED_ACL_PATH: Final = "/kafka-acl-extended"
ACL_CHANGES_PATH: Final = "/kafka-acl-changes"
EXTENDED_ACL_CHANGES_PATH: Final = "/kafka-acl-extended-changes"
#: ``ZkAclChangeStore.SequenceNumberPrefix``; ZooKeeper appends ten digits.
CHANGE_PREFIX: Final = "acl_changes_"
_VERSION: Final = 1
_JSON_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _json_string(text: str) -> str:
    """A JSON string as Jackson writes it: ``"`` and ``\\`` escaped, the five short
    escapes, other control characters as ``\\u00XX`` (upper-case hex), the rest as is."""
    out = ['"']
    for char in text:
        if char in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[char])
        elif char < " ":
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise AuthzError(
            "an ACL string holds a lone surrogate, which UTF-8 cannot carry: fix the name"
        ) from None


def _store_root(pattern: ResourcePattern) -> str:
    if pattern.pattern_type is PatternType.LITERAL:
        return ACL_PATH
    if pattern.pattern_type is PatternType.PREFIXED:
        return f"{EXTENDED_ACL_PATH}/prefixed"
    raise AuthzError(
        f"no ZooKeeper node holds {pattern.pattern_type.name} patterns: give LITERAL or PREFIXED"
    )


def _refused_in_znode_name(char: str) -> bool:
    """``PathUtils.validatePath``'s refused characters, for Java's UTF-16 units: a
    character beyond U+FFFF is a surrogate pair there, which it refuses too."""
    code = ord(char)
    return code <= 0x1F or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xF8FF or code >= 0xFFF0


def acl_node_path(pattern: ResourcePattern) -> str:
    """``ResourceZNode.path``: where a pattern's ACLs live."""
    if pattern.resource_type.is_unknown:
        raise AuthzError("no ZooKeeper node holds UNKNOWN resources: give a concrete type")
    if "/" in pattern.name:
        raise AuthzError(
            f"resource name {pattern.name!r} holds '/', which AclAuthorizer refuses "
            "(it would nest ZooKeeper nodes): rename the resource"
        )
    if pattern.name in ("", ".", "..") or any(map(_refused_in_znode_name, pattern.name)):
        # ZooKeeper's PathUtils.validatePath refuses these node names; AclAuthorizer
        # passes them on and fails there, with an IllegalArgumentException.
        raise AuthzError(
            f"resource name {pattern.name!r} names no ZooKeeper node (ZooKeeper refuses "
            "'.', '..', empty names, control characters, U+D800 to U+F8FF, U+FFF0 and "
            "above): rename the resource"
        )
    return f"{_store_root(pattern)}/{pattern.resource_type.display_name}/{pattern.name}"


def parse_acl_node_path(path: str) -> ResourcePattern:
    """The pattern an ACL node's path names (``AclAuthorizer.loadAllAcls``)."""
    for root, pattern_type in (
        (f"{ACL_PATH}/", PatternType.LITERAL),
        (f"{EXTENDED_ACL_PATH}/prefixed/", PatternType.PREFIXED),
    ):
        if path.startswith(root):
            type_name, slash, name = path[len(root) :].partition("/")
            resource_type = ResourceType.from_display_name(type_name)
            if slash and name and "/" not in name and not resource_type.is_unknown:
                return ResourcePattern(resource_type, name, pattern_type)
    raise AuthzError(
        f"{path!r} is not an ACL node: expected /kafka-acl/<Type>/<name> or "
        "/kafka-acl-extended/prefixed/<Type>/<name>, <Type> such as Topic or Group"
    )


def encode_acl_node(entries: Iterable[AccessControlEntry], *, before_3_8: bool = False) -> bytes:
    """``ResourceZNode.encode``: the node data for a pattern's entries (each once).

    Kafka 3.8 and 3.9 build the JSON from Java ``HashMap``s (``AclEntry.toJsonCompatibleMap``,
    ``toMap``), whose order puts ``acls`` before ``version`` and ``host`` before
    ``operation``; up to 3.7 the Scala maps kept the order they were written in
    (``before_3_8=True``): ``version``, ``acls``; ``principal``, ``permissionType``,
    ``operation``, ``host``. Readers do not care; the bytes differ.
    """
    items = []
    for entry in dict.fromkeys(entries):
        if entry.is_unknown:
            raise AuthzError(f"cannot store an ACL with unknown elements: {entry}")
        fields = {
            "principal": _json_string(entry.principal),
            "permissionType": _json_string(entry.permission_type.display_name),
            "operation": _json_string(entry.operation.display_name),
            "host": _json_string(entry.host),
        }
        order = ("principal", "permissionType", "operation", "host")
        if not before_3_8:
            order = ("principal", "permissionType", "host", "operation")
        items.append("{" + ",".join(f'"{key}":{fields[key]}' for key in order) + "}")
    acls = "[" + ",".join(items) + "]"
    text = f'{{"version":1,"acls":{acls}}}' if before_3_8 else f'{{"acls":{acls},"version":1}}'
    return _utf8(text)


def _field(item: Any, key: str, where: str) -> str:
    value = item.get(key) if isinstance(item, dict) else None
    if not isinstance(value, str):
        raise AuthzError(f"{where}: {key!r} is missing or not a string: write it as Kafka does")
    return value


def _entry(item: Any) -> AccessControlEntry:
    """``AclEntry.fromBytes``'s reading of one entry."""
    principal = _field(item, "principal", "ACL entry")
    if ":" not in principal:
        raise AuthzError(
            f"ACL entry principal {principal!r} is not Type:Name: write e.g. User:alice"
        )
    permission = AclPermissionType.from_display_name(_field(item, "permissionType", "ACL entry"))
    operation = AclOperation.from_display_name(_field(item, "operation", "ACL entry"))
    if permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise AuthzError(
            f"ACL entry permissionType {item['permissionType']!r}: write Allow or Deny"
        )
    if operation in (AclOperation.ANY, AclOperation.UNKNOWN):
        raise AuthzError(
            f"ACL entry operation {item['operation']!r}: write one such as Read, Write or All"
        )
    return AccessControlEntry(principal, _field(item, "host", "ACL entry"), operation, permission)


def decode_acl_node(data: bytes) -> tuple[AccessControlEntry, ...]:
    """A node's entries (``AclEntry.fromBytes``), each once, in the node's order.

    Empty data means no ACLs. Kafka reads a node that is not JSON as no ACLs and
    keeps entries whose operation or permission it does not know; both are
    refused here, so a damaged node is found, not read as an open resource.
    """
    if not data:
        return ()
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise AuthzError('ACL node data is not JSON: expected {"version":1,"acls":[...]}') from None
    if not isinstance(document, dict) or document.get("version") != _VERSION:
        raise AuthzError('ACL node data must have "version":1 (AclEntry.CURRENT_VERSION)')
    acls = document.get("acls")
    if not isinstance(acls, list):
        raise AuthzError('ACL node data has no "acls" list: expected {"version":1,"acls":[...]}')
    return tuple(dict.fromkeys(_entry(item) for item in acls))


def change_node_name(sequence: int) -> str:
    """The name ZooKeeper gives the ``sequence``-th change node: ``acl_changes_0000000042``."""
    return f"{CHANGE_PREFIX}{sequence:010d}"


def change_node(pattern: ResourcePattern) -> tuple[str, bytes]:
    """``ZkAclChangeStore.createChangeNode``: the path to create (sequential: ZooKeeper
    appends the number) and the data, for a change to ``pattern``'s ACLs."""
    if pattern.resource_type.is_unknown:
        raise AuthzError(
            "cannot announce a change to an UNKNOWN resource type: give a concrete type"
        )
    if pattern.pattern_type is PatternType.LITERAL:
        text = f"{pattern.resource_type.name}:{pattern.name}"
        return f"{ACL_CHANGES_PATH}/{CHANGE_PREFIX}", _utf8(text)
    _store_root(pattern)
    text = (
        f'{{"version":1,"resourceType":{_json_string(pattern.resource_type.name)},'
        f'"name":{_json_string(pattern.name)},'
        f'"patternType":{_json_string(pattern.pattern_type.name)}}}'
    )
    return f"{EXTENDED_ACL_CHANGES_PATH}/{CHANGE_PREFIX}", _utf8(text)


def decode_change(path: str, data: bytes) -> ResourcePattern:
    """The pattern a change node names (``LiteralAclChangeStore.decode``,
    ``ExtendedAclChangeStore.decode``); ``path`` is the node's path."""
    text = data.decode("utf-8", "replace")
    if path.startswith(f"{EXTENDED_ACL_CHANGES_PATH}/"):
        return _decode_extended(text)
    if not path.startswith(f"{ACL_CHANGES_PATH}/"):
        raise AuthzError(
            f"{path!r} is not an ACL change node: expected it under {ACL_CHANGES_PATH} "
            f"or {EXTENDED_ACL_CHANGES_PATH}"
        )
    type_name, colon, name = text.partition(":")
    resource_type = ResourceType.from_string(type_name)
    if not colon or resource_type.is_unknown or resource_type is ResourceType.ANY:
        raise AuthzError(
            f"expected a string in format ResourceType:ResourceName but got {text!r}: "
            "write e.g. TOPIC:orders"
        )
    return ResourcePattern(resource_type, name, PatternType.LITERAL)


def _decode_extended(text: str) -> ResourcePattern:
    """``ExtendedAclChangeEvent`` as Jackson binds it: exactly its four properties."""
    try:
        event = json.loads(text)
    except ValueError:
        event = None
    keys = {"version", "resourceType", "name", "patternType"}
    if not isinstance(event, dict) or set(event) != keys:
        raise AuthzError(
            "ACL change event is not "
            '{"version":1,"resourceType":"TOPIC","name":"...","patternType":"PREFIXED"}: '
            "write those four properties"
        )
    version = event["version"]
    if not isinstance(version, int) or version > _VERSION:
        raise AuthzError(
            f"Acl change event received for unsupported version: {version}; write version 1"
        )
    resource_type = ResourceType.from_string(str(event["resourceType"]))
    pattern_type = PatternType.from_string(str(event["patternType"]))
    name = event["name"]
    if resource_type in (ResourceType.UNKNOWN, ResourceType.ANY) or not isinstance(name, str):
        raise AuthzError(
            f"ACL change event names no resource ({event['resourceType']!r}, {name!r}): "
            "write a resource type such as TOPIC and a name"
        )
    if not pattern_type.is_specific:
        raise AuthzError(
            f"ACL change event patternType {event['patternType']!r}: write PREFIXED "
            "(Kafka reads the constant name, in capitals)"
        )
    return ResourcePattern(resource_type, name, pattern_type)
