"""``kafka-scram acls``: kafka-acls.sh for the edge's ACLs, offline, on their store.

Options, checks and output follow Kafka 3.9's ``kafka.admin.AclCommand`` with its
own authorizer (``--authorizer-properties zookeeper.connect=...``): the same
resource, principal, host and operation options, the same ``--producer`` and
``--consumer`` shorthands, the same texts (``Adding ACLs for resource ...``,
``Current ACLs for resource ...``, the ``--remove`` question). The store is given
as the other commands give it: ``--store sqlite:PATH|zookeeper:HOSTS``,
``--zookeeper HOSTS``, or kafka-acls' ``--authorizer-properties
zookeeper.connect=HOSTS``.

Deliberate differences: errors follow our one format on stderr with exit 1 (2
for a usage error), where Kafka prints them (and a stack trace) on stdout and,
for a failed ACL, exits 0; resources and entries are listed in Kafka's
``describeAcls`` order, where Kafka's tool lists them in the order of its hash
maps; ``--bootstrap-server`` is refused (this command edits the store; kafka-acls
edits a cluster).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from sasl_scram.authz import CLUSTER_NAME
from sasl_scram.authz import WILDCARD_HOST
from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AccessControlEntryFilter
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourcePatternFilter
from sasl_scram.authz import ResourceType
from sasl_scram.authz import acls_listing
from sasl_scram.authz import supported_operations
from sasl_scram.cli._acl_store import open_acl_store_for
from sasl_scram.cli._main import CommandError
from sasl_scram.cli._main import CommandUsageError
from sasl_scram.cli._texts import add_core_command
from sasl_scram.cli._zookeeper import add_zookeeper_options
from sasl_scram.kafka import ErrorCode

if TYPE_CHECKING:
    from sasl_scram.store import AclStore

__all__ = ["register"]

_CLUSTER_FILTER = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
_PATTERN_TYPES = ("any", "match", "literal", "prefixed")
_NO_RESOURCE = (
    "You must provide at least one resource: --topic <topic> or --cluster or --group <group> "
    "or --delegation-token <Delegation Token ID>"
)
# AclCommand.checkArgs: (option used, options it cannot be used with).
_INVALID_WITH = (
    (
        "list",
        ("producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"),
    ),
    ("producer", ("operation", "deny-principal", "deny-host")),
    ("consumer", ("operation", "deny-principal", "deny-host")),
)

Filters = dict[ResourcePatternFilter, list[AccessControlEntry]]


def _given(args: argparse.Namespace, option: str) -> bool:
    value = getattr(args, option.replace("-", "_"))
    return bool(value) if not isinstance(value, list) else len(value) > 0


def _check_args(args: argparse.Namespace) -> None:
    """``AclCommandOptions.checkArgs``, with Kafka's words."""
    if sum(bool(getattr(args, a)) for a in ("add", "remove", "list")) != 1:
        raise CommandUsageError(
            "Command must include exactly one action: --list, --add, --remove. "
        )
    for used, invalid in _INVALID_WITH:
        for other in invalid:
            if _given(args, used) and _given(args, other):
                raise CommandUsageError(f'Option "[{used}]" can\'t be used with option "[{other}]"')
    if args.principal and not args.list:
        raise CommandUsageError("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        raise CommandUsageError("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        raise CommandUsageError("The --idempotent option is only available if --producer is set")
    if args.consumer and (
        not args.topic
        or not args.group
        or (not args.producer and (args.cluster or args.transactional_id))
    ):
        raise CommandUsageError(
            "With --consumer you must specify a --topic and a --group and no --cluster or "
            "--transactional-id option should be specified."
        )


def _pattern_type(text: str) -> PatternType:
    """``PatternTypeConverter``: an enum constant in any case, never UNKNOWN."""
    found = PatternType.__members__.get(text.upper())
    if found is None or found.is_unknown:
        raise argparse.ArgumentTypeError(
            f"Unknown resource-pattern-type: {text} (give {', '.join(_PATTERN_TYPES)})"
        )
    return found


def _resource_filters(
    args: argparse.Namespace, *, required: bool = True
) -> list[ResourcePatternFilter]:
    """``AclCommand.getResourceFilter``: in option order, each once."""
    ptype: PatternType = args.resource_pattern_type
    found: list[ResourcePatternFilter] = []
    found += (ResourcePatternFilter(ResourceType.TOPIC, t.strip(), ptype) for t in args.topic)
    if ptype is PatternType.LITERAL and (args.cluster or args.idempotent):
        found.append(_CLUSTER_FILTER)
    found += (ResourcePatternFilter(ResourceType.GROUP, g.strip(), ptype) for g in args.group)
    # Kafka trims every name but a transactional id's.
    found += (
        ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, ptype)
        for t in args.transactional_id
    )
    found += (
        ResourcePatternFilter(ResourceType.DELEGATION_TOKEN, t.strip(), ptype)
        for t in args.delegation_token
    )
    found += (
        ResourcePatternFilter(ResourceType.USER, u.strip(), ptype) for u in args.user_principal
    )
    if required and not found:
        raise CommandUsageError(_NO_RESOURCE)
    return list(dict.fromkeys(found))


