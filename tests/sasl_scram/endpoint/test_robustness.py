"""A bounded loopback load test and a fuzz test of framing against a running server."""

from __future__ import annotations

import asyncio
import random
import socket
import time

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SaltedPasswordCache
from sasl_scram import ScramClient
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint

CONNECTIONS = 1000


async def authenticate(host: str, port: int, cache: SaltedPasswordCache) -> bool:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        frames = FrameBuffer(1 << 20)

        async def roundtrip(
            key: int, version: int, corr: int, body: dict[str, object]
        ) -> dict[str, object]:
            writer.write(encode_request(key, version, corr, "load", body))
            await writer.drain()
            while (payload := frames.next_frame()) is None:
                data = await reader.read(65536)
                if not data:
                    raise ConnectionError("closed")
                frames.feed(data)
            got, response = decode_response(key, version, payload)
            assert got == corr
            return response

        await roundtrip(17, 1, 1, {"mechanism": "SCRAM-SHA-256"})
        client = ScramClient(SCRAM_SHA_256, *ALICE, key_cache=cache)
        r1 = await roundtrip(36, 2, 2, {"auth_bytes": client.client_first()})
        server_first = r1["auth_bytes"]
        assert isinstance(server_first, bytes)
        r2 = await roundtrip(36, 2, 3, {"auth_bytes": client.receive_server_first(server_first)})
        server_final = r2["auth_bytes"]
        assert isinstance(server_final, bytes)
        client.receive_server_final(server_final)
        return client.complete
    finally:
        writer.close()
        await writer.wait_closed()


@pytest.mark.slow
def test_thousand_concurrent_connections_leave_nothing_behind() -> None:
    with RunningEndpoint() as ep:
        cache = SaltedPasswordCache()

        async def run_all() -> list[bool]:
            sem = asyncio.Semaphore(CONNECTIONS)

            async def one() -> bool:
                async with sem:
                    return await asyncio.wait_for(authenticate(ep.host, ep.port, cache), 60)

            return await asyncio.gather(*(one() for _ in range(CONNECTIONS)))

        results = asyncio.run(run_all())
        assert results.count(True) == CONNECTIONS
        deadline = time.monotonic() + 10
        while ep.connection_count() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ep.connection_count() == 0

        async def server_tasks() -> int:
            return len([t for t in asyncio.all_tasks() if not t.done()])

        # Only the test's own helper task remains on the server loop.
        assert ep.call(server_tasks()) <= 1


def _garbage(rng: random.Random) -> bytes:
    choice = rng.randrange(6)
    if choice == 0:
        return rng.randbytes(rng.randrange(1, 64))
    if choice == 1:  # a huge announced frame
        return (2**31 - 1).to_bytes(4, "big") + rng.randbytes(8)
    if choice == 2:  # a valid header with a corrupt body
        return (12).to_bytes(4, "big") + bytes([0, 17, 0, 1, 0, 0, 0, 1, 0, 0]) + rng.randbytes(2)
    if choice == 3:  # negative size
        return b"\xff\xff\xff\xfe"
    if choice == 4:  # unsupported API version of SaslAuthenticate
        return encode_request(36, 2, 1, "f", {"auth_bytes": b"x"})[:-3] + b"\x00"
    data = encode_request(
        18, 3, 1, "fuzz", {"client_software_name": "a", "client_software_version": "1"}
    )
    pos = rng.randrange(4, len(data))
    return data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :]


def test_fuzzed_frames_do_not_disturb_other_connections() -> None:
    rng = random.Random(7)
    with RunningEndpoint() as ep:
        cache = SaltedPasswordCache()
        bystander = KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
        for _ in range(300):
            with socket.create_connection((ep.host, ep.port), timeout=5) as s:
                s.sendall(_garbage(rng))
                s.shutdown(socket.SHUT_WR)
                try:
                    while s.recv(65536):
                        pass
                except OSError:
                    pass
        # The connection opened before the fuzzing still works, a new client still
        # authenticates, and nothing leaked.
        metadata = bystander.request(3, {"topics": None})
        assert metadata["brokers"][0]["port"] == ep.port
        bystander.close()
        assert asyncio.run(authenticate(ep.host, ep.port, cache))
        deadline = time.monotonic() + 10
        while ep.connection_count() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ep.connection_count() == 0


def test_slow_client_times_out_before_authenticating() -> None:
    props = {"scram.authentication.timeout.ms": "300"}
    with (
        RunningEndpoint(properties=props) as ep,
        socket.create_connection((ep.host, ep.port), timeout=5) as s,
    ):
        s.sendall(b"\x00\x00")  # half a size prefix, then silence
        start = time.monotonic()
        assert s.recv(1) == b""  # the server closes the connection
        assert time.monotonic() - start < 3


def test_lookups_that_may_block_run_off_the_event_loop() -> None:
    """A lazy ZooKeeper cache miss must not stall every connection on the loop."""
    import threading

    from sasl_scram.store import InMemoryCredentialStore

    loop_threads: set[int] = set()

    class SlowLazyStore(InMemoryCredentialStore):
        lookup_may_block = True

        def lookup(self, user, mechanism):  # type: ignore[no-untyped-def]
            loop_threads.add(threading.get_ident())
            time.sleep(0.2)  # a ZooKeeper read
            return super().lookup(user, mechanism)

    store = SlowLazyStore()
    from tests.support.endpoint_harness import seed_users

    seed_users(store)
    with RunningEndpoint(store=store) as ep:

        async def loop_thread() -> int:
            return threading.get_ident()

        event_loop_thread = ep.call(loop_thread())
        with KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE)) as slow:
            assert slow.request(3, {"topics": None})["brokers"]
        assert loop_threads and event_loop_thread not in loop_threads
