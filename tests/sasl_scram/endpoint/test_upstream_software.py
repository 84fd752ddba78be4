"""The front door's ApiVersions to the cluster names our software as KIP-511
allows: a broker refuses a name or version outside ApiVersionsRequest's pattern."""

from __future__ import annotations

import re

import pytest

import sasl_scram
from sasl_scram.endpoint.proxy._upstream import _SOFTWARE
from sasl_scram.endpoint.proxy._upstream import software_version

KIP_511 = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@pytest.mark.parametrize(
    ("version", "sent"),
    [
        ("0.1.0", "0.1.0"),
        ("0+unknown", "0-unknown"),
        ("1.2.dev3+g1a2b", "1.2.dev3-g1a2b"),
        ("+", "unknown"),
    ],
)
def test_the_version_sent_is_one_a_broker_accepts(version: str, sent: str) -> None:
    assert software_version(version) == sent
    assert KIP_511.fullmatch(sent)


def test_the_installed_version_is_sent() -> None:
    assert _SOFTWARE["client_software_version"] == software_version(sasl_scram.__version__)
