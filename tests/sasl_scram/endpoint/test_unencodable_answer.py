"""A handler whose answer cannot be encoded closes its connection at once,
over a real socket: the client is not left waiting for an answer that never
comes, and the reason is logged without the body's values."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from sasl_scram.endpoint import EndpointExtension
from sasl_scram.endpoint import RequestContext
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint

METADATA = 3


async def _out_of_range(ctx: RequestContext, version: int, body: dict[str, Any]) -> dict[str, Any]:
    # throttle_time_ms is an int32: this answer cannot be written.
    return {"throttle_time_ms": 2**40, "cluster_id": "secret-looking-value", "brokers": []}


def test_an_unencodable_answer_closes_the_connection_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rogue = EndpointExtension(name="rogue", handlers={METADATA: _out_of_range})
    caplog.set_level(logging.INFO)
    with RunningEndpoint(extensions=[rogue]) as ep, Peer(ep.port, timeout=10) as peer:
        assert peer.login(*ALICE)["error_code"] == 0
        started = time.monotonic()
        peer.send(METADATA, 12, {"topics": None})
        assert peer.closed()
        assert time.monotonic() - started < 5
    [logged] = [r for r in caplog.records if "could not be encoded" in r.getMessage()]
    assert logged.levelno == logging.ERROR
    assert "the answer to Metadata v12 could not be encoded" in logged.getMessage()
    assert "secret-looking-value" not in caplog.text and "1099511627776" not in caplog.text