def _principal(text: str) -> str:
    """``SecurityUtils.parseKafkaPrincipal`` then ``KafkaPrincipal.toString``."""
    value = text.strip()
    if ":" not in value:
        raise CommandUsageError(
            f"expected a string in format principalType:principalName but got {value} "
            "(e.g. User:alice)"
        )
    return value


def _entries(
    args: argparse.Namespace, operations: Sequence[AclOperation]
) -> list[AccessControlEntry]:
    """``AclCommand.getAcl``: each principal, operation and host, allowed then denied;
    a principal's hosts default to ``*``."""
    found: list[AccessControlEntry] = []
    for principals, hosts, permission in (
        (args.allow_principal, args.allow_host, AclPermissionType.ALLOW),
        (args.deny_principal, args.deny_host, AclPermissionType.DENY),
    ):
        names = list(dict.fromkeys(_principal(p) for p in principals))
        where = list(dict.fromkeys(h.strip() for h in hosts)) or [WILDCARD_HOST]
        found += (
            AccessControlEntry(p, host, op, permission)
            for p in names
            for op in operations
            for host in where
        )
    return list(dict.fromkeys(found))


def _operations(args: argparse.Namespace) -> list[AclOperation]:
    """``--operation`` as ``SecurityUtils.operation`` reads it (``Read``, ``read``,
    ``IdempotentWrite``); All when none is given."""
    names = args.operation or [AclOperation.ALL.display_name]
    return list(dict.fromkeys(AclOperation.from_display_name(n.strip()) for n in names))


def _filter_entries(args: argparse.Namespace) -> Filters:
    """``AclCommand.getResourceFilterToAcls``: the command's ACLs, or the ones
    ``--producer`` and ``--consumer`` stand for, per resource; then each operation
    checked against what its resource type supports."""
    filters = _resource_filters(args)
    found: Filters = {}
    if not args.producer and not args.consumer:
        entries = _entries(args, _operations(args))
        found = {f: list(entries) for f in filters}
    if args.producer:
        found.update(_producer(args, filters))
    if args.consumer:
        for f, entries in _consumer(args, filters).items():
            found[f] = list(dict.fromkeys([*entries, *found.get(f, [])]))
    for f, entries in found.items():
        _check_operations(f.resource_type, entries)
    return found


def _producer(args: argparse.Namespace, filters: list[ResourcePatternFilter]) -> Filters:
    topic = _entries(args, [AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE])
    transactional = _entries(args, [AclOperation.WRITE, AclOperation.DESCRIBE])
    found: Filters = {}
    for f in filters:
        if f.resource_type is ResourceType.TOPIC:
            found[f] = topic
        elif f.resource_type is ResourceType.TRANSACTIONAL_ID:
            found[f] = transactional
    if args.idempotent:
        found[_CLUSTER_FILTER] = _entries(args, [AclOperation.IDEMPOTENT_WRITE])
    return found


def _consumer(args: argparse.Namespace, filters: list[ResourcePatternFilter]) -> Filters:
    found: Filters = {}
    for f in filters:
        if f.resource_type is ResourceType.TOPIC:
            found[f] = _entries(args, [AclOperation.READ, AclOperation.DESCRIBE])
        elif f.resource_type is ResourceType.GROUP:
            found[f] = _entries(args, [AclOperation.READ])
    return found


