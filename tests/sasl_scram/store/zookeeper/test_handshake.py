"""The per-attempt bound on kazoo's connect and handshake: its doubling rule, and
the handler that applies it, on a real socket that accepts and never answers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import kazoo.client
import kazoo.handlers.threading
import kazoo.retry
import pytest

from sasl_scram.store.zookeeper._handshake import FIRST_ATTEMPT_S
from sasl_scram.store.zookeeper._handshake import HandshakeBound
from sasl_scram.store.zookeeper._handshake import bounded_handler
from sasl_scram.store.zookeeper._session import new_client
from tests.support.polling import wait_until

KAZOO_TIMEOUT = 30.0  # what kazoo allows a handshake with a 30 s session and one host


def test_an_attempt_waits_the_bound_or_kazoos_timeout_whichever_is_shorter() -> None:
    bound = HandshakeBound()
    assert bound.limit(KAZOO_TIMEOUT) == FIRST_ATTEMPT_S
    assert bound.limit(0.25) == 0.25
    assert bound.limit(None) == FIRST_ATTEMPT_S


def test_each_attempt_that_runs_out_doubles_the_bound_up_to_kazoos() -> None:
    bound = HandshakeBound()
    waits = []
    for _ in range(7):
        waits.append(bound.limit(KAZOO_TIMEOUT))
        bound.ran_out(KAZOO_TIMEOUT)
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_a_session_resets_the_bound() -> None:
    bound = HandshakeBound()
    bound.ran_out(KAZOO_TIMEOUT)
    bound.ran_out(KAZOO_TIMEOUT)
    bound.established()
    assert bound.limit(KAZOO_TIMEOUT) == FIRST_ATTEMPT_S


def test_kazoos_timeout_below_the_first_bound_never_lowers_it() -> None:
    bound = HandshakeBound()
    bound.ran_out(0.5)
    assert bound.current == FIRST_ATTEMPT_S


def test_the_first_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        HandshakeBound(0)


def test_each_client_s_handler_has_a_bound_of_its_own() -> None:
    first, second = bounded_handler(kazoo), bounded_handler(kazoo)
    first.bound.ran_out(KAZOO_TIMEOUT)
    assert second.bound.current == FIRST_ATTEMPT_S
    assert type(first) is type(second)  # one class per process


@pytest.fixture
def black_hole() -> Iterator[tuple[str, int]]:
    """A listener that accepts (the kernel does) and never answers nor closes."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield ("127.0.0.1", listener.getsockname()[1])


def _timed_select(handler: object, sock: object) -> tuple[list[object], float]:
    started = time.monotonic()
    readable = handler.select([sock], [], [], KAZOO_TIMEOUT)[0]  # type: ignore[attr-defined]
    return readable, time.monotonic() - started


def test_the_handler_gives_an_unanswered_handshake_a_second_then_two(
    black_hole: tuple[str, int],
) -> None:
    handler = bounded_handler(kazoo)
    assert isinstance(handler, kazoo.handlers.threading.SequentialThreadingHandler)
    sock = handler.create_connection(address=black_hole, timeout=KAZOO_TIMEOUT)
    try:
        readable, waited = _timed_select(handler, sock)
        assert readable == [] and 0.9 < waited < 1.5
        readable, waited = _timed_select(handler, sock)
        assert readable == [] and 1.9 < waited < 2.5
    finally:
        sock.close()


def test_the_connection_loop_marks_the_session_up_and_is_not_bounded(
    black_hole: tuple[str, int],
) -> None:
    handler = bounded_handler(kazoo)
    sock = handler.create_connection(address=black_hole, timeout=KAZOO_TIMEOUT)
    wake_read, wake_write = socket.socketpair()
    try:
        _timed_select(handler, sock)  # ran out: the bound is now 2 s
        wake_write.send(b"x")  # kazoo's connection loop selects on its wake-up pipe too
        assert handler.select([sock, wake_read], [], [], KAZOO_TIMEOUT)[0] == [wake_read]
        assert handler.bound.current == FIRST_ATTEMPT_S
        started = time.monotonic()
        assert handler.select([sock], [], [], 0.2)[0] == []  # a later read: kazoo's own timeout
        assert time.monotonic() - started >= 0.2
        assert handler.bound.current == FIRST_ATTEMPT_S
    finally:
        sock.close()
        wake_read.close()
        wake_write.close()


def test_a_connect_nobody_accepts_gives_up_after_the_bound_and_doubles_it() -> None:
    """A listener whose accept queue is full drops new SYNs, as a host that is
    down or partitioned does: the connect waits the bound, not kazoo's 30 s."""
    with socket.create_server(("127.0.0.1", 0), backlog=0) as listener:
        address = listener.getsockname()
        with socket.create_connection(address):  # fills the queue
            handler = bounded_handler(kazoo)
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                handler.create_connection(address=address, timeout=KAZOO_TIMEOUT)
            assert 0.9 < time.monotonic() - started < 1.5
            assert handler.bound.current == 2 * FIRST_ATTEMPT_S


def test_a_real_session_ends_the_attempt_so_later_reads_are_not_bounded(
    zookeeper_hosts: str,
) -> None:
    """Against real ZooKeeper, through the kazoo installed: once the session is
    up, kazoo's connection loop has marked the attempt over (were it not, every
    later read would be cut to the bound). Catches a kazoo that selects otherwise."""
    client = new_client(kazoo, zookeeper_hosts, session_timeout=10.0, options={})
    assert client.handler.handshaking is False  # nothing attempted yet
    client.start(10)
    try:
        assert wait_until(lambda: not client.handler.handshaking, 5) is not None
        assert client.handler.bound.current == FIRST_ATTEMPT_S
        client.ensure_path("/handshake")
        assert client.exists("/handshake") is not None
    finally:
        client.stop()
        client.close()
