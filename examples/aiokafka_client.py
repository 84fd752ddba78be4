"""aiokafka with token-capable SCRAM, driven by a ``client.properties`` file.

Usage: python examples/aiokafka_client.py [--debug] client.properties
(or set KAFKA_CLIENT_PROPERTIES). A user or a delegation token
(tokenauth=true) in sasl.jaas.config. Prints the cluster's topics.
"""

from __future__ import annotations

import asyncio
import sys

from _example import BOOTSTRAP_TIMEOUT
from _example import run_example

from sasl_scram.integrations import aiokafka as scram_aiokafka


async def list_topics(path: str) -> set[str]:
    # Imported here, so that its absence is one line naming the extra (_example.py).
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        **scram_aiokafka.client_kwargs(path), request_timeout_ms=int(BOOTSTRAP_TIMEOUT * 1000)
    )
    try:
        # Inside the try: a failed start (a wrong password) must still close it.
        await consumer.start()
        return set(await consumer.topics())
    finally:
        await consumer.stop()


def main(path: str) -> int:
    with scram_aiokafka.installed():  # the patch is undone when the block ends
        topics = asyncio.run(list_topics(path))
    print(f"topics: {sorted(topics)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_example(main, sys.argv))
