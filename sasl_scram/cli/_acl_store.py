"""Where ``kafka-scram acls`` finds the ACLs: one of ``--store``, ``--zookeeper`` or
kafka-acls' ``--authorizer-properties zookeeper.connect=...``, opened as the
other commands open a store.

Only ``--add`` creates a store (a file, its tables, a chroot, the ACL paths):
``--list`` on no store is one error line and leaves nothing behind, and
``--remove`` there removes nothing, as there is nothing to remove.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
from typing import Any

from sasl_scram.cli._location import lasting_location
from sasl_scram.cli._main import CommandError
from sasl_scram.cli._main import CommandUsageError
from sasl_scram.cli._zookeeper import zookeeper_options
from sasl_scram.config import zookeeper_connect

if TYPE_CHECKING:
    from sasl_scram.store import AclStore
    from sasl_scram.store import StoreLocation

__all__ = ["open_acl_store_for"]

_CONNECT = "zookeeper.connect"
_WHERE = "--store, --zookeeper, --authorizer-properties zookeeper.connect=HOST:PORT[/CHROOT]"


def _authorizer_connect(properties: list[str]) -> str | None:
    """``zookeeper.connect`` of kafka-acls' ``--authorizer-properties``, the one key read
    (the login comes from ``KAFKA_OPTS`` and TLS from ``--zk-tls-config-file``, as
    there)."""
    connect = None
    for item in properties:
        key, equals, value = item.partition("=")
        if not equals:
            raise CommandUsageError(f"--authorizer-properties expects KEY=VALUE, got {item!r}")
        if key.strip() != _CONNECT:
            raise CommandUsageError(
                f"--authorizer-properties: {key.strip()} is not read here; give "
                f"{_CONNECT}=HOST:PORT[/CHROOT] (the ZooKeeper login comes from KAFKA_OPTS, "
                "TLS from --zk-tls-config-file)"
            )
        connect = value.strip()
    if properties and not connect:
        raise CommandUsageError(f"--authorizer-properties needs {_CONNECT}=HOST:PORT[/CHROOT]")
    return connect


def _location(args: argparse.Namespace) -> StoreLocation:
    from sasl_scram.store import StoreLocation

    if args.bootstrap_server:
        raise CommandUsageError(
            "--bootstrap-server is not supported: this command edits the ACLs in their store; "
            f"give one of {_WHERE} (kafka-acls --bootstrap-server edits a cluster's)"
        )
    given = [
        (flag, value)
        for flag, value in (
            ("--store", args.store),
            ("--zookeeper", args.zookeeper),
            ("--authorizer-properties", _authorizer_connect(args.authorizer_properties)),
        )
        if value
    ]
    if len(given) != 1:
        raise CommandUsageError(f"exactly one of {_WHERE} must be specified")
    flag, value = given[0]
    try:
        location = (
            lasting_location(value, what="ACL store")
            if flag == "--store"
            else StoreLocation.zookeeper(value)
        )
        if location.scheme == "zookeeper":
            zookeeper_connect(location.target)
    except ValueError as exc:
        raise CommandUsageError(f"{flag}: {exc}") from None
    return location


def open_acl_store_for(args: argparse.Namespace, *, create: bool, removing: bool) -> AclStore:
    """The ACL store the command line names; created only when ``create``.

    Raises:
        CommandUsageError: no location, more than one, or a malformed one.
        CommandError: the store cannot be opened, or (but for a removal) is not there.
    """
    from sasl_scram.store import AclStoreError
    from sasl_scram.store import InMemoryAclStore
    from sasl_scram.store import NoStore
    from sasl_scram.store import open_acl_store

    location = _location(args)
    options: dict[str, Any] = {}
    if location.scheme == "zookeeper":
        options = {**zookeeper_options(args), "create": create}
    elif location.scheme == "sqlite":
        options = {"poll_interval": 0, "create": create}
    try:
        return open_acl_store(location, **options)
    except AclStoreError as exc:
        if not isinstance(exc.__cause__, NoStore):
            raise CommandError(str(exc)) from None
        if removing:
            # Nothing there, nothing to remove; and nothing left behind.
            return InMemoryAclStore()
        raise CommandError(f"{exc}; --add creates it") from None
