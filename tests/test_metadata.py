"""What the package says of itself: its version from the installed metadata, and
the licence file the metadata names."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import sasl_scram
import tokenauth
from sasl_scram import SCRAM_SHA_256
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.endpoint.login._connection import _valid_software
from sasl_scram.endpoint.proxy._upstream import UpstreamLink
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.endpoint.proxy._upstream import look_at_cluster
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import client_software
from sasl_scram.kafka import decode_request

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_comes_from_the_installed_metadata() -> None:
    assert sasl_scram.__version__ == version("kafka-scram")
    assert tokenauth.__version__ == sasl_scram.__version__


def test_a_tree_never_installed_has_a_version_that_says_so() -> None:
    # The metadata lookup fails as it does for sources that pip never installed.
    code = (
        "import importlib.metadata as m\n"
        "def missing(name):\n"
        "    raise m.PackageNotFoundError(name)\n"
        "m.version = missing\n"
        "import sasl_scram, tokenauth\n"
        "print(sasl_scram.__version__, tokenauth.__version__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.split() == ["0+unknown", "0+unknown"]


def test_the_licence_file_is_the_one_the_metadata_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    (name,) = project["license-files"]
    text = (ROOT / name).read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice


def _first_request(connect: Callable[[int], object]) -> dict[str, Any]:
    """The body of the first request ``connect(port)`` sends, to a peer that
    reads it and hangs up."""
    got: dict[str, Any] = {}
    with socket.create_server(("127.0.0.1", 0)) as server:

        def answer_nothing() -> None:
            conn, _ = server.accept()
            with conn:
                frames = FrameBuffer(1 << 20)
                while (payload := frames.next_frame()) is None:
                    data = conn.recv(65536)
                    if not data:
                        return
                    frames.feed(data)
                header, _, body = decode_request(payload)
                got.update(body, api_key=header.api_key)

        peer = threading.Thread(target=answer_nothing, daemon=True)
        peer.start()
        with contextlib.suppress(KafkaConnectionError, UpstreamUnavailable):
            connect(server.getsockname()[1])
        peer.join(10)
    return got


def _admin(port: int) -> None:
    KafkaConnection(f"127.0.0.1:{port}", SaslCredentials(SCRAM_SHA_256, "u", "p"), timeout=5)


def _front_door(port: int) -> None:
    asyncio.run(look_at_cluster(UpstreamLink(None, None, 5.0), [("127.0.0.1", port)]))


@pytest.mark.parametrize("connect", [_admin, _front_door], ids=["admin", "front-door"])
def test_kafka_is_told_this_version_in_the_characters_it_accepts(
    monkeypatch: pytest.MonkeyPatch, connect: Callable[[int], object]
) -> None:
    """ApiVersions v3+ names the client software (KIP-511); a broker refuses a
    version outside its pattern, such as a local version's '+'."""
    monkeypatch.setattr(sasl_scram, "__version__", "9.9.9+local.1")
    body = _first_request(connect)
    assert body["api_key"] == ApiKey.API_VERSIONS
    assert body["client_software_name"] == "kafka-scram"
    assert body["client_software_version"] == "9.9.9-local.1"
    # The check a broker makes (as the endpoint's own ApiVersions does).
    assert _valid_software(body["client_software_name"], body["client_software_version"])


@pytest.mark.parametrize(
    ("installed", "told"),
    [
        ("0.1.0", "0.1.0"),
        ("0+unknown", "0-unknown"),
        ("1.0.dev3+g1a2b.d2026", "1.0.dev3-g1a2b.d2026"),
        ("+", "unknown"),
    ],
)
def test_the_version_told_keeps_what_kafka_accepts(installed: str, told: str) -> None:
    assert client_software(installed) == {
        "client_software_name": "kafka-scram",
        "client_software_version": told,
    }
