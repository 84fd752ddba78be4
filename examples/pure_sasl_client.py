"""pure-sasl's SASLClient logging into a Kafka listener with SCRAM.

Usage: python examples/pure_sasl_client.py [--debug] client.properties
(or set KAFKA_CLIENT_PROPERTIES). pure-sasl only produces SASL messages; this
example carries them in Kafka's SaslHandshake and SaslAuthenticate requests
(our codec, ``sasl_scram.kafka``) over a plain socket. A user or a
delegation token (tokenauth=true) in sasl.jaas.config.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from _example import run_example

from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import load_client_config
from sasl_scram.integrations import pure_sasl
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request


class KafkaSocket:
    """Just enough Kafka framing for SaslHandshake v1 and SaslAuthenticate v1."""

    def __init__(self, host: str, port: int) -> None:
        self._sock = socket.create_connection((host, port), timeout=10)
        self._frames = FrameBuffer(1 << 20)
        self._next_id = 0

    def call(self, api_key: int, body: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self._sock.sendall(encode_request(api_key, 1, self._next_id, "pure-sasl-example", body))
        while (payload := self._frames.next_frame()) is None:
            data = self._sock.recv(65536)
            if not data:
                raise ConnectionError("the broker closed the connection")
            self._frames.feed(data)
        _, response = decode_response(api_key, 1, payload)
        return response

    def close(self) -> None:
        self._sock.close()


def main(path: str) -> int:
    # Imported here, so that its absence is one line naming the extra (_example.py).
    from puresasl.client import SASLClient

    config = load_client_config(path)
    if config.security_protocol != "SASL_PLAINTEXT":
        print(
            "pure_sasl_client.py: error: this example speaks SASL_PLAINTEXT only", file=sys.stderr
        )
        return 1
    host, port = config.bootstrap_addresses()[0]
    credentials = ScramCredentials.from_client_config(config)
    assert config.mechanism is not None
    pure_sasl.install()
    try:
        sasl = SASLClient(
            host,
            "kafka",
            config.mechanism.mechanism_name,
            username=credentials.username,
            password=credentials.password,
            token_auth=credentials.token_auth,
        )
        conn = KafkaSocket(host, port)
        try:
            handshake = conn.call(ApiKey.SASL_HANDSHAKE, {"mechanism": sasl.mechanism})
            if handshake["error_code"]:
                print(
                    f"pure_sasl_client.py: error: broker offers {handshake['mechanisms']}",
                    file=sys.stderr,
                )
                return 1
            token = sasl.process()
            while not sasl.complete:
                response = conn.call(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token})
                if response["error_code"]:
                    print(
                        f"pure_sasl_client.py: error: {response['error_message']}; check the "
                        f"user and password (or token) in {path}'s sasl.jaas.config",
                        file=sys.stderr,
                    )
                    return 1
                token = sasl.process(response["auth_bytes"])
            lifetime = response["session_lifetime_ms"]
        finally:
            conn.close()
    finally:
        pure_sasl.uninstall()
    kind = "delegation token" if credentials.token_auth else "user"
    print(f"authenticated ({kind}) via {sasl.mechanism}; session lifetime {lifetime} ms")
    return 0


if __name__ == "__main__":
    sys.exit(run_example(main, sys.argv))
