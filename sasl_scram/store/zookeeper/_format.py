"""Kafka 3.x ZooKeeper-mode bytes for user configs and change notifications (pure).

* ``/config/users/<sanitized user>`` holds ``{"version":1,"config":{...}}``,
  compact Jackson JSON, every value a string (docs/kafka-facts.md §5.1).
* ``/config/changes/config_change_<10 digits>`` holds
  ``{"version":2,"entity_path":"users/<sanitized user>"}`` (§5.3).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from sasl_scram._credential import ScramCredential
from sasl_scram._errors import InvalidCredentialString
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.store.zookeeper._sanitizer import SanitizerError
from sasl_scram.store.zookeeper._sanitizer import sanitize

__all__ = [
    "CHANGES_PATH",
    "CHANGE_PREFIX",
    "DEFAULT_ENTITY",
    "USERS_PATH",
    "MalformedZnode",
    "change_sequence",
    "credentials_from_config",
    "decode_config",
    "encode_config",
    "encode_notification",
    "notification_user",
    "parse_sequence",
    "scram_keys",
    "user_path",
]

_log = logging.getLogger("sasl_scram.store.zookeeper")

USERS_PATH = "/config/users"  # ConfigEntityZNode.path("users", ...)
CHANGES_PATH = "/config/changes"  # ConfigEntityChangeNotificationZNode
CHANGE_PREFIX = "config_change_"  # ConfigEntityChangeNotificationSequenceZNode
# ZooKeeperInternals.DEFAULT_STRING: the user-defaults entity, never a credential.
DEFAULT_ENTITY = "<default>"


class MalformedZnode(ValueError):
    """A znode's data is not what Kafka would write; the message names no secret."""


def _dumps(value: object) -> bytes:
    # Jackson's defaults: no spaces, non-ASCII written as UTF-8, "/" unescaped.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def user_path(user: str) -> str:
    """``/config/users/<Sanitizer.sanitize(user)>``.

    Raises:
        SanitizerError: the user names no znode: a lone surrogate, or a name
            ``Sanitizer`` keeps as ``.`` or ``..`` (or empty), which ZooKeeper's
            ``PathUtils.validatePath`` refuses as a node name (Kafka's own write
            fails there too); kazoo would raise before sending anything.
    """
    name = sanitize(user)
    if name in ("", ".", ".."):
        raise SanitizerError(
            f"user name {user!r} names no ZooKeeper node (ZooKeeper refuses '.', '..' "
            "and empty node names): choose another name"
        )
    return f"{USERS_PATH}/{name}"


def encode_config(config: Mapping[str, object]) -> bytes:
    """The user znode's bytes, as ``AdminZkClient.changeEntityConfig`` writes them."""
    return _dumps({"version": 1, "config": dict(config)})


def decode_config(data: bytes | None) -> dict[str, object]:
    """The ``config`` object of a user znode; empty for a missing or empty znode.

    Kafka reads only ``config`` and ignores ``version``. Non-SCRAM values are
    returned untouched so that a rewrite keeps them byte for byte.

    Raises:
        MalformedZnode: not JSON, or ``config`` is not an object.
    """
    if not data:
        return {}
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise MalformedZnode("user config znode is not JSON") from None
    if not isinstance(document, dict):
        raise MalformedZnode("user config znode is not a JSON object")
    config = document.get("config", {})
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise MalformedZnode("user config znode has a non-object 'config'")
    return config


def credentials_from_config(
    config: Mapping[str, object], context: str = ""
) -> dict[ScramMechanism, ScramCredential]:
    """Parse the SCRAM keys of a config, logging and skipping bad ones.

    Like ``CredentialProvider.updateCredentials`` a missing key means no
    credential; unlike Kafka, one bad value does not hide the other mechanism.
    """
    creds: dict[ScramMechanism, ScramCredential] = {}
    for mech in ScramMechanism:
        value = config.get(mech.mechanism_name)
        if value is None:
            continue
        if not isinstance(value, str):
            _log.warning("skipping %s for %s: value is not a string", mech, context)
            continue
        try:
            cred = ScramCredential.from_kafka_string(value)
        except InvalidCredentialString as exc:
            # The exception text names the defect without echoing key material.
            _log.warning("skipping %s for %s: %s", mech, context, exc)
            continue
        if not cred.matches_mechanism(mech):
            _log.warning("skipping %s for %s: key length does not fit the hash", mech, context)
            continue
        creds[mech] = cred
    return creds


def scram_keys(config: Mapping[str, object]) -> set[ScramMechanism]:
    """The mechanisms whose key is present, parseable or not."""
    return {m for m in ScramMechanism if m.mechanism_name in config}


def encode_notification(user: str) -> bytes:
    """``ConfigEntityChangeNotificationSequenceZNode.encode`` for a user entity."""
    return _dumps({"version": 2, "entity_path": f"users/{sanitize(user)}"})


def notification_user(data: bytes | None) -> str | None:
    """The sanitized user a notification names, or ``None`` for other entities.

    ``users/<u>/clients/<c>`` (client quotas) and every other entity type are
    ``None``: they never change credentials.

    Raises:
        MalformedZnode: non-JSON data (Kafka ignores it silently) or an
            unsupported version (Kafka logs and skips).
    """
    try:
        document = json.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise MalformedZnode("config change notification is not JSON") from None
    if not isinstance(document, dict):
        raise MalformedZnode("config change notification is not a JSON object")
    version = document.get("version")
    if version == 1:
        # Version 1 is only accepted for topics and clients: never users.
        return None
    if version != 2:
        raise MalformedZnode(
            f"Config change notification has unsupported version '{version}', "
            "supported versions are 1 and 2."
        )
    entity_path = document.get("entity_path")
    if not isinstance(entity_path, str):
        raise MalformedZnode("config change notification has no entity_path")
    root, _, rest = entity_path.partition("/")
    if root != "users" or not rest or "/" in rest:
        return None
    return rest


def change_sequence(name: str) -> int | None:
    """The sequence number of a ``config_change_NNNNNNNNNN`` child, else ``None``."""
    return parse_sequence(name, CHANGE_PREFIX)


def parse_sequence(name: str, prefix: str) -> int | None:
    """The sequence number of a sequential ``<prefix>NNNNNNNNNN`` znode, else ``None``.

    ZooKeeper appends a zero-padded 10-digit counter to a sequential node's
    name; Kafka's notification listeners parse it the same way.
    """
    if not name.startswith(prefix):
        return None
    suffix = name[len(prefix) :]
    if not suffix.isascii() or not suffix.isdigit():
        return None
    return int(suffix)
