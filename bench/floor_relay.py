"""The Python floor of the front-door bench's side-by-side row: the smallest
TCP byte relay uvloop allows, run by the interpreter that runs serve.

What ``floor_relay.c`` is for any proxy, this is for a proxy written in Python
on uvloop: each chunk uvloop reads is written to the other side at once, with
one ``write`` call, no frame parsed and no byte changed. Serve's CPU per MB
above this one's is serve's own work per request (framing, the filter seam,
bounds and accounting); this one's above the C relay's is the interpreter's
and uvloop's per event.

Flow control as asyncio's streams do it: a side whose peer's transport is
over its high-water mark stops being read until the peer drains. A client's
bytes that come before its upstream connection opens are held (at most
``MAX_EARLY``, then the pair is closed). End of stream or an error on either
side closes both.

Usage and output as ``floor_relay.c``'s: ``python floor_relay.py LISTEN_PORT
UPSTREAM_IPV4 UPSTREAM_PORT`` prints ``ready PORT`` once listening, and on
SIGTERM or SIGINT its counters (``pairs=N to_upstream=BYTES to_client=BYTES
partial_writes=0 refused=0``), then exits 0. Standard library and uvloop only.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import cast

# What a client may send before its upstream connection is open (a login's
# first requests are a few hundred bytes).
MAX_EARLY = 1 << 20


class Side(asyncio.Protocol):
    """One end of a relayed pair: what it reads goes to its peer."""

    def __init__(self, counters: dict[str, int], key: str) -> None:
        self.counters = counters
        self.key = key  # the counter of what this side reads
        self.transport: asyncio.Transport | None = None
        self.peer: Side | None = None
        self.early: list[bytes] = []  # a client's bytes before its upstream opened
        self.early_size = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A TCP transport (uvloop's is not a subclass of asyncio.Transport).
        self.transport = cast("asyncio.Transport", transport)

    def data_received(self, data: bytes) -> None:
        self.counters[self.key] += len(data)
        peer = self.peer
        if peer is not None and peer.transport is not None:
            peer.transport.write(data)
            return
        self.early.append(data)
        self.early_size += len(data)
        if self.early_size > MAX_EARLY:
            self.close_both()

    def joined(self, peer: Side) -> None:
        """The other side is connected: what was held goes first."""
        self.peer = peer
        if self.early and peer.transport is not None:
            peer.transport.writelines(self.early)
        self.early.clear()

    def eof_received(self) -> bool:
        self.close_both()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.close_both()

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def close_both(self) -> None:
        for side in (self, self.peer):
            if side is not None and side.transport is not None:
                side.transport.close()


async def relay(listen_port: int, host: str, port: int) -> dict[str, int]:
    """Relays until SIGTERM or SIGINT; the counters."""
    loop = asyncio.get_running_loop()
    counters = {"pairs": 0, "to_upstream": 0, "to_client": 0, "partial_writes": 0, "refused": 0}
    opening: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak references

    async def connect(client: Side) -> None:
        try:
            _, upstream = await loop.create_connection(
                lambda: Side(counters, "to_client"), host, port
            )
        except OSError:
            counters["refused"] += 1
            client.close_both()
            return
        upstream.peer = client
        client.joined(upstream)

    def accepted() -> Side:
        counters["pairs"] += 1
        client = Side(counters, "to_upstream")
        task = loop.create_task(connect(client))
        opening.add(task)
        task.add_done_callback(opening.discard)
        return client

    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    server = await loop.create_server(accepted, "127.0.0.1", listen_port)
    print(f"ready {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await stop.wait()
    return counters


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit("usage: floor_relay.py LISTEN_PORT UPSTREAM_IPV4 UPSTREAM_PORT")
    listen_port, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    import uvloop

    counters = uvloop.run(relay(listen_port, host, port))
    print(" ".join(f"{key}={value}" for key, value in counters.items()), flush=True)


if __name__ == "__main__":
    main()
