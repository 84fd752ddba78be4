"""kafka-python with token-capable SCRAM, driven by a ``client.properties`` file.

Usage: python examples/kafka_python_client.py [--debug] client.properties
(or set KAFKA_CLIENT_PROPERTIES). The file holds bootstrap.servers,
security.protocol, sasl.mechanism and sasl.jaas.config: a user, or a
delegation token with tokenauth=true. Prints the cluster's brokers and topics.
"""

from __future__ import annotations

import sys

from _example import BOOTSTRAP_TIMEOUT
from _example import run_example

from sasl_scram.integrations import kafka_python


def main(path: str) -> int:
    # Imported here, so that its absence is one line naming the extra (_example.py).
    from kafka import KafkaAdminClient
    from kafka import KafkaConsumer

    kafka_python.install()  # explicit; undone below
    try:
        kwargs = kafka_python.client_kwargs(path)
        kwargs["bootstrap_timeout_ms"] = int(BOOTSTRAP_TIMEOUT * 1000)
        admin = KafkaAdminClient(**kwargs)
        try:
            brokers = admin.describe_cluster()["brokers"]
            print(f"brokers: {[(b['host'], b['port']) for b in brokers]}")
        finally:
            admin.close()
        consumer = KafkaConsumer(**kwargs)
        try:
            print(f"topics: {sorted(consumer.topics())}")
        finally:
            consumer.close()
    finally:
        kafka_python.uninstall()
    return 0


if __name__ == "__main__":
    sys.exit(run_example(main, sys.argv))
