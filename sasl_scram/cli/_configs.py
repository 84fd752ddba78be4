"""``kafka-scram configs``: kafka-configs.sh for the ``users`` entity type.

Flags, parsing and output lines follow ``kafka.admin.ConfigCommand``; its
error texts follow our one error format, ``kafka-scram configs: error: <text>``.
The command only needs a
:class:`~sasl_scram.store.ScramAdmin`; :data:`BACKENDS` maps each backend
option (``--zookeeper``, ``--store``; ``--bootstrap-server`` later) to a
factory, so a new backend is one more entry.

Deliberate differences from Kafka: passwords and credential strings never
appear in output or errors (Kafka's ZooKeeper-path ``--describe`` prints the
stored and server keys; ours prints iterations like the admin-client path),
and diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from sasl_scram._errors import ScramError
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.cli._location import lasting_location
from sasl_scram.cli._main import LOGIN_FIXES
from sasl_scram.cli._main import CommandError
from sasl_scram.cli._main import CommandUsageError
from sasl_scram.cli._secret import READ_SECRET
from sasl_scram.cli._secret import read_secret
from sasl_scram.cli._texts import add_core_command
from sasl_scram.cli._zookeeper import add_zookeeper_options
from sasl_scram.cli._zookeeper import zookeeper_options
from sasl_scram.config import bootstrap_servers
from sasl_scram.config import zookeeper_connect
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AlterResult
from sasl_scram.store import ScramAdmin
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion

if TYPE_CHECKING:
    from sasl_scram.store import StoreLocation

__all__ = ["BACKENDS", "Backend", "Dialect", "open_admin", "register"]

_INT_MAX = 2**31 - 1
# ConfigCommand.parseConfigsToBeAdded: split on "," and "=" outside [...].
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
_SPLIT_PAIRS = re.compile("," + _OUTSIDE_BRACKETS)
_SPLIT_KEY = re.compile(r"\s*=\s*" + _OUTSIDE_BRACKETS)
_QUOTA_KEYS = frozenset(
    {"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}
)


@dataclass(frozen=True)
class Dialect:
    """Where ConfigCommand's ZooKeeper path and admin-client path differ."""

    zookeeper: bool

    @property
    def credential_value(self) -> re.Pattern[str]:
        # processCommandWithZk: "[0-9]*"; the admin path also accepts "-1".
        digits = "[0-9]*" if self.zookeeper else "-?[0-9]*"
        return re.compile(rf"(?:iterations=({digits}),)?password=(.*)", re.DOTALL)

    def too_few(self, iterations: int, mech: ScramMechanism) -> str:
        # The ZooKeeper path prints the enum (SCRAM_SHA_256), the admin path the name.
        name = mech.java_name if self.zookeeper else mech.mechanism_name
        return (
            f"Iterations {iterations} is less than the minimum {MIN_ITERATIONS} required for {name}"
        )

    @property
    def empty_password(self) -> str:
        if self.zookeeper:
            return "Password must not be empty; give password=... or password=-"
        # The admin client refuses it before sending (KafkaAdminClient.alterUserScramCredentials).
        return _failure(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Password must not be empty")

    def completed(self, user: str) -> str:
        if self.zookeeper:
            return f"Completed updating config for entity: user-principal '{user}'."
        return f"Completed updating config for user {user}."


AdminFactory = Callable[[argparse.Namespace], ScramAdmin]


@dataclass(frozen=True)
class Backend:
    """One way to reach credentials: the option that selects it and its factory."""

    dest: str
    flags: tuple[str, ...]
    metavar: str
    help: str
    factory: AdminFactory
    dialect: Dialect
    #: Checks the value as typed (``ValueError``: a usage error), before anything opens.
    check: Callable[[str], object]


def _open_zookeeper(args: argparse.Namespace) -> ScramAdmin:
    from sasl_scram.store import ZooKeeperCredentialStore

    options = zookeeper_options(args)
    # Lazy mode: the command alters and describes, it never needs every user.
    # Only --alter writes: a --describe creates no chroot and no path.
    return _created_only_by_adding(
        lambda create: ZooKeeperCredentialStore(
            args.zookeeper, mode="lazy", create=create, **options
        ),
        args,
    )


def _open_store(args: argparse.Namespace) -> ScramAdmin:
    from sasl_scram.store import open_store

    try:
        location = lasting_location(args.store)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if location.scheme == "zookeeper":
        # The same flags as --zookeeper (TLS file, timeout), only the hosts differ.
        return _open_zookeeper(argparse.Namespace(**{**vars(args), "zookeeper": location.target}))
    try:
        return _open_sqlite(location, args) if location.scheme == "sqlite" else open_store(location)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _store_location(location: str) -> None:
    parsed = lasting_location(location)
    if parsed.scheme == "zookeeper":
        zookeeper_connect(parsed.target)


def _open_sqlite(location: StoreLocation, args: argparse.Namespace) -> ScramAdmin:
    """The SQLite store, created only by an alter that adds a credential."""
    from sasl_scram.store import CredentialStoreUnavailable
    from sasl_scram.store import NoStore
    from sasl_scram.store import open_store

    try:
        return _created_only_by_adding(
            lambda create: open_store(location, poll_interval=0, create=create), args
        )
    except CredentialStoreUnavailable as exc:
        if not isinstance(exc.__cause__, NoStore):
            raise
        raise CommandError(f"{exc}; a write such as --alter --add-config creates it") from None


def _created_only_by_adding(
    open_: Callable[[bool], ScramAdmin], args: argparse.Namespace
) -> ScramAdmin:
    """``open_(create)``, where only an alter that adds a credential creates the store.

    A read never writes (no file, table, chroot or path), nor does an alter that
    only deletes: kafka-configs refuses to delete a credential the user does not
    have before it writes anything, and a store that is not there has none.
    """
    from sasl_scram.store import CredentialStoreUnavailable
    from sasl_scram.store import InMemoryCredentialStore
    from sasl_scram.store import NoStore

    creates = bool(args.alter and args.add_config)
    try:
        return open_(creates)
    except CredentialStoreUnavailable as exc:
        if creates or not args.alter or not isinstance(exc.__cause__, NoStore):
            raise
        # An empty store answers the deletion as Kafka answers it for a user
        # without that credential, and leaves nothing behind.
        return InMemoryCredentialStore()


class _RemoteAdmin:
    """RemoteScramAdmin plus the connection it must close."""

    def __init__(self, args: argparse.Namespace) -> None:
        from sasl_scram.admin import KafkaConnection
        from sasl_scram.admin import RemoteScramAdmin
        from sasl_scram.config import ClientConfig

        if not args.command_config:
            raise CommandUsageError("--command-config is required with --bootstrap-server")
        config = ClientConfig.from_file(args.command_config)
        self._conn = KafkaConnection.from_config(config, args.bootstrap_server)
        self._admin = RemoteScramAdmin(self._conn)
        self.describe = self._admin.describe
        self.alter = self._admin.alter

    def close(self) -> None:
        self._conn.close()


def _open_bootstrap(args: argparse.Namespace) -> ScramAdmin:
    return _RemoteAdmin(args)


BACKENDS: list[Backend] = [
    Backend(
        "bootstrap_server",
        ("--bootstrap-server",),
        "HOST:PORT",
        "talk to a broker (or kafka-scram serve) with the KIP-554 RPCs, logging in with "
        "--command-config",
        _open_bootstrap,
        Dialect(zookeeper=False),
        bootstrap_servers,
    ),
    Backend(
        "zookeeper",
        ("--zookeeper",),
        "HOST:PORT[/CHROOT]",
        "write directly to ZooKeeper in Kafka's layout, like kafka-configs --zookeeper",
        _open_zookeeper,
        Dialect(zookeeper=True),
        zookeeper_connect,
    ),
    Backend(
        "store",
        ("--store",),
        "sqlite:PATH",
        "write directly to a credential store, e.g. sqlite:/var/lib/kafka-scram/creds.db",
        _open_store,
        Dialect(zookeeper=False),
        _store_location,
    ),
]


def open_admin(args: argparse.Namespace) -> tuple[ScramAdmin, Dialect]:
    """The admin object and output dialect for the backend option the user gave."""
    chosen = [b for b in BACKENDS if getattr(args, b.dest, None)]
    if len(chosen) != 1:
        names = ", ".join(b.flags[0] for b in BACKENDS)
        raise CommandUsageError(f"exactly one of {names} must be specified")
    backend = chosen[0]
    try:
        backend.check(getattr(args, backend.dest))
    except ValueError as exc:
        raise CommandUsageError(f"{backend.flags[0]}: {exc}") from None
    return backend.factory(args), backend.dialect


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``configs`` subcommand."""
    parser = add_core_command(subparsers, "configs", _run)
    for backend in BACKENDS:
        parser.add_argument(
            *backend.flags, dest=backend.dest, metavar=backend.metavar, help=backend.help
        )
    add_zookeeper_options(parser, used_with="--zookeeper")
    parser.add_argument(
        "--command-config",
        dest="command_config",
        metavar="FILE",
        help="client properties (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.*) "
        "for --bootstrap-server",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--alter", action="store_true", help="alter the entity's configs")
    action.add_argument("--describe", action="store_true", help="list the entity's configs")
    parser.add_argument("--entity-type", dest="entity_type", help="only 'users' is supported")
    parser.add_argument("--entity-name", dest="entity_name", help="the user name")
    parser.add_argument(
        "--user", dest="user", help="shorthand for --entity-type users --entity-name"
    )
    parser.add_argument(
        "--entity-default", dest="entity_default", action="store_true", help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--user-defaults", dest="user_defaults", action="store_true", help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--add-config",
        dest="add_config",
        metavar="CONFIGS",
        help="credentials to add, e.g. 'SCRAM-SHA-256=[iterations=8192,password=-],"
        "SCRAM-SHA-512=[password=-]' (password=- reads it)",
    )
    parser.add_argument(
        "--delete-config",
        dest="delete_config",
        metavar="MECHANISMS",
        help="credentials to delete, comma-separated, e.g. SCRAM-SHA-512",
    )


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    user = _entity(args)
    if args.alter and not (args.add_config or args.delete_config):
        raise CommandUsageError("--alter needs --add-config or --delete-config")
    if args.alter and user is None:
        raise CommandUsageError("an entity name (--entity-name or --user) is required with --alter")
    if args.describe and (args.add_config or args.delete_config):
        raise CommandUsageError("--add-config and --delete-config are only allowed with --alter")
    try:
        admin, dialect = open_admin(args)
    except ScramError as exc:
        # A failed login names Kafka's exception too (SaslAuthenticationException).
        raise CommandError(_error_text(exc, args)) from None
    try:
        if dialect.zookeeper:
            # ConfigCommand's banner for its ZooKeeper path (a diagnostic: stderr).
            print(
                "Warning: --zookeeper is deprecated and will be removed in a future "
                "version of Kafka.",
                file=stderr,
            )
            print("Use --bootstrap-server instead to specify a broker to connect to.", file=stderr)
        if args.alter:
            assert user is not None
            return _alter(admin, dialect, user, args, stdin, stdout, stderr)
        return _describe(admin, user, stdout, stderr)
    except ScramError as exc:
        raise CommandError(_error_text(exc, args)) from None
    finally:
        close = getattr(admin, "close", None)
        if callable(close):
            close()


def _entity(args: argparse.Namespace) -> str | None:
    if args.entity_default or args.user_defaults:
        raise CommandUsageError(
            "The use of --entity-default or --user-defaults is not allowed with User SCRAM "
            "Credentials using --bootstrap-server."
        )
    if args.user is not None:
        if args.entity_type not in (None, "users") or args.entity_name is not None:
            raise CommandUsageError("--user cannot be combined with --entity-type/--entity-name")
        return str(args.user)
    if args.entity_type is None:
        raise CommandUsageError("--entity-type users (or --user) must be specified")
    if args.entity_type != "users":
        raise CommandUsageError(
            f"only the users entity type is supported, got {args.entity_type!r}"
        )
    return None if args.entity_name is None else str(args.entity_name)


def _parse_add_config(text: str) -> dict[str, str]:
    pairs = [_SPLIT_KEY.split(pair) for pair in _SPLIT_PAIRS.split(text)]
    if not all(len(p) == 2 for p in pairs):
        raise CommandUsageError(
            "requirement failed: Invalid entity config: all configs to be added must be in "
            "the format \"key=val\". (e.g. --add-config 'SCRAM-SHA-512=[password=-]')"
        )
    # Every "[" and "]" is removed from values, passwords included, as Kafka does.
    return {p[0].strip(): p[1].replace("[", "").replace("]", "") for p in pairs}


def _invalid_credential(mech: ScramMechanism, problem: str) -> CommandUsageError:
    # Kafka's words, which echo the value; it holds the password, so we do not.
    return CommandUsageError(
        f"Invalid credential property {mech.java_name}=[hidden]: {problem} "
        f"(e.g. --add-config '{mech.mechanism_name}=[iterations=8192,password=-]')"
    )


def _what_is_wrong(value: str) -> str:
    """Why a credential value does not parse, without a word of its password."""
    # The iterations come before ",password=", so they are never the password.
    iterations = re.match(r"iterations=(.*?),password=", value)
    if iterations is not None:
        return f"iterations must be a whole number, got {iterations.group(1)[:20]!r}"
    return "expected [iterations=N,]password=PASSWORD"


def _upsertions(
    user: str, added: dict[str, str], dialect: Dialect, stdin: TextIO
) -> list[ScramUpsertion]:
    stdin_password: list[str] = []
    result = []
    for key, value in added.items():
        mech = ScramMechanism.from_name(key)
        match = dialect.credential_value.fullmatch(value)
        if match is None:
            raise _invalid_credential(mech, _what_is_wrong(value))
        raw_iterations, password = match.group(1), match.group(2)
        iterations = MIN_ITERATIONS
        if raw_iterations:
            iterations = int(raw_iterations)
            if iterations > _INT_MAX:
                raise _invalid_credential(
                    mech, f"iterations {iterations} is more than a Java int holds"
                )
            if iterations == -1:
                iterations = MIN_ITERATIONS  # the admin path treats -1 as the default
            elif iterations < MIN_ITERATIONS:
                raise CommandUsageError(dialect.too_few(iterations, mech))
        if password == READ_SECRET:
            if not stdin_password:
                stdin_password.append(read_secret(stdin, f"Password for {user}: ", confirm=True))
            password = stdin_password[0]
        if not password:
            raise CommandUsageError(dialect.empty_password)
        result.append(ScramUpsertion.from_password(user, mech, password, iterations))
    return result


def _alter(
    admin: ScramAdmin,
    dialect: Dialect,
    user: str,
    args: argparse.Namespace,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    added = _parse_add_config(args.add_config) if args.add_config else {}
    deleted = (
        [k.strip() for k in args.delete_config.split(",") if k.strip()]
        if args.delete_config
        else []
    )
    names = set(ScramMechanism.names())
    foreign = [k for k in [*added, *deleted] if k not in names]
    if foreign:
        if dialect.zookeeper and all(k in _QUOTA_KEYS for k in foreign):
            raise CommandUsageError(
                "requirement failed: --bootstrap-server option must be specified to update "
                f"users configs: {{add: {{{', '.join(sorted(added))}}}, delete: "
                f"[{', '.join(deleted)}]}}. User configuration updates using ZooKeeper are "
                "only supported for SCRAM credential updates."
            )
        raise CommandUsageError(
            f"Invalid config(s): {','.join(foreign)}. Only "
            f"{' and '.join(ScramMechanism.names())} can be altered by this command."
        )
    upserts = _upsertions(user, added, dialect, stdin)
    deletes = [ScramDeletion(user, ScramMechanism.from_name(k).type_byte) for k in deleted]
    results = admin.alter(deletes, upserts)
    failed = [r for r in results if r.error != ErrorCode.NONE]
    if failed:
        raise CommandError(_alter_error(failed[0], dialect, deleted))
    print(dialect.completed(user), file=stdout)
    return 0


def _alter_error(result: AlterResult, dialect: Dialect, deleted: list[str]) -> str:
    if dialect.zookeeper and result.error == ErrorCode.RESOURCE_NOT_FOUND:
        # processCommandWithZk checks deletions against the znode first.
        return (
            f"Invalid config(s): {','.join(deleted)} (the user has no such credential; "
            "--describe lists the ones it has)"
        )
    return _failure(result.error, result.message)


def _failure(
    error: ErrorCode, message: str | None, config: str = "the --command-config file"
) -> str:
    """An error Kafka's admin client raised, as ConfigCommand's stack trace names it
    (``ExecutionException: <exception>: <message>``), on one line; then how to
    fix it, where :data:`LOGIN_FIXES` knows."""
    text = (
        f"Error while executing config command: {error.exception_name}: "
        f"{message or error.default_message}"
    )
    fix = LOGIN_FIXES.get(error)
    return f"{text} ({fix.format(config=config)})" if fix else text


def _error_text(exc: Exception, args: argparse.Namespace) -> str:
    """A failed login names Kafka's exception too (SaslAuthenticationException)."""
    from sasl_scram.admin import KafkaConnectionError

    if isinstance(exc, KafkaConnectionError) and exc.kafka_error is not None:
        config = f"the --command-config file {args.command_config}"
        return _failure(exc.kafka_error, str(exc), config)
    return str(exc)


def _describe(admin: ScramAdmin, user: str | None, stdout: TextIO, stderr: TextIO) -> int:
    answer = admin.describe(None if user is None else [user])
    if answer.error != ErrorCode.NONE:
        raise CommandError(_failure(answer.error, answer.message))
    for description in answer.results:
        if description.error == ErrorCode.RESOURCE_NOT_FOUND:
            continue  # describeUserScramCredentials().users() omits them
        if description.error != ErrorCode.NONE:
            name = description.error.exception_name
            print(
                f"Error retrieving SCRAM credential configs for user-principal "
                f"'{description.user}': {name}: "
                f"{description.message or description.error.default_message}",
                file=stdout,
            )
            continue
        infos = ", ".join(
            f"{c.mechanism.mechanism_name}=iterations={c.iterations}"
            for c in description.credentials
        )
        print(
            f"SCRAM credential configs for user-principal '{description.user}' are {infos}",
            file=stdout,
        )
    return 0
