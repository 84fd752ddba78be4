"""A process's own TCP connections, read from Linux's ``/proc`` (IPv4, loopback).

``/proc/<pid>/net/tcp`` lists every socket of the network namespace; keeping
only the inodes the process's file descriptors hold leaves its own
connections: the peer's side of the same connections, and other processes'
connections, do not count.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["established_to"]

_ESTABLISHED = "01"


def _held_sockets(pid: int | str) -> set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def established_to(port: int, pid: int | str = "self") -> dict[str, int]:
    """Socket inode -> local port of ``pid``'s established connections to 127.0.0.1:``port``."""
    held = _held_sockets(pid)
    remote = f"0100007F:{port:04X}"
    found = {}
    for row in Path(f"/proc/{pid}/net/tcp").read_text(encoding="ascii").splitlines()[1:]:
        fields = row.split()
        local, peer, state, inode = fields[1], fields[2], fields[3], fields[9]
        if state == _ESTABLISHED and peer == remote and inode in held:
            found[inode] = int(local.split(":")[1], 16)
    return found
