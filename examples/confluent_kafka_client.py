"""confluent-kafka logging in with SCRAM from a ``client.properties`` file.

Usage: python examples/confluent_kafka_client.py [client.properties]
(or set KAFKA_CLIENT_PROPERTIES). User logins only: librdkafka cannot send
the tokenauth=true extension, so a token login stops with a clear error.
Prints the cluster's brokers and topics.
"""

from __future__ import annotations

import os
import sys

from confluent_kafka.admin import AdminClient

from sasl_scram.integrations import UnsupportedByClient, confluent


def main(argv: list[str]) -> int:
    path = (
        argv[1] if len(argv) > 1 else os.environ.get("KAFKA_CLIENT_PROPERTIES", "client.properties")
    )
    try:
        config = confluent.client_config(path)
    except UnsupportedByClient as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    metadata = AdminClient(config).list_topics(timeout=10)
    print(f"brokers: {sorted((b.host, b.port) for b in metadata.brokers.values())}")
    print(f"topics: {sorted(metadata.topics)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
