"""The protocol adapter answers frames that arrived together with one write."""

from __future__ import annotations

import asyncio
from typing import Any

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import ScramEndpoint
from sasl_scram.endpoint.login._protocol import ConnectionProtocol
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.store import InMemoryCredentialStore
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import seed_users


class RecordingTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


def endpoint(**props: str) -> ScramEndpoint:
    store = InMemoryCredentialStore()
    seed_users(store)
    config = EndpointConfig.from_properties(
        {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "scram.credential.store.path": "x.db",
            **props,
        }
    )
    return ScramEndpoint(config, store)


def frames_of(data: bytes) -> list[bytes]:
    buffer = FrameBuffer(1 << 20)
    buffer.feed(data)
    out = []
    while (payload := buffer.next_frame()) is not None:
        out.append(payload)
    return out


def test_pipelined_handshake_and_client_first_get_one_write() -> None:
    async def scenario() -> tuple[list[bytes], bool]:
        ep = endpoint()
        await ep.start()
        protocol = ConnectionProtocol(ep, ep.config.listeners[0], "test-1")
        transport = RecordingTransport()
        protocol.connection_made(transport)
        client = ScramClient(SCRAM_SHA_256, *ALICE)
        protocol.data_received(
            encode_request(ApiKey.SASL_HANDSHAKE, 1, 1, "t", {"mechanism": "SCRAM-SHA-256"})
            + encode_request(
                ApiKey.SASL_AUTHENTICATE, 2, 2, "t", {"auth_bytes": client.client_first()}
            )
        )
        writes = list(transport.writes)
        (handshake, server_first) = frames_of(writes[0])
        assert decode_response(ApiKey.SASL_HANDSHAKE, 1, handshake)[1]["error_code"] == 0
        _, body = decode_response(ApiKey.SASL_AUTHENTICATE, 2, server_first)
        final = client.receive_server_first(body["auth_bytes"])
        protocol.data_received(
            encode_request(ApiKey.SASL_AUTHENTICATE, 2, 3, "t", {"auth_bytes": final})
        )
        _, body = decode_response(ApiKey.SASL_AUTHENTICATE, 2, frames_of(transport.writes[1])[0])
        client.receive_server_final(body["auth_bytes"])
        protocol.connection_lost(None)
        await ep.close()
        return writes, client.complete

    writes, complete = asyncio.run(scenario())
    assert len(writes) == 1
    assert complete


def test_answers_before_a_close_are_written_before_closing() -> None:
    async def scenario() -> RecordingTransport:
        ep = endpoint(**{"sasl.enabled.mechanisms": "SCRAM-SHA-512"})
        await ep.start()
        protocol = ConnectionProtocol(ep, ep.config.listeners[0], "test-2")
        transport = RecordingTransport()
        protocol.connection_made(transport)
        protocol.data_received(
            encode_request(ApiKey.SASL_HANDSHAKE, 1, 1, "t", {"mechanism": "SCRAM-SHA-256"})
        )
        protocol.connection_lost(None)
        await ep.close()
        return transport

    transport = asyncio.run(scenario())
    assert transport.closed
    (refusal,) = frames_of(b"".join(transport.writes))
    _, body = decode_response(ApiKey.SASL_HANDSHAKE, 1, refusal)
    assert body["error_code"] == 33 and body["mechanisms"] == ["SCRAM-SHA-512"]


def _log_in(protocol: ConnectionProtocol, transport: RecordingTransport) -> None:
    client = ScramClient(SCRAM_SHA_256, *ALICE)
    protocol.data_received(
        encode_request(ApiKey.SASL_HANDSHAKE, 1, 1, "t", {"mechanism": "SCRAM-SHA-256"})
        + encode_request(ApiKey.SASL_AUTHENTICATE, 2, 2, "t", {"auth_bytes": client.client_first()})
    )
    _, server_first = frames_of(transport.writes[-1])
    _, body = decode_response(ApiKey.SASL_AUTHENTICATE, 2, server_first)
    final = client.receive_server_first(body["auth_bytes"])
    protocol.data_received(
        encode_request(ApiKey.SASL_AUTHENTICATE, 2, 3, "t", {"auth_bytes": final})
    )
    (answer,) = frames_of(transport.writes[-1])
    _, body = decode_response(ApiKey.SASL_AUTHENTICATE, 2, answer)
    client.receive_server_final(body["auth_bytes"])
    assert client.complete


def test_a_big_request_is_buffered_on_the_loop_and_decoded_in_one_thread_hop(
    monkeypatch: Any,
) -> None:
    """A super user's 1 MB request arrives in 64 KiB reads: the reads are buffered
    as they come, and only the read that completes the frame goes to a thread."""
    hops: list[int] = []
    original = asyncio.to_thread

    # Counted where the protocol hands a read to a thread: asyncio.to_thread is
    # looked up at each call, compiled or not (a method of the compiled class is not).
    async def counting(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        if getattr(func, "__name__", "") == "receive":
            hops.append(len(args[0]))
        return await original(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counting)
    topics = [{"name": f"t{i:05d}" + "x" * 200} for i in range(5000)]
    request = encode_request(ApiKey.METADATA, 4, 4, "t", {"topics": topics})
    assert len(request) > 1_000_000

    async def scenario() -> dict[str, Any]:
        ep = endpoint(**{"super.users": "User:alice"})
        await ep.start()
        protocol = ConnectionProtocol(ep, ep.config.listeners[0], "test-3")
        transport = RecordingTransport()
        protocol.connection_made(transport)
        _log_in(protocol, transport)
        answered = len(transport.writes)
        for start in range(0, len(request), 65536):
            protocol.data_received(request[start : start + 65536])
            while protocol.busy:  # as a real transport, which pauses reading meanwhile
                await asyncio.sleep(0.001)
        while len(transport.writes) == answered:
            await asyncio.sleep(0.001)
        frames = FrameBuffer(1 << 24)  # the answer is bigger than frames_of allows
        frames.feed(b"".join(transport.writes[answered:]))
        answer = frames.next_frame()
        assert answer is not None and len(frames) == 0
        protocol.connection_lost(None)
        await ep.close()
        return decode_response(ApiKey.METADATA, 4, answer)[1]

    body = asyncio.run(scenario())
    assert len(body["topics"]) == 5000
    assert len(hops) == 1
