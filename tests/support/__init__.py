"""What the tests share: harnesses that run real peers (ZooKeeper, Kafka's brokers,
Kafka's Java classes, ``kafka-scram serve``, kcat), loopback plumbing (a TCP proxy,
TLS certificates, ``/proc`` readers), RFC 5802 arithmetic, and the one fake clock
(:mod:`tests.support.clock`) and the one poll-until helper
(:mod:`tests.support.polling`). Nothing here is a test."""
