"""confluent-kafka logging in with SCRAM from a ``client.properties`` file.

Usage: python examples/confluent_kafka_client.py [--debug] client.properties
(or set KAFKA_CLIENT_PROPERTIES). User logins only: librdkafka cannot send
the tokenauth=true extension, so a token login stops with a clear error.
Prints the cluster's brokers and topics.
"""

from __future__ import annotations

import sys

from _example import BOOTSTRAP_TIMEOUT
from _example import run_example

from sasl_scram.integrations import UnsupportedByClient
from sasl_scram.integrations import confluent


def main(path: str) -> int:
    # Imported here, so that its absence is one line naming the extra (_example.py).
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    try:
        config = confluent.client_config(path)
    except UnsupportedByClient as exc:
        print(f"confluent_kafka_client.py: error: {exc}", file=sys.stderr)
        return 1
    # librdkafka's own log lines would repeat the error below; keep stderr to one line,
    # with the reason librdkafka reports (a failed login) in it.
    errors: list[str] = []
    config["log_level"] = 0
    config["error_cb"] = lambda err: errors.append(err.str())
    try:
        # AdminClient has no close(): it is released when the last reference goes.
        metadata = AdminClient(config).list_topics(timeout=BOOTSTRAP_TIMEOUT)
    except KafkaException as exc:
        raise KafkaException(f"{exc.args[0].str()}{f' ({errors[-1]})' if errors else ''}") from None
    print(f"brokers: {sorted((b.host, b.port) for b in metadata.brokers.values())}")
    print(f"topics: {sorted(metadata.topics)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_example(main, sys.argv))
