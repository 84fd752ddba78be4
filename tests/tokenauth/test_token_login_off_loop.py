"""A new delegation token's first login derives its keys (PBKDF2) off
the event loop, so other connections are not held up meanwhile."""

from __future__ import annotations

import threading

import pytest

from sasl_scram import SCRAM_SHA_512
from sasl_scram import KafkaPrincipal
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension
from tokenauth import TokenCache
from tokenauth._manager import TokenRequester


def test_first_token_login_derives_keys_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    derived_on: list[threading.Thread] = []
    original = TokenCache._derive

    def recording(self: TokenCache, *args: object) -> object:
        derived_on.append(threading.current_thread())
        return original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(TokenCache, "_derive", recording)
    extension, manager = token_extension()
    with RunningEndpoint(extensions=[extension]) as ep:
        created = manager.create_token(TokenRequester(KafkaPrincipal.user("alice")))
        loop_thread = ep.call(_current_thread())
        for _ in range(2):  # the second login uses the derived keys
            with Peer(ep.port) as peer:
                answer = peer.login(
                    created.token_id, created.hmac_base64, SCRAM_SHA_512, token=True
                )
                assert answer["error_code"] == 0, answer
    assert len(derived_on) == 1
    assert derived_on[0] is not loop_thread


async def _current_thread() -> threading.Thread:
    return threading.current_thread()
