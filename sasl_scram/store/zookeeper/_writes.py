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
from sasl_scram.store._api import AlterResult
from sasl_scram.store._api import CredentialStoreUnavailable
from sasl_scram.store.zookeeper._followed import MAX_WRITE_ATTEMPTS
from sasl_scram.store.zookeeper._followed import CommitOutcomeUnknown
from sasl_scram.store.zookeeper._followed import CommitRefused
from sasl_scram.store.zookeeper._followed import ZkFollowedStore
from sasl_scram.store.zookeeper._format import MalformedZnode
from sasl_scram.store.zookeeper._format import decode_config
from sasl_scram.store.zookeeper._format import encode_config
from sasl_scram.store.zookeeper._format import encode_notification
from sasl_scram.store.zookeeper._format import scram_keys
from sasl_scram.store.zookeeper._format import user_path
from sasl_scram.store.zookeeper._sanitizer import SanitizerError

__all__ = ["ZkCredentialWrites"]

_log = logging.getLogger("sasl_scram.store.zookeeper")


class ZkCredentialWrites(ZkFollowedStore):
    """The KIP-554 write half of the ZooKeeper credential store."""

    def _alter_user(self, alteration: _kip554.UserAlteration) -> AlterResult:
        user = alteration.user
        try:
            path = user_path(user)
        except SanitizerError as exc:
            return AlterResult(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, str(exc))
        for _ in range(MAX_WRITE_ATTEMPTS):
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
            result = self._write_user(user, path, stat, _new_config(config, outcome))
            if result is not None:
                return result
        return _not_applied(user, "too many concurrent alterations of this user")

    def _write_user(
        self, user: str, path: str, stat: Any, new_config: dict[str, object]
    ) -> AlterResult | None:
        """One attempt: the user znode and its notification in one multi-op; ``None``
        when a concurrent writer won or a parent path vanished (re-read and re-apply)."""
        txn = self._client.transaction()
        if stat is None:
            self._zk.create_in(txn, path, encode_config(new_config))
        elif not new_config and stat.numChildren == 0:
            # AdminZkClient.tryCleanQuotaNodes: an empty leaf is deleted.
            txn.delete(path, version=stat.version)
        else:
            txn.set_data(path, encode_config(new_config), version=stat.version)
        self._notify_in(txn, encode_notification(user))
        ex = self._zk.ex
        try:
            applied = self._commit_or_retry(
                txn, races=(ex.BadVersionError, ex.NodeExistsError, ex.NotEmptyError)
            )
        except CommitOutcomeUnknown as exc:
            return _unknown_outcome(user, str(exc))
        except CredentialStoreUnavailable as exc:  # the vanished paths were not recreated
            return _not_applied(user, str(exc))
        except CommitRefused as exc:
            _log.warning("ZooKeeper refused the alteration of %s: %r", path, exc.failures)
            return _not_applied(user, f"ZooKeeper refused the write: {exc}")
        return AlterResult(user) if applied else None


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
