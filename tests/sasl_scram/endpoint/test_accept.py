"""The accept loop's own costs: an accepted connection becomes a transport
without an asyncio Task, on either event loop."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import pytest
import uvloop

from sasl_scram.endpoint.runtime._accept import Acceptor


class _Recorder(asyncio.Protocol):
    def __init__(self, made: asyncio.Future[asyncio.BaseTransport]) -> None:
        self.made = made

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.made.set_result(transport)


async def _accept_one() -> tuple[int, int]:
    """Tasks alive while a connection is accepted and made, and the peer's port seen."""
    loop = asyncio.get_running_loop()
    made: asyncio.Future[asyncio.BaseTransport] = loop.create_future()
    tasks_seen: list[int] = []
    original = loop.create_task

    def counting(*args: object, **kwargs: object) -> asyncio.Task[object]:
        tasks_seen.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    loop.create_task = counting  # type: ignore[method-assign,assignment]
    acceptor = Acceptor(loop, lambda: _Recorder(made), ("127.0.0.1", 0), name="test", backlog=8)
    try:
        port = acceptor.sockets[0].getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        try:
            transport = await asyncio.wait_for(made, 10)
            peer = transport.get_extra_info("peername")
            assert peer == client.getsockname()
            assert acceptor.pending == 0
            transport.close()
        finally:
            client.close()
    finally:
        acceptor.close()
        loop.create_task = original  # type: ignore[method-assign]
    return len(tasks_seen), peer[1]


@pytest.mark.parametrize("new_loop", [uvloop.new_event_loop, asyncio.new_event_loop])
def test_an_accepted_connection_is_made_without_a_task(
    new_loop: Callable[[], asyncio.AbstractEventLoop],
) -> None:
    loop = new_loop()
    try:
        tasks, port = loop.run_until_complete(_accept_one())
    finally:
        loop.close()
    assert port > 0
    assert tasks == 0
