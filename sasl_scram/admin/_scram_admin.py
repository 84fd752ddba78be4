"""KIP-554 over the wire: a :class:`ScramAdmin` that talks to a broker."""

from __future__ import annotations

from collections.abc import Sequence

from sasl_scram._mechanism import ScramMechanism
from sasl_scram.admin._connection import KafkaConnection
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AlterResult
from sasl_scram.store import CredentialInfo
from sasl_scram.store import DescribeResult
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import UserDescription

__all__ = ["RemoteScramAdmin"]


def _error(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


class RemoteScramAdmin:
    """DescribeUserScramCredentials (50) and AlterUserScramCredentials (51)."""

    def __init__(self, connection: KafkaConnection) -> None:
        self._conn = connection

    def describe(self, users: Sequence[str] | None = None) -> DescribeResult:
        body = {"users": [{"name": u} for u in users] if users else []}
        r = self._conn.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, body)
        results = []
        for item in r["results"]:
            infos = []
            for info in item["credential_infos"]:
                try:
                    infos.append(
                        CredentialInfo(
                            ScramMechanism.from_type(info["mechanism"]), info["iterations"]
                        )
                    )
                except ValueError:
                    continue  # a mechanism this client does not know
            results.append(
                UserDescription(
                    item["user"], tuple(infos), _error(item["error_code"]), item["error_message"]
                )
            )
        return DescribeResult(tuple(results), _error(r["error_code"]), r["error_message"])

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> list[AlterResult]:
        body = {
            "deletions": [{"name": d.user, "mechanism": d.mechanism} for d in deletions],
            "upsertions": [
                {
                    "name": u.user,
                    "mechanism": u.mechanism,
                    "iterations": u.iterations,
                    "salt": u.salt,
                    "salted_password": u.salted_password,
                }
                for u in upsertions
            ],
        }
        r = self._conn.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
        return [
            AlterResult(item["user"], _error(item["error_code"]), item["error_message"])
            for item in r["results"]
        ]
