"""A second process for cross-process tests: python -m tests.tokenauth._peer LOCATION.

Protocol on stdin/stdout, one line each:
  peer -> "ready"
  test -> "<token id> <base64 hmac>"        (a token the test created)
  peer -> "authenticated <authorization id>" once its own cache saw it and a
          SCRAM login with it succeeded, or "missing"
  peer -> "created <token id> <base64 hmac>" a token the peer created for User:bob
"""

from __future__ import annotations

import sys
import time

from sasl_scram import SCRAM_SHA_512
from sasl_scram import KafkaPrincipal
from sasl_scram import ScramClient
from sasl_scram import ScramServer
from tokenauth import TokenConfig
from tokenauth import TokenCredentialProvider
from tokenauth import TokenManager
from tokenauth import TokenRequester
from tokenauth import open_token_store


def main(location: str) -> int:
    options = {"poll_interval": 0.01} if location.startswith("sqlite:") else {}
    store = open_token_store(location, **options)
    manager = TokenManager(TokenConfig.of("shared-secret"), store)
    provider = TokenCredentialProvider(manager.cache)
    print("ready", flush=True)
    token_id, password = sys.stdin.readline().split()
    deadline = time.monotonic() + 10
    while manager.cache.get(token_id) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if manager.cache.get(token_id) is None:
        print("missing", flush=True)
    else:
        server = ScramServer(SCRAM_SHA_512, lookup=provider)
        client = ScramClient(SCRAM_SHA_512, token_id, password, token_auth=True)
        final = server.step(client.receive_server_first(server.step(client.client_first())))
        client.receive_server_final(final)
        print(f"authenticated {server.session.authorization_id}", flush=True)
    created = manager.create_token(TokenRequester(KafkaPrincipal.user("bob")))
    print(f"created {created.token_id} {created.hmac_base64}", flush=True)
    sys.stdin.readline()  # wait for the test to finish before closing
    manager.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