def _check_operations(resource_type: ResourceType, entries: Iterable[AccessControlEntry]) -> None:
    """``AclCommand.validateOperation`` (4.x's supported operations: groups take their
    configs operations too, KIP-848)."""
    valid = [*supported_operations(resource_type), AclOperation.ALL]
    if any(e.operation not in valid for e in entries):
        names = ", ".join(op.display_name for op in valid)
        raise CommandUsageError(
            f"ResourceType {resource_type.name} only supports operations {names}"
        )


# -- the actions ------------------------------------------------------------------------


def _to_add(args: argparse.Namespace) -> Filters:
    """``AclCommand.getResourceToAcls``' checks, before anything is opened."""
    if not args.resource_pattern_type.is_specific:
        raise CommandUsageError(
            f"A '--resource-pattern-type' value of '{args.resource_pattern_type.name}' "
            "is not valid when adding acls."
        )
    to_add = _filter_entries(args)
    if any(not entries for entries in to_add.values()):
        raise CommandUsageError(
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."
        )
    return to_add


def _add(store: AclStore, to_add: Filters, stdout: TextIO) -> list[str]:
    """``AclCommand.addAcls``: each resource's block, then its ACLs created."""
    failures: list[str] = []
    for f, entries in to_add.items():
        pattern = ResourcePattern(f.resource_type, f.name or "", f.pattern_type)
        print(acls_listing(pattern, entries, heading="Adding ACLs for resource"), file=stdout)
        results = store.create_acls([AclBinding(pattern, e) for e in entries])
        failures += (
            f"Error while adding ACLs: {r.message or r.error.default_message}"
            for r in results
            if r.error != ErrorCode.NONE
        )
    return failures


def _remove(
    store: AclStore, to_remove: Filters, force: bool, stdin: TextIO, stdout: TextIO
) -> list[str]:
    """``AclCommand.removeAcls``: per resource filter, asked unless ``--force``."""
    failures: list[str] = []
    for f, entries in to_remove.items():
        if entries:
            listed = "\n".join(f"\t{e}" for e in entries)
            question = (
                f"Are you sure you want to remove ACLs: \n {listed} \n "
                f"from resource filter `{f}`? (y/n)"
            )
            filters = [AclBindingFilter(f, e.to_filter()) for e in entries]
        else:
            question = f"Are you sure you want to delete all ACLs for resource filter `{f}`? (y/n)"
            filters = [AclBindingFilter(f, AccessControlEntryFilter.ANY)]
        if not force and not _confirmed(question, stdin, stdout):
            continue
        for result in store.delete_acls(filters):
            problems = [(result.error, result.message)] if result.error != ErrorCode.NONE else []
            problems += ((m.error, m.message) for m in result.matches if m.error != ErrorCode.NONE)
            failures += (
                f"Error while removing ACLs: {message or error.default_message}"
                for error, message in problems
            )
    return failures


def _confirmed(question: str, stdin: TextIO, stdout: TextIO) -> bool:
    """``AclCommand.confirmAction``: the question, then a line that is ``y`` or ``Y``."""
    print(question, file=stdout, flush=True)
    return stdin.readline().rstrip("\r\n").lower() == "y"


def _list(store: AclStore, args: argparse.Namespace, stdout: TextIO) -> None:
    """``AclCommand.listAcls``: every resource's ACLs, or those of the resources
    given; with ``--principal``, each principal's, under its own heading."""
    filters = _resource_filters(args, required=False)
    if filters:
        found = [
            store.describe_acls(AclBindingFilter(f, AccessControlEntryFilter.ANY)) for f in filters
        ]
        bindings = list(dict.fromkeys(b for group in found for b in group))
    else:
        bindings = list(store.describe_acls())
    if not args.principal:
        _print_resources(bindings, stdout)
        return
    for principal in dict.fromkeys(_principal(p) for p in args.principal):
        print(f"ACLs for principal `{principal}`", file=stdout)
        _print_resources([b for b in bindings if b.entry.principal == principal], stdout)


