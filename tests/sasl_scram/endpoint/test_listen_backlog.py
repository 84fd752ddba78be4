"""``socket.listen.backlog.size``: each listener's accept queue, as Kafka's ``SocketServer``."""

from __future__ import annotations

import subprocess

import pytest

from sasl_scram._errors import ScramConfigError
from sasl_scram.endpoint import EndpointConfig
from tests.support.endpoint_harness import RunningEndpoint


def listen_backlog(port: int) -> int:
    """The kernel's backlog of the listening socket on ``port`` (``ss``'s Send-Q)."""
    out = subprocess.run(
        ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[2])


def somaxconn() -> int:
    """The kernel's cap on any listen queue (``net.core.somaxconn``)."""
    with open("/proc/sys/net/core/somaxconn") as f:
        return int(f.read())


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        # The default asks for 4096; the kernel gives at most somaxconn (4096
        # since Linux 5.4). 1000 reconnecting clients overflowed 512 in the soak.
        ({}, min(4096, somaxconn())),
        ({"socket.listen.backlog.size": "7"}, 7),
    ],
)
def test_listeners_use_the_configured_backlog(given: dict[str, str], expected: int) -> None:
    with RunningEndpoint(properties=given) as ep:
        assert listen_backlog(ep.port) == expected


def test_backlog_must_be_positive() -> None:
    with pytest.raises(ScramConfigError, match=r"socket.listen.backlog.size: must be at least 1"):
        EndpointConfig.from_properties(
            {"scram.credential.store.path": "x.db", "socket.listen.backlog.size": "0"}
        )
