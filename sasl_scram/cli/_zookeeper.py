"""What the commands that write ZooKeeper directly share (``configs --zookeeper``,
``acls --zookeeper``): Kafka's way of giving them a login, TLS and a time limit.

Like ``kafka-configs`` and ``kafka-acls``: TLS from ``--zk-tls-config-file``, the
SASL login from the JAAS file ``KAFKA_OPTS`` names; either means secure ACLs
(``JaasUtils.isZkSaslEnabled``). ``--zookeeper-timeout`` bounds the wait for an
unreachable ensemble (ours: Kafka's tools wait without a limit).
"""

from __future__ import annotations

import argparse
import os
import warnings
from typing import Any

from sasl_scram.cli._main import CommandError

__all__ = ["ZOOKEEPER_TIMEOUT", "add_zookeeper_options", "zookeeper_options"]

# How long a command waits for ZooKeeper before failing (our choice).
ZOOKEEPER_TIMEOUT = 10.0


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def add_zookeeper_options(parser: argparse._ActionsContainer, *, used_with: str) -> None:
    """``--zk-tls-config-file`` and ``--zookeeper-timeout``; ``used_with`` names the
    options that reach ZooKeeper, for the help."""
    parser.add_argument(
        "--zk-tls-config-file",
        dest="zk_tls_config_file",
        metavar="FILE",
        help=f"zookeeper.ssl.* properties for TLS to ZooKeeper (PEM stores), for {used_with}",
    )
    parser.add_argument(
        "--zookeeper-timeout",
        dest="zookeeper_timeout",
        metavar="SECONDS",
        type=_positive_seconds,
        default=ZOOKEEPER_TIMEOUT,
        help=f"give up on an unreachable ZooKeeper after this long (default {ZOOKEEPER_TIMEOUT:g})",
    )


def zookeeper_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ZooKeeper store options the command line gives: ``security`` (TLS, the
    ``KAFKA_OPTS`` login) and ``request_timeout``.

    Raises:
        CommandError: the TLS file or the JAAS file cannot be read or used.
    """
    import jaas
    from sasl_scram.config import read_properties
    from sasl_scram.store import ZooKeeperSecurity
    from sasl_scram.store import ZooKeeperTls

    tls = None
    tls_file = getattr(args, "zk_tls_config_file", None)
    if tls_file:
        try:
            tls = ZooKeeperTls.from_properties(read_properties(tls_file))
        except (ValueError, OSError) as exc:
            raise CommandError(f"--zk-tls-config-file: {exc}") from None
        if tls is None:
            # Kafka's tools would quietly connect in plaintext here.
            raise CommandError(
                f"--zk-tls-config-file: {tls_file} does not set "
                "zookeeper.ssl.client.enable=true, so TLS would not be used"
            )
    try:
        security = ZooKeeperSecurity.from_kafka_opts(os.environ.get("KAFKA_OPTS"), tls=tls)
    except (ValueError, OSError, jaas.JaasError) as exc:
        raise CommandError(f"ZooKeeper login from KAFKA_OPTS: {exc}") from None
    # A read creates no chroot: kazoo's warning that it is missing would be a second line.
    warnings.filterwarnings("ignore", message="No chroot path exists", category=UserWarning)
    timeout = getattr(args, "zookeeper_timeout", None) or ZOOKEEPER_TIMEOUT
    return {"security": security, "request_timeout": timeout}