def _print_resources(bindings: Iterable[AclBinding], stdout: TextIO) -> None:
    by_pattern: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in bindings:
        by_pattern.setdefault(binding.pattern, []).append(binding.entry)
    for pattern, entries in by_pattern.items():
        print(acls_listing(pattern, entries), file=stdout)


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    _check_args(args)
    # Checked before the store opens (or is created), as AclCommand checks before it writes.
    to_add = _to_add(args) if args.add else {}
    to_remove = _filter_entries(args) if args.remove else {}
    store = open_acl_store_for(args, create=bool(args.add), removing=bool(args.remove))
    try:
        if args.add:
            failures = _add(store, to_add, stdout)
        elif args.remove:
            failures = _remove(store, to_remove, args.force, stdin, stdout)
        else:
            _list(store, args, stdout)
            failures = []
    finally:
        store.close()
    if failures:
        more = f" ({len(failures) - 1} more)" if len(failures) > 1 else ""
        raise CommandError(failures[0] + more)
    return 0


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``acls`` subcommand."""
    parser = add_core_command(subparsers, "acls", _run)
    _add_store_options(parser)
    _add_action_options(parser)
    _add_resource_options(parser)
    _add_entry_options(parser)


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group("where the ACLs are (one of)")
    where.add_argument(
        "--store",
        metavar="LOCATION",
        help="the credential store that holds them: sqlite:PATH or zookeeper:HOST:PORT[/CHROOT]",
    )
    where.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[/CHROOT]",
        help="ZooKeeper, in Kafka's AclAuthorizer layout",
    )
    where.add_argument(
        "--authorizer-properties",
        dest="authorizer_properties",
        metavar="zookeeper.connect=HOST:PORT[/CHROOT]",
        action="append",
        default=[],
        help="as kafka-acls takes it: zookeeper.connect (the only key read)",
    )
    where.add_argument("--bootstrap-server", dest="bootstrap_server", help=argparse.SUPPRESS)
    add_zookeeper_options(where, used_with="--zookeeper and zookeeper.connect")


def _add_action_options(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_argument_group("actions (exactly one)")
    actions.add_argument("--add", action="store_true", help="add the ACLs the options describe")
    actions.add_argument(
        "--remove", action="store_true", help="remove them (all of a resource's without principals)"
    )
    actions.add_argument(
        "--list", action="store_true", help="list the ACLs, of the resources given or all"
    )
    actions.add_argument(
        "--force", action="store_true", help="remove without asking for each resource"
    )


def _add_resource_options(parser: argparse.ArgumentParser) -> None:
    resources = parser.add_argument_group("resources (each may be given more than once)")
    for option, what in (
        ("--topic", "a topic; * for every topic"),
        ("--group", "a consumer group; * for every group"),
        ("--transactional-id", "a transactional id; * for every one"),
        ("--delegation-token", "a delegation token id; * for every token"),
        ("--user-principal", "a user principal as a resource (CreateTokens, DescribeTokens)"),
    ):
        resources.add_argument(option, action="append", default=[], metavar="NAME", help=what)
    resources.add_argument("--cluster", action="store_true", help="the cluster (kafka-cluster)")
    resources.add_argument(
        "--resource-pattern-type",
        dest="resource_pattern_type",
        type=_pattern_type,
        default=PatternType.LITERAL,
        metavar="|".join(_PATTERN_TYPES),
        help="literal (default) or prefixed; to list or remove also any (names compared exactly) "
        "or match (every pattern that applies to the names)",
    )


def _add_entry_options(parser: argparse.ArgumentParser) -> None:
    entries = parser.add_argument_group("who, from where, what (each may be given more than once)")
    for option, what in (
        ("--allow-principal", "Type:Name allowed, e.g. User:alice; User:* for every user"),
        ("--deny-principal", "Type:Name denied (deny rules take precedence over allow rules)"),
        ("--allow-host", "a client IP address the allowed principals may come from (default *)"),
        ("--deny-host", "a client IP address the denied principals are refused from (default *)"),
        ("--operation", "Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
         "DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens or All "
         "(default)"),
        ("--principal", "with --list: only this principal's ACLs"),
    ):  # fmt: skip
        entries.add_argument(option, action="append", default=[], metavar="VALUE", help=what)
    entries.add_argument(
        "--producer", action="store_true", help="Write, Describe and Create on the topics"
    )
    entries.add_argument(
        "--consumer",
        action="store_true",
        help="Read and Describe on the topics, Read on the groups",
    )
    entries.add_argument(
        "--idempotent", action="store_true", help="with --producer: IdempotentWrite on the cluster"
    )
