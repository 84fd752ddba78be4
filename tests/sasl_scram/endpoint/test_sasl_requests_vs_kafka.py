"""ApiVersions, SaslHandshake and SaslAuthenticate where the login does not
expect them: a real ``kafka-scram serve`` answers as Kafka 4.x's broker does.

After a login, ``KafkaApis`` answers a SaslAuthenticate, and a SaslHandshake
that starts no re-authentication (``KafkaChannel.maybeBeginServerReauthentication``
returns false without a session expiry), with ILLEGAL_SASL_STATE (34) and the
connection stays open. ``ApiVersionsRequest.getErrorResponse`` lists API keys
only for UNSUPPORTED_VERSION: an INVALID_REQUEST answer (a bad client software
name, KIP-511) carries none.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.sasl_scram.endpoint.serve_process import API_VERSIONS
from tests.sasl_scram.endpoint.serve_process import SASL_AUTHENTICATE
from tests.sasl_scram.endpoint.serve_process import SASL_HANDSHAKE
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import seeded_serve_port
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker

GOOD_SOFTWARE = {"client_software_name": "t", "client_software_version": "1"}
BAD_SOFTWARE = {"client_software_name": "-bad-", "client_software_version": "1"}


@pytest.fixture(scope="module")
def serve_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    yield from seeded_serve_port(tmp_path_factory.mktemp("sasl-requests"))


def _kafka_port(broker: KafkaBroker) -> int:
    return int(broker.bootstrap.rsplit(":", 1)[1])


def _after_login(port: int) -> list[dict[str, Any]]:
    """SaslAuthenticate, then SaslHandshake, each followed by an ApiVersions
    that only an open connection answers; the four answers."""
    with Peer(port) as peer:
        login = peer.login(ADMIN_USER, ADMIN_PASSWORD)
        assert login["error_code"] == 0, login
        return [
            peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": b"x"}),
            peer.call(API_VERSIONS, 3, GOOD_SOFTWARE),
            peer.call(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"}),
            peer.call(API_VERSIONS, 3, GOOD_SOFTWARE),
        ]


def test_sasl_requests_after_the_login_get_34_and_the_connection_stays(
    kraft_broker: KafkaBroker, serve_port: int
) -> None:
    kafka = _after_login(_kafka_port(kraft_broker))
    ours = _after_login(serve_port)
    authenticate, _, handshake, _ = ours
    assert authenticate == kafka[0]
    assert authenticate["error_code"] == 34
    assert handshake == kafka[2] == {"error_code": 34, "mechanisms": []}
    assert [a["error_code"] for a in ours[1::2]] == [a["error_code"] for a in kafka[1::2]] == [0, 0]


def _invalid_software(port: int) -> dict[str, Any]:
    with Peer(port) as peer:
        answer = peer.call(API_VERSIONS, 3, BAD_SOFTWARE)
        # The state is kept: a good ApiVersions and a login still follow.
        assert peer.call(API_VERSIONS, 3, GOOD_SOFTWARE)["error_code"] == 0
        assert peer.login(ADMIN_USER, ADMIN_PASSWORD)["error_code"] == 0
        return answer


def test_api_versions_with_a_bad_software_name_lists_no_keys(
    kraft_broker: KafkaBroker, serve_port: int
) -> None:
    kafka = _invalid_software(_kafka_port(kraft_broker))
    ours = _invalid_software(serve_port)
    assert ours == kafka
    assert (ours["error_code"], ours["api_keys"]) == (42, [])
