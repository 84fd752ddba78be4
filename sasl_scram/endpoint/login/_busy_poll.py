"""Adaptive busy polling: keep the event loop spinning for a short window after
each network event instead of sleeping in ``epoll_wait``.

At low concurrency every step of a login waits on the other side. If the
server's core halts in between, the next request must wake it first: on a
virtual machine that is an inter-processor interrupt and a VM exit, tens of
microseconds per step, often more than the step's own work. Linux offers the
same trade in the kernel (``net.core.busy_poll``), but only for NIC queues,
not loopback, and only with ``CAP_NET_ADMIN``.

The poller re-arms a zero-delay callback while the window is open, which makes
both uvloop and asyncio poll with a zero timeout. It costs a core's worth of
CPU while traffic keeps coming and nothing once the server has been quiet for
the window. Other threads (lookups that read ZooKeeper, kazoo's own) still
run: they get the interpreter at Python's switch interval, as they do next to
any busy loop. Off unless ``scram.busy.poll.us`` is set.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["BusyPoller"]


class BusyPoller:
    """Spins ``loop`` until ``window_s`` seconds pass without a :meth:`poke`."""

    __slots__ = ("_active", "_loop", "_until", "_window")

    def __init__(self, loop: asyncio.AbstractEventLoop, window_s: float) -> None:
        if window_s <= 0:
            raise ValueError("the busy-poll window must be positive")
        self._loop = loop
        self._window = window_s
        self._until = 0.0
        self._active = False

    @property
    def active(self) -> bool:
        """Whether the loop is being kept awake now."""
        return self._active

    def poke(self, now: float) -> None:
        """Record network activity at ``now`` (``time.monotonic()``)."""
        self._until = now + self._window
        if not self._active:
            self._active = True
            self._loop.call_soon(self._spin)

    def _spin(self) -> None:
        if time.monotonic() < self._until:
            self._loop.call_soon(self._spin)
        else:
            self._active = False
