"""KIP-554 writes to ZooKeeper, the way ``AdminZkClient.changeConfigs`` makes them.

One user's alteration is one multi-op: the user znode (created, updated with
its version, or deleted when it empties, as ``tryCleanQuotaNodes``) together
with its ``config_change_`` notification, retried from a fresh read when a
concurrent writer won. Kept apart from the session and watch handling
(:class:`~sasl_scram.store.zookeeper._followed.ZkFollowedStore`) and from the
cache (:class:`~sasl_scram.store.ZooKeeperCredentialStore`).
"""

from __future__ import annotations

import logging
from typing import Any

from sasl_scram.kafka import ErrorCode
from sasl_scram.store import _kip554
from sasl_scram.store._api import AlterResult, CredentialStoreUnavailable
from sasl_scram.store.zookeeper._followed import ZkFollowedStore
from sasl_scram.store.zookeeper._format import (
    USERS_PATH,
    MalformedZnode,
    decode_config,
    encode_config,
    encode_notification,
    scram_keys,
)
from sasl_scram.store.zookeeper._sanitizer import SanitizerError, sanitize

__all__ = ["ZkCredentialWrites"]

_log = logging.getLogger("sasl_scram.store.zookeeper")

# Optimistic-concurrency retries for one user's alteration.
_MAX_WRITE_ATTEMPTS = 20


class _Retry(Exception):
    """A concurrent writer won, or a parent vanished: re-read and re-apply."""


class ZkCredentialWrites(ZkFollowedStore):
    """The KIP-554 write half of the ZooKeeper credential store."""

    def _alter_user(self, alteration: _kip554.UserAlteration) -> AlterResult:
        user = alteration.user
        try:
            path = f"{USERS_PATH}/{sanitize(user)}"
        except SanitizerError as exc:
            return AlterResult(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, str(exc))
        for _ in range(_MAX_WRITE_ATTEMPTS):
            if not self._zk.connected():
                return _not_applied(user, "ZooKeeper is unreachable")
            try:
                data, stat = self._get(path)
            except CredentialStoreUnavailable as exc:
                return _not_applied(user, str(exc))
            try:
                config = decode_config(data)
            except MalformedZnode as exc:
                # Never overwrite data we do not understand (Kafka would fail too).
                _log.warning("not altering %s: %s", path, exc)
                return AlterResult(
                    user, ErrorCode.UNKNOWN_SERVER_ERROR, _kip554.UNKNOWN_SERVER_ERROR_MESSAGE
                )
            outcome = _kip554.resolve_user(alteration, scram_keys(config))
            if isinstance(outcome, AlterResult):
                return outcome
            try:
                return self._write_user(user, path, stat, _new_config(config, outcome))
            except _Retry:
                continue
        return _not_applied(user, "too many concurrent alterations of this user")

    def _write_user(
        self, user: str, path: str, stat: Any, new_config: dict[str, object]
    ) -> AlterResult:
        """One attempt: the user znode and its notification in one multi-op.

        Raises:
            _Retry: a concurrent writer won, or a parent path vanished.
        """
        txn = self._client.transaction()
        if stat is None:
            self._zk.create_in(txn, path, encode_config(new_config))
        elif not new_config and stat.numChildren == 0:
            # AdminZkClient.tryCleanQuotaNodes: an empty leaf is deleted.
            txn.delete(path, version=stat.version)
        else:
            txn.set_data(path, encode_config(new_config), version=stat.version)
        self._notify_in(txn, encode_notification(user))
        try:
            failures = self._commit(txn)
        except CredentialStoreUnavailable as exc:
            return _unknown_outcome(user, str(exc))
        if not failures:
            return AlterResult(user)
        ex = self._zk.ex
        if any(isinstance(f, ex.NoNodeError) for f in failures):
            # A parent path vanished (or the user node did): recreate and retry.
            try:
                self._zk.ensure_paths()
            except CredentialStoreUnavailable as exc:
                return _not_applied(user, str(exc))
            raise _Retry
        if any(
            isinstance(f, (ex.BadVersionError, ex.NodeExistsError, ex.NotEmptyError))
            for f in failures
        ):
            raise _Retry
        _log.warning("ZooKeeper refused the alteration of %s: %r", path, failures)
        return _not_applied(user, f"ZooKeeper refused the write: {type(failures[0]).__name__}")


def _new_config(config: dict[str, object], outcome: _kip554.UserChange) -> dict[str, object]:
    deleted = {m.mechanism_name for m in outcome.deletions}
    new_config = {k: v for k, v in config.items() if k not in deleted}
    for mech, cred in outcome.upsertions.items():
        new_config[mech.mechanism_name] = cred.to_kafka_string()
    return new_config


def _not_applied(user: str, reason: str) -> AlterResult:
    return AlterResult(
        user,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        f"Credential store unavailable; the alteration was not applied: {reason}",
    )


def _unknown_outcome(user: str, reason: str) -> AlterResult:
    return AlterResult(
        user,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        "Credential store connection lost during the write; the alteration may or may "
        f"not have been applied, describe the user to check: {reason}",
    )
