"""Delegation-token logins count in the endpoint's authentication metrics like user logins."""

from __future__ import annotations

import urllib.request

from sasl_scram import KafkaPrincipal
from tests.sasl_scram.endpoint.test_metrics import Client
from tests.sasl_scram.endpoint.test_metrics import samples_of
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension
from tokenauth import TokenRequester


def test_token_logins_are_counted_like_user_logins() -> None:
    ext, manager = token_extension(("secret-one",))
    props = {"scram.metrics.listener": "127.0.0.1:0", "connections.max.reauth.ms": "60000"}
    with RunningEndpoint(extensions=[ext], properties=props) as ep:
        ctx = TokenRequester(KafkaPrincipal.user("alice"), security_protocol="SASL_PLAINTEXT")
        token = manager.create_token(ctx)
        client = Client(ep.port)
        assert client.login(token.token_id, token.hmac_base64, token=True)
        assert client.login(token.token_id, token.hmac_base64, token=True)  # re-authentication
        user_client = Client(ep.port)
        assert user_client.login(*ALICE)
        client.roundtrip(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert ep.endpoint.metrics is not None and ep.endpoint.metrics.address is not None
        host, port = ep.endpoint.metrics.address
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as r:
            scrape = r.read().decode()
    samples = samples_of(scrape)
    labels = '{listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-256"}'
    assert samples[f"kafka_scram_successful_authentication_total{labels}"] == 2
    assert samples[f"kafka_scram_successful_reauthentication_total{labels}"] == 1
    assert samples[f"kafka_scram_authenticated_connections{labels}"] == 2
    # Neither the token id nor the owner appears in the metrics.
    assert token.token_id not in scrape and "alice" not in scrape
