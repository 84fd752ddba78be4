"""ACLs as Kafka's tools print them, for logs and command output.

Kafka's ``toString``s are on the model (``str(binding)``); these put them together
as ``kafka-acls`` does (``kafka.admin.AclCommand``). Names are copied verbatim:
escape a line (``sasl_scram.audit.escape``) before it reaches a log a client can
write into.
"""

from __future__ import annotations

from collections.abc import Iterable

from sasl_scram.authz._model import AccessControlEntry
from sasl_scram.authz._model import AclBinding
from sasl_scram.authz._model import ResourcePattern

__all__ = ["acl_line", "acls_listing"]


def acl_line(binding: AclBinding) -> str:
    """One ACL on one line: ``(principal=User:alice, host=*, operation=READ,
    permissionType=ALLOW) on ResourcePattern(resourceType=TOPIC, name=t,
    patternType=LITERAL)`` (the entry's and the pattern's ``toString``)."""
    return f"{binding.entry} on {binding.pattern}"


def acls_listing(
    pattern: ResourcePattern,
    entries: Iterable[AccessControlEntry],
    *,
    heading: str = "Current ACLs for resource",
) -> str:
    """``kafka-acls --list``'s block for one pattern, without the final newline
    ``println`` adds: ``Current ACLs for resource `ResourcePattern(...)`: \\n \\t(...)
    \\n`` (``AclCommand``; ``heading`` ``Adding ACLs for resource`` when adding)."""
    listed = "\n".join(f"\t{entry}" for entry in entries)
    return f"{heading} `{pattern}`: \n {listed} \n"
