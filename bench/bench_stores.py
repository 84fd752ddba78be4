"""``make bench``, part 3: credential stores.

* Cache-hit lookup p50 (target: at most 1 us), per backend.
* Change propagation between two ZooKeeper store instances over loopback,
  p50 and p99 over 1,000 changes (target: p99 at most 50 ms).
* Eager start with 100,000 users in ZooKeeper (target: at most 10 s).
* Memory per (user, mechanism) credential in the cache (target: at most 1 KiB).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sasl_scram import SCRAM_SHA_256  # noqa: E402
from sasl_scram import SCRAM_SHA_512  # noqa: E402
from sasl_scram import ScramCredential  # noqa: E402
from sasl_scram.store import InMemoryCredentialStore  # noqa: E402
from sasl_scram.store import ScramUpsertion  # noqa: E402
from sasl_scram.store import SQLiteCredentialStore  # noqa: E402
from sasl_scram.store import ZooKeeperCredentialStore  # noqa: E402
from sasl_scram.store import sanitize  # noqa: E402
from tests.support.zookeeper_server import ZooKeeperServer  # noqa: E402

USERS = 100_000


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def lookup_p50_ns(store: object, user: str) -> float:
    lookup = store.lookup  # type: ignore[attr-defined]
    samples = []
    for _ in range(20):
        start = time.perf_counter_ns()
        for _ in range(5000):
            lookup(user, SCRAM_SHA_256)
        samples.append((time.perf_counter_ns() - start) / 5000)
    return statistics.median(samples)


def populate_zookeeper(hosts: str, users: int) -> None:
    from kazoo.client import KazooClient

    cred256 = ScramCredential.from_password(SCRAM_SHA_256, "pw", salt=b"bench-salt-0001")
    cred512 = ScramCredential.from_password(SCRAM_SHA_512, "pw", salt=b"bench-salt-0001")
    data = json.dumps(
        {
            "version": 1,
            "config": {
                "SCRAM-SHA-256": cred256.to_kafka_string(),
                "SCRAM-SHA-512": cred512.to_kafka_string(),
            },
        },
        separators=(",", ":"),
    ).encode()
    client = KazooClient(hosts=hosts)
    client.start(timeout=15)
    client.ensure_path("/config/users")
    batch = []
    for i in range(users):
        batch.append(client.create_async(f"/config/users/{sanitize(f'user-{i}')}", data))
        if len(batch) >= 2000:
            for op in batch:
                op.get(timeout=60)
            batch = []
    for op in batch:
        op.get(timeout=60)
    client.stop()
    client.close()


def main() -> None:
    print("\nkafka-scram credential-store benchmark")
    memory = InMemoryCredentialStore()
    memory.alter([], [ScramUpsertion.from_password("alice", SCRAM_SHA_256, "pw")])
    print(
        f"cache-hit lookup p50  memory    : {lookup_p50_ns(memory, 'alice'):7.0f} ns   (target <= 1000 ns)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SQLiteCredentialStore(Path(tmp) / "creds.db")
        sqlite.alter([], [ScramUpsertion.from_password("alice", SCRAM_SHA_256, "pw")])
        print(f"cache-hit lookup p50  sqlite    : {lookup_p50_ns(sqlite, 'alice'):7.0f} ns")
        sqlite.close()
        with ZooKeeperServer(Path(tmp) / "zk") as zk:
            a = ZooKeeperCredentialStore(zk.hosts + "/bench")
            b = ZooKeeperCredentialStore(zk.hosts + "/bench")
            a.alter([], [ScramUpsertion.from_password("alice", SCRAM_SHA_256, "pw")])
            b.sync(10)
            print(f"cache-hit lookup p50  zookeeper : {lookup_p50_ns(b, 'alice'):7.0f} ns")
            delays = []
            for i in range(1000):
                upsertion = ScramUpsertion.from_password(
                    "bob", SCRAM_SHA_256, "pw", salt=f"s{i}".encode() * 4
                )
                start = time.perf_counter()
                a.alter([], [upsertion])
                deadline = start + 5
                while True:
                    cred = b.lookup("bob", SCRAM_SHA_256)
                    if cred is not None and cred.salt == upsertion.salt:
                        break
                    if time.perf_counter() > deadline:
                        raise RuntimeError("change did not propagate within 5 s")
                    time.sleep(0.0002)
                delays.append(time.perf_counter() - start)
            delays.sort()
            print(
                f"change propagation (alter in A -> visible in B), 1000 changes: "
                f"p50 {delays[500] * 1000:5.1f} ms, p99 {delays[989] * 1000:5.1f} ms   (target p99 <= 50 ms)"
            )
            a.close()
            b.close()
            start = time.perf_counter()
            populate_zookeeper(zk.hosts + "/big", USERS)
            populated = time.perf_counter() - start
            before = rss_bytes()
            start = time.perf_counter()
            big = ZooKeeperCredentialStore(zk.hosts + "/big", mode="eager", request_timeout=120)
            elapsed = time.perf_counter() - start
            used = rss_bytes() - before
            assert big.lookup(f"user-{USERS - 1}", SCRAM_SHA_512) is not None
            big.close()
            print(
                f"eager start with {USERS:,} users in ZooKeeper: {elapsed:5.1f} s   (target <= 10 s; "
                f"populating took {populated:.1f} s)"
            )
            print(
                f"memory per (user, mechanism) credential: {used / (USERS * 2):6.0f} bytes   "
                "(target <= 1024; resident-set growth while loading, so an upper bound)"
            )


if __name__ == "__main__":
    main()
