"""A KIP-554 request sent after SaslHandshake v1 but before the login: a real
``kafka-scram serve`` answers as Kafka 4.x's broker does.

``SaslServerAuthenticator.handleSaslToken`` answers any request other than
SaslAuthenticate with that request's own ``getErrorResponse`` for an
``IllegalSaslStateException`` (error 34) and closes the connection: per user
for AlterUserScramCredentials, at top level and per requested user for
DescribeUserScramCredentials.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.sasl_scram.endpoint.serve_process import SASL_HANDSHAKE
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import seeded_serve_port
from tests.support.kafka_broker import KafkaBroker

DESCRIBE, ALTER = 50, 51

REQUESTS: dict[str, tuple[int, dict[str, Any]]] = {
    # Users out of order and one twice: Kafka sorts the distinct names.
    "alter": (
        ALTER,
        {
            "deletions": [{"name": "bob", "mechanism": 1}, {"name": "alice", "mechanism": 2}],
            "upsertions": [
                {
                    "name": "alice",
                    "mechanism": 1,
                    "iterations": 4096,
                    "salt": b"salt",
                    "salted_password": b"x" * 32,
                }
            ],
        },
    ),
    "describe": (DESCRIBE, {"users": [{"name": "bob"}, {"name": "alice"}]}),
    "describe-none": (DESCRIBE, {"users": []}),
}


@pytest.fixture(scope="module")
def serve_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    yield from seeded_serve_port(tmp_path_factory.mktemp("before-login"))


def _before_login(port: int, key: int, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The answer to ``key`` sent right after a v1 handshake, and whether the
    connection was closed after it."""
    with Peer(port) as peer:
        shake = peer.call(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
        assert shake["error_code"] == 0, shake
        answer = peer.call(key, 0, body)
        return answer, peer.closed()


@pytest.mark.parametrize("case", REQUESTS, ids=REQUESTS.keys())
def test_a_scram_request_before_the_login_is_answered_as_kafka_answers_it(
    kraft_broker: KafkaBroker, serve_port: int, case: str
) -> None:
    key, body = REQUESTS[case]
    kafka = _before_login(int(kraft_broker.bootstrap.rsplit(":", 1)[1]), key, body)
    ours = _before_login(serve_port, key, body)
    assert ours == kafka
    answer, closed = ours
    assert closed
    name = "ALTER" if key == ALTER else "DESCRIBE"
    message = (
        f"Unexpected Kafka request of type {name}_USER_SCRAM_CREDENTIALS during SASL "
        "authentication."
    )
    if case == "alter":
        assert answer["results"] == [
            {"user": user, "error_code": 34, "error_message": message} for user in ("alice", "bob")
        ]
    else:
        assert (answer["error_code"], answer["error_message"]) == (34, message)
        assert len(answer["results"]) == len(body["users"])
