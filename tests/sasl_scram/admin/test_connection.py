"""``KafkaConnection``: our tools' wire client pipelines SaslHandshake with the
first SaslAuthenticate (one round trip less per login)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_request
from sasl_scram.kafka import encode_response
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint


class WithholdingBroker:
    """A one-connection fake broker that answers ApiVersions, then says nothing
    until two more frames have arrived; a client that waits for the handshake
    answer before sending SaslAuthenticate would wait forever (and fail)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.received: list[int] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        conn, _ = self._listener.accept()
        conn.settimeout(5)
        frames = FrameBuffer(1 << 20)
        pending: list[bytes] = []
        with conn:
            while len(self.received) < 3:
                payload = frames.next_frame()
                if payload is None:
                    data = conn.recv(65536)
                    if not data:
                        return
                    frames.feed(data)
                    continue
                header, _, _ = decode_request(payload)
                self.received.append(header.api_key)
                if header.api_key == ApiKey.API_VERSIONS:
                    body = {
                        "error_code": 0,
                        "api_keys": [
                            {"api_key": ApiKey.SASL_HANDSHAKE, "min_version": 0, "max_version": 1},
                            {"api_key": ApiKey.API_VERSIONS, "min_version": 0, "max_version": 3},
                            {
                                "api_key": ApiKey.SASL_AUTHENTICATE,
                                "min_version": 0,
                                "max_version": 2,
                            },
                        ],
                        "throttle_time_ms": 0,
                    }
                    conn.sendall(
                        encode_response(
                            header.api_key, header.api_version, header.correlation_id, body
                        )
                    )
                else:
                    pending.append(
                        encode_response(
                            header.api_key,
                            header.api_version,
                            header.correlation_id,
                            {
                                "error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                "mechanisms": ["SCRAM-SHA-512"],
                            },
                        )
                    )
            # Both SASL frames are in: refuse the mechanism, as Kafka does, and close.
            conn.sendall(pending[0])

    def close(self) -> None:
        self._thread.join(10)
        self._listener.close()


@pytest.fixture
def withholding_broker() -> Iterator[WithholdingBroker]:
    broker = WithholdingBroker()
    yield broker
    broker.close()


def test_handshake_and_client_first_leave_together(withholding_broker: WithholdingBroker) -> None:
    with pytest.raises(KafkaConnectionError) as caught:
        KafkaConnection(
            f"127.0.0.1:{withholding_broker.port}",
            SaslCredentials(SCRAM_SHA_256, "alice", "alice-secret"),
            timeout=10,
        )
    assert withholding_broker.received == [
        ApiKey.API_VERSIONS,
        ApiKey.SASL_HANDSHAKE,
        ApiKey.SASL_AUTHENTICATE,
    ]
    # The handshake's refusal is what the user sees, not the unanswered login.
    assert str(caught.value) == "the broker does not enable SCRAM-SHA-256; it offers SCRAM-SHA-512"
    assert caught.value.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM


def test_refused_mechanism_reads_the_refusal_before_the_close() -> None:
    # The endpoint closes with our pipelined SaslAuthenticate unread; the
    # refusal must still reach the client every time.
    with RunningEndpoint(properties={"sasl.enabled.mechanisms": "SCRAM-SHA-512"}) as ep:
        for _ in range(25):
            with pytest.raises(KafkaConnectionError, match="does not enable SCRAM-SHA-256"):
                KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
        KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_512, *ALICE)).close()


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_pipelined_login_and_wrong_password(mechanism: object) -> None:
    with RunningEndpoint() as ep:
        conn = KafkaConnection(ep.bootstrap, SaslCredentials(mechanism, *ALICE))  # type: ignore[arg-type]
        metadata = conn.request(ApiKey.METADATA, {"topics": None})
        assert metadata["brokers"][0]["port"] == ep.port
        conn.close()
        with pytest.raises(KafkaConnectionError, match="invalid credentials") as caught:
            KafkaConnection(ep.bootstrap, SaslCredentials(mechanism, "alice", "wrong"))  # type: ignore[arg-type]
        assert caught.value.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED


RESET = b"<reset>"


def _peer_that(answer: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A listener whose one connection gets ``answer`` to its first request (then
    is closed), or nothing at all (``None``): not a Kafka listener."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            if answer == RESET:  # close with an RST: the socket is then not connected
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif answer is None:
                conn.recv(65536)  # until the client gives up
            else:
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


@pytest.mark.parametrize(
    ("answer", "timeout", "what"),
    [
        (None, 0.5, "no answer within 0.5 s"),
        # A timeout a loaded machine cannot reach before the peer answers.
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", 20.0, "malformed response"),
        (b"", 20.0, "closed the connection"),
        (RESET, 20.0, "connection failed"),
    ],
)
def test_a_peer_that_is_not_a_kafka_listener_is_named_so(
    answer: bytes | None, timeout: float, what: str
) -> None:
    listener, thread = _peer_that(answer)
    with listener:
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        credentials = SaslCredentials(SCRAM_SHA_256, *ALICE)
        with pytest.raises(KafkaConnectionError) as caught:
            KafkaConnection(address, credentials, timeout=timeout)
    thread.join(5)
    message = str(caught.value)
    assert what in message, message
    assert f"check that {address} is a Kafka listener" in message, message
    assert "security.protocol" in message, message


def test_a_raw_request_left_unanswered_is_named_so() -> None:
    # raw_request reads through the same socket errors as request(): a time-out
    # is a KafkaConnectionError that says how long it waited, not a bare
    # TimeoutError. Half a frame: the endpoint waits for the rest.
    with (
        RunningEndpoint() as ep,
        KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE), timeout=3.0) as conn,
        pytest.raises(KafkaConnectionError, match="no answer within 3 s"),
    ):
        conn.raw_request(struct.pack(">i", 100) + b"\x00\x03")
