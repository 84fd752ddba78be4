"""How this distribution's Kafka clients name themselves to a broker."""

from __future__ import annotations

import re

import sasl_scram

__all__ = ["SOFTWARE_NAME", "SOFTWARE_PATTERN", "client_software"]

SOFTWARE_NAME = "kafka-scram"
#: What Kafka's ApiVersionsRequest.isValid accepts as a client software name or
#: version (KIP-511); a broker answers INVALID_REQUEST to anything else.
SOFTWARE_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
_OTHER = re.compile(r"[^a-zA-Z0-9\-.]")


def client_software(version: str | None = None) -> dict[str, str]:
    """ApiVersions v3+'s ``client_software_name`` and ``client_software_version``
    (KIP-511): this package and ``version`` (default: the installed one,
    ``sasl_scram.__version__``, as ``kafka-scram --version`` prints it).

    A local version's ``+`` (``0+unknown``, ``1.0.dev3+g1a2b``) is outside
    the characters Kafka accepts: each such character is told as ``-``.
    """
    told = _OTHER.sub("-", sasl_scram.__version__ if version is None else version).strip("-.")
    if not SOFTWARE_PATTERN.fullmatch(told):
        told = "unknown"
    return {"client_software_name": SOFTWARE_NAME, "client_software_version": told}
