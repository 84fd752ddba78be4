"""Spark Kafka source/sink options that log in with a delegation token.

Spark's Kafka source and sink hand every option whose name starts with
``kafka.`` (compared case-insensitively) to the Kafka client, with the prefix
dropped (``KafkaSourceProvider``). These helpers build those options from a
token and apply them to PySpark readers and writers without importing pyspark:
they only call ``.option(key, value)``, which the classic and the Spark
Connect builders both have.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any
from typing import Protocol
from typing import TypeVar

import jaas
from jaas import is_secret_key
from sasl_scram import ScramMechanism
from sasl_scram.config import SASL_PROTOCOLS
from sasl_scram.config import bootstrap_servers as read_bootstrap_servers
from sasl_scram.config import format_host_port
from tokenauth._errors import TokenError

_log = logging.getLogger("tokenauth.spark")

#: Spark's Kafka source/sink passes options with this prefix to the Kafka
#: client, prefix removed (``KafkaSourceProvider.kafkaParamsForDriver``).
KAFKA_PREFIX = "kafka."

#: The option carrying the login; its value holds the token HMAC.
JAAS_OPTION = KAFKA_PREFIX + jaas.SASL_JAAS_CONFIG

# Spark's token support only accepts mechanisms starting with "SCRAM"
# (KafkaTokenSparkConf: sasl.token.mechanism); Kafka knows these two.
_MECHANISMS = ScramMechanism.names()
# A token can only be presented over SASL (Kafka's SecurityProtocol names).
_PROTOCOLS = SASL_PROTOCOLS
# Spark's defaults (KafkaTokenSparkConf: sasl.token.mechanism, security.protocol),
# for every login this package builds.
_DEFAULT_MECHANISM = "SCRAM-SHA-512"
_DEFAULT_PROTOCOL = "SASL_SSL"
# Keys kafka_options() sets itself; `extra` may not override them.
_OWN_KEYS = ("bootstrap.servers", "security.protocol", "sasl.mechanism", jaas.SASL_JAAS_CONFIG)
_MASK = "********"


class SparkTokenError(TokenError):
    """Root of the errors raised by :mod:`tokenauth.spark`."""


class JaasConflictError(SparkTokenError, ValueError):
    """The reader or writer already holds a different ``kafka.sasl.jaas.config``.

    The message never contains either value.
    """


class OptionsNotInspectableError(SparkTokenError, TypeError):
    """The options already set on a reader or writer cannot be read.

    Raised instead of silently overwriting a login; pass ``overwrite=True``
    to apply the options without checking.
    """


class TokenLike(Protocol):
    """What :func:`kafka_options` needs from a token (e.g. :class:`DelegationToken`)."""

    @property
    def token_id(self) -> str: ...

    @property
    def hmac_base64(self) -> str: ...


class OptionTarget(Protocol):
    """A PySpark ``DataStreamReader``, ``DataStreamWriter``, ``DataFrameReader``
    or ``DataFrameWriter`` (classic or Spark Connect)."""

    def option(self, key: str, value: str) -> OptionTarget: ...


T = TypeVar("T", bound=OptionTarget)


def _is_secret(key: str) -> bool:
    return key.lower().endswith(jaas.SASL_JAAS_CONFIG) or is_secret_key(key)


class KafkaOptions(Mapping[str, str]):
    """Immutable Spark options for a Kafka source or sink; ``repr`` hides secrets.

    A mapping from option name to value, in the order Spark should see them.
    ``str``/``repr`` mask the JAAS line and any password-like value, so the
    object can be logged; ``dict(options)`` or indexing gives the real values.

    Attributes:
        token_id: The delegation token's id (not a secret), or ``None``.
    """

    __slots__ = ("_items", "token_id")

    def __init__(self, items: Mapping[str, str], token_id: str | None = None) -> None:
        self._items = dict(items)
        self.token_id = token_id

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        shown = {k: (_MASK if _is_secret(k) else v) for k, v in self._items.items()}
        return f"KafkaOptions({shown!r}, token_id={self.token_id!r})"

    __str__ = __repr__

    def client_properties(self) -> dict[str, str]:
        """Return the Kafka client properties Spark derives from these options.

        Exactly what Spark's Kafka source does: keep the keys that start with
        ``kafka.`` (case-insensitively) and drop that prefix.

        Returns:
            A plain dict (it holds the secret: do not log it).
        """
        n = len(KAFKA_PREFIX)
        return {k[n:]: v for k, v in self._items.items() if k.lower().startswith(KAFKA_PREFIX)}


def kafka_options(
    token: TokenLike,
    bootstrap_servers: str,
    mechanism: str = _DEFAULT_MECHANISM,
    security_protocol: str = _DEFAULT_PROTOCOL,
    *,
    extra: Mapping[str, str] | None = None,
) -> KafkaOptions:
    """Build the ``kafka.``-prefixed options that log in with a delegation token.

    The JAAS value is the one Spark's own token support builds
    (``KafkaTokenUtil.getTokenJaasParams``) minus its ``serviceName``, which
    SCRAM ignores: ``ScramLoginModule required tokenauth=true
    username="<token id>" password="<hmac>";``.

    Args:
        token: The delegation token (its id and base64 HMAC are used).
        bootstrap_servers: The brokers the source or sink connects to
            (``host:port[,host:port...]``; every entry needs its port).
        mechanism: ``SCRAM-SHA-256`` or ``SCRAM-SHA-512`` (Spark's default).
        security_protocol: ``SASL_SSL`` (Spark's default) or ``SASL_PLAINTEXT``.
        extra: More Kafka client properties (``ssl.truststore.location``, ...),
            with or without the ``kafka.`` prefix. They may not set the four
            keys above.

    Returns:
        The options, ``kafka.bootstrap.servers``, ``kafka.security.protocol``,
        ``kafka.sasl.mechanism``, ``kafka.sasl.jaas.config``, then ``extra``.

    Raises:
        ValueError: An argument is empty or not a Kafka value.
    """
    if not bootstrap_servers or not bootstrap_servers.strip():
        raise ValueError("bootstrap_servers: required")
    try:
        # Checked as sasl_scram.config.ClientConfig checks bootstrap.servers: the
        # JVM client would refuse it only when the query starts.
        servers = ",".join(format_host_port(*a) for a in read_bootstrap_servers(bootstrap_servers))
    except ValueError as exc:
        raise ValueError(f"bootstrap_servers: {exc}, e.g. broker1:9093") from None
    mech = mechanism.strip().upper()
    if mech not in _MECHANISMS:
        raise ValueError(f"mechanism: expected one of {', '.join(_MECHANISMS)}, got {mechanism!r}")
    protocol = security_protocol.strip().upper()
    if protocol not in _PROTOCOLS:
        raise ValueError(
            f"security_protocol: expected one of {', '.join(_PROTOCOLS)}, got {security_protocol!r}"
        )
    if not token.token_id:
        raise ValueError("token: empty token id")
    items = {
        KAFKA_PREFIX + "bootstrap.servers": servers,
        KAFKA_PREFIX + "security.protocol": protocol,
        KAFKA_PREFIX + "sasl.mechanism": mech,
        JAAS_OPTION: jaas.scram_token_login_line(token.token_id, token.hmac_base64),
    }
    for key, value in (extra or {}).items():
        name = key[len(KAFKA_PREFIX) :] if key.lower().startswith(KAFKA_PREFIX) else key
        if name.lower() in _OWN_KEYS:
            raise ValueError(f"extra: {key!r} is set by kafka_options itself")
        items[KAFKA_PREFIX + name] = value
    return KafkaOptions(items, token_id=token.token_id)


def _jvm_extra_options(jbuilder: object) -> object:
    """The ``extraOptions`` CaseInsensitiveMap of a classic JVM builder.

    Spark 4 keeps the options a reader/writer has been given in a field named
    ``extraOptions`` (``private`` in ``classic.DataStreamReader`` and
    ``classic.DataStreamWriter``, inherited from ``sql.DataFrameReader`` and
    ``sql.DataFrameWriter``), so we read it through Java reflection over py4j.
    """
    cls = jbuilder.getClass()  # type: ignore[attr-defined]
    while cls is not None:
        for field in cls.getDeclaredFields():
            if field.getName() == "extraOptions":
                field.setAccessible(True)
                return field.get(jbuilder)
        cls = cls.getSuperclass()
    raise OptionsNotInspectableError("no extraOptions field on the JVM builder")


def _connect_options(target: object) -> Any | None:
    """The options a Spark Connect builder keeps in Python, or ``None`` (classic).

    Readers keep a dict (``_options``); writers write into their protobuf's
    ``options`` map. Unlike the JVM's ``CaseInsensitiveMap``, both keep keys
    that differ only in case side by side.
    """
    py_options = getattr(target, "_options", None)
    if isinstance(py_options, dict):
        return py_options
    for proto_attr in ("_write", "_write_proto"):
        proto = getattr(target, proto_attr, None)
        proto_options = getattr(proto, "options", None)
        if proto_options is not None and hasattr(proto_options, "keys"):
            return proto_options
    return None


def existing_option(target: object, key: str) -> str | None:
    """Return the value already set for ``key`` on a PySpark reader or writer.

    Option names are compared case-insensitively, as Spark does
    (``CaseInsensitiveMap``). Supports pyspark 4.x classic builders (read in
    the JVM) and Spark Connect builders (kept in Python).

    Raises:
        OptionsNotInspectableError: The builder is of an unknown kind.
    """
    lowered = key.lower()

    def lookup(options: Mapping[str, str]) -> str | None:
        for k in options:
            if str(k).lower() == lowered:
                return str(options[k])
        return None

    connect_options = _connect_options(target)
    if connect_options is not None:
        return lookup(connect_options)
    # Classic: the py4j handle of the JVM builder.
    for attr in ("_jreader", "_jwrite", "_jwriter"):
        jbuilder = getattr(target, attr, None)
        if jbuilder is None:
            continue
        try:
            found = _jvm_extra_options(jbuilder).get(key)  # type: ignore[attr-defined]
            return str(found.get()) if found.isDefined() else None
        except OptionsNotInspectableError:
            raise
        except Exception as exc:  # py4j errors carry no secret, but say little
            raise OptionsNotInspectableError(
                f"cannot read the options of {type(target).__name__}: {type(exc).__name__}"
            ) from None
    raise OptionsNotInspectableError(
        f"cannot read the options of a {type(target).__name__}; "
        "pass overwrite=True to skip the check"
    )


def apply_kafka_options(target: T, options: Mapping[str, str], *, overwrite: bool = False) -> T:
    """Set ``options`` on a PySpark reader or writer and return it, for chaining.

    Works on ``DataStreamReader``, ``DataStreamWriter``, ``DataFrameReader``
    and ``DataFrameWriter``, classic or Spark Connect.

    Before anything is set, the builder's current ``kafka.sasl.jaas.config``
    is read (see :func:`existing_option`). A different value there is a login
    the user chose; it is kept and :class:`JaasConflictError` raised, unless
    ``overwrite`` is true. Spark's own token support silently overrides it
    (``KafkaConfigUpdater``); we do not. The same value again is not a
    conflict. Other keys are set like any ``.option()`` call: last one wins.

    Args:
        target: The reader or writer.
        options: Usually from :func:`kafka_options`.
        overwrite: Replace a different login already set, without checking.

    Returns:
        The builder returned by the last ``.option()`` call (``target`` itself
        in PySpark).

    Raises:
        JaasConflictError: A different ``kafka.sasl.jaas.config`` is set.
        OptionsNotInspectableError: The current options cannot be read (and
            ``overwrite`` is false).
    """
    new_login = next((v for k, v in options.items() if k.lower() == JAAS_OPTION), None)
    if new_login is not None and not overwrite:
        current = existing_option(target, JAAS_OPTION)
        if current is not None and current != new_login:
            raise JaasConflictError(
                f"{type(target).__name__} already has a different {JAAS_OPTION}; "
                "pass overwrite=True to replace it"
            )
    # Spark Connect sends every key it holds and the server folds them into a
    # CaseInsensitiveMap in no set order: drop other spellings of each key, so
    # ours replaces the user's, as .option() does in classic Spark.
    connect_options = _connect_options(target)
    if connect_options is not None:
        wanted = {key.lower(): key for key in options}
        for held in list(connect_options.keys()):
            if wanted.get(str(held).lower(), held) != held:
                del connect_options[held]
    result: OptionTarget = target
    for key, value in options.items():
        result = result.option(key, value)
    _log.debug(
        "set %d Kafka options on %s (token %s)",
        len(options),
        type(target).__name__,
        getattr(options, "token_id", None),
    )
    return result  # type: ignore[return-value]
