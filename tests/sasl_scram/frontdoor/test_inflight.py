"""In-flight tracking: FIFO order, the bound, and Produce acks=0 without a response."""

from __future__ import annotations

import struct
from collections import deque

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.frontdoor import InFlight
from sasl_scram.frontdoor import InFlightQueue
from sasl_scram.frontdoor import LocalRequest
from sasl_scram.frontdoor import PeerProtocolError
from sasl_scram.frontdoor import produce_acks


def produce_header_tail(
    version: int, acks: int, client_id: bytes | None = b"cli", txn: bytes | None = None
) -> bytes:
    """A Produce request from its client id up to and including ``acks``."""
    out = struct.pack(">h", -1) if client_id is None else struct.pack(">h", len(client_id))
    out += client_id or b""
    flexible = version >= 9
    if flexible:
        out += b"\x01\x05\x02ab"  # one header tagged field (tag 5, 2 bytes)
    if version >= 3:
        if flexible:
            out += b"\x00" if txn is None else bytes([len(txn) + 1]) + txn
        else:
            out += struct.pack(">h", -1) if txn is None else struct.pack(">h", len(txn)) + txn
    return out + struct.pack(">h", acks) + b"\xff" * 8


@pytest.mark.parametrize("version", [0, 2, 3, 8, 9, 11, 13])
@pytest.mark.parametrize("acks", [0, 1, -1])
@pytest.mark.parametrize("txn", [None, b"tx-1"])
def test_produce_acks_every_header_shape(version: int, acks: int, txn: bytes | None) -> None:
    data = produce_header_tail(version, acks, txn=txn)
    assert produce_acks(data, 0, len(data), version) == acks
    end = len(data) - 8  # just up to acks
    assert produce_acks(data, 0, end, version) == acks
    # One byte short of acks: not enough to tell, never a wrong answer.
    assert produce_acks(data, 0, end - 1, version) is None


def test_produce_acks_null_client_id() -> None:
    data = produce_header_tail(3, 0, client_id=None)
    assert produce_acks(data, 0, len(data), 3) == 0


def test_fifo_order_and_mismatch() -> None:
    queue = InFlightQueue(3)
    queue.push(InFlight(7, 3, 12))
    queue.push(InFlight(8, 0, 9, expects_response=False))  # acks=0: never answered
    queue.push(InFlight(9, 1, 15))
    assert len(queue) == 2
    assert queue.pop(7) == InFlight(7, 3, 12)
    with pytest.raises(PeerProtocolError, match="does not answer the oldest request 9"):
        queue.pop(10)
    assert queue.pop(9).api_key == 1
    with pytest.raises(PeerProtocolError, match="no request in flight"):
        queue.pop(9)


@settings(max_examples=300, deadline=None)
@given(
    max_in_flight=st.integers(min_value=1, max_value=6),
    # Pushes and pops alike, so that the queue often stays busy for long runs.
    steps=st.lists(
        st.sampled_from(["push", "push", "answer", "pop", "pop", "answers"]), max_size=300
    ),
)
def test_the_queue_behaves_as_a_bounded_fifo_whatever_the_order(
    max_in_flight: int, steps: list[str]
) -> None:
    """Against a deque as the model: what each step returns or raises, the
    length, and the answers count; the list under the queue never holds more
    than twice ``max_in_flight`` entries (answered ones are dropped)."""
    queue, model = InFlightQueue(max_in_flight), deque[InFlight]()
    for n, step in enumerate(steps):
        if step in ("push", "answer"):
            entry = InFlight(n, 3, 12, answer=b"\x00\x00\x00\x01" if step == "answer" else None)
            if len(model) >= max_in_flight:
                with pytest.raises(PeerProtocolError, match="requests in flight"):
                    queue.push(entry)
            else:
                queue.push(entry)
                model.append(entry)
        elif step == "pop":
            oldest = model[0] if model else None
            if oldest is None or oldest.answer is not None:
                with pytest.raises(PeerProtocolError):
                    queue.pop(-1 if oldest is None else oldest.correlation_id)
            else:
                assert queue.pop(oldest.correlation_id) is model.popleft()
        else:
            due = []
            while model and model[0].answer is not None:
                due.append(model.popleft())
            assert len(queue.pop_answers()) == len(due)
        assert len(queue) == len(model)
        assert queue.answers == sum(entry.answer is not None for entry in model)
        assert len(queue._entries) < 2 * max_in_flight
    assert queue.drain() == list(model)
    assert len(queue) == 0 and queue.answers == 0


def test_a_queue_that_never_empties_drops_what_was_answered() -> None:
    """A pipelining client keeps five requests in flight for good: the list
    under the queue still holds fewer than twice that many entries."""
    queue = InFlightQueue(5)
    for n in range(5):
        queue.push(InFlight(n, 0, 9))
    for n in range(5, 1000):
        assert queue.pop(n - 5).correlation_id == n - 5
        queue.push(InFlight(n, 0, 9))
        assert len(queue) == 5 and len(queue._entries) < 10
    assert [entry.correlation_id for entry in queue.drain()] == list(range(995, 1000))


def test_bounded() -> None:
    queue = InFlightQueue(2)
    queue.push(InFlight(1, 3, 1))
    queue.push(InFlight(2, 3, 1))
    assert len(queue) == 2
    with pytest.raises(PeerProtocolError, match="more than 2 requests in flight"):
        queue.push(InFlight(3, 3, 1))
    with pytest.raises(ValueError, match="at least 1"):
        InFlightQueue(0)


def test_answers_made_at_the_edge_leave_once_at_the_head() -> None:
    queue = InFlightQueue(4)
    queue.push(InFlight(1, 3, 12))
    queue.push(InFlight(2, 19, 7, answer=b"\x00\x00\x00\x02no"))
    assert queue.answers == 1 and queue.pop_answers() == []  # request 1 is first
    assert queue.pop(1).api_key == 3
    assert queue.pop_answers() == [b"\x00\x00\x00\x06\x00\x00\x00\x02no"]
    assert queue.answers == 0 and len(queue) == 0


def test_a_response_to_a_request_answered_at_the_edge_is_out_of_step() -> None:
    queue = InFlightQueue(4)
    queue.push(InFlight(5, 19, 7, answer=b"\x00\x00\x00\x05"))
    with pytest.raises(PeerProtocolError, match="does not answer"):
        queue.pop(5)


def test_an_entry_is_compared_by_its_fields_and_never_shows_its_answer() -> None:
    # An edge answer can be a CreateDelegationToken response with the token's HMAC.
    secret = b"\x00\x00\x00\x07hmac-of-a-token"
    entry = InFlight(7, 38, 3, answer=secret)
    assert entry == InFlight(7, 38, 3, answer=secret)
    assert entry != InFlight(7, 38, 3)
    assert entry != InFlight(7, 38, 3, answer=secret, expects_response=False)
    assert "hmac" not in repr(entry) and str(len(secret)) not in repr(entry)
    assert repr(entry) == (
        "InFlight(correlation_id=7, api_key=38, api_version=3, expects_response=True,"
        " answered at the edge)"
    )
    with pytest.raises(TypeError):
        hash(entry)  # mutable (filters set reshape and watch): never a key


def test_a_local_request_never_shows_its_bytes() -> None:
    # A request answered at the edge can be a SaslAuthenticate with a client proof.
    local = LocalRequest(InFlight(3, 36, 2), b"\x00\x24client-proof-bytes")
    assert "proof" not in repr(local)
    assert local == LocalRequest(InFlight(3, 36, 2), b"\x00\x24client-proof-bytes")
