"""``make bench``, part 5: NodeEndpoints, rewrite them or cap the versions?

KIP-951 puts the broker addresses a client may follow in the top-level tagged
fields of FetchResponse v16+ and ProduceResponse v10+, after every record.
The front door caps Fetch at v15 and Produce at v9, so data responses pass
through unparsed (``ResponseSplitter``: ``memoryview`` slices of each read,
no copy). The other way is to hold every such response whole, walk it to its
end and rewrite the endpoints (the prototype in ``_node_endpoints.py``).

Real responses first: a Kafka 4.x broker (the tests' launcher), a topic of
1 KB records written by Kafka's ProducerPerformance, then Fetch v15 and v16
responses of about 64 KB, 1 MB and 25 MB read off the socket, the arrival of
their first and last bytes timed. A response that really carries
NodeEndpoints is provoked after a restart of the broker (its leader epoch
moves on; a fetch with the old epoch is FENCED_LEADER_EPOCH, which Kafka
answers with the leader's endpoint); the walker must read it.

Then, per response, side by side in one process, the modes alternating over
``--rounds`` rounds, the shipped ``ResponseSplitter`` fed the response in
256 KiB reads (what asyncio's transport reads at most):

* cap: v15, passed through (``rewritten`` empty);
* rewrite: v16, buffered whole, walked, passed back (no NodeEndpoints: the
  common case);
* rewrite+: the same v16 response with NodeEndpoints of three brokers added
  at its end (rewritten: the whole payload copied once more).

Figures: CPU per MB (``process_time``), the bytes held per connection
(``tracemalloc`` peak while one response goes through), and the time to
the client's first byte: the cap sends on what arrived, the rewrite nothing
before the last byte arrived and the walk ended.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import statistics
import struct
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for folder in (ROOT, BENCH):  # tests/ and tools/ at the root; the bench's helpers here
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import _kafka_perf  # noqa: E402
import _node_endpoints  # noqa: E402
from _java_style import ALL_CPUS  # noqa: E402

from sasl_scram.frontdoor import InFlight  # noqa: E402
from sasl_scram.frontdoor import InFlightQueue  # noqa: E402
from sasl_scram.frontdoor import ResponseSplitter  # noqa: E402

if TYPE_CHECKING:
    from sasl_scram.admin import KafkaConnection
    from tests.support.kafka_broker import KafkaBroker

RECORD_SIZE = 1024
SIZES = {"64 KB": 64 << 10, "1 MB": 1 << 20, "25 MB": 25 << 20}
# Enough records for the largest response, and a little over.
RECORDS = (27 << 20) // RECORD_SIZE
READ_SIZE = 256 << 10  # asyncio's selector transport reads at most this much
MB = 1 << 20
# Processed per mode and round, so the small responses repeat enough.
MB_PER_ROUND = 100
HOST = "front-door.example"
_SIZE = struct.Struct(">i")
MODES = ("cap", "rewrite", "rewrite+")


@dataclass
class Response:
    """One captured response: its payload and when its bytes arrived."""

    label: str
    version: int
    payload: bytes
    first_byte_s: float
    last_byte_s: float


def fetch_request(
    correlation_id: int, version: int, topic_id: bytes, max_bytes: int, leader_epoch: int = -1
) -> bytes:
    """A Fetch v15+ request (FetchRequest.json; header v2) for partition 0 from
    offset 0; ``leader_epoch`` -1 leaves the leader epoch unchecked."""
    client_id = b"bench-rewrite"
    head = struct.pack(">hhih", 1, version, correlation_id, len(client_id)) + client_id + b"\x00"
    # max wait, min bytes, max bytes, isolation level, session id, session epoch.
    body = struct.pack(">iiibii", 0, 1, max_bytes, 0, 0, -1)
    # One topic, one partition: index, current leader epoch, fetch offset,
    # last fetched epoch, log start offset, partition max bytes.
    body += (
        b"\x02" + topic_id + b"\x02" + struct.pack(">iiqiqi", 0, leader_epoch, 0, -1, -1, max_bytes)
    )
    body += b"\x00\x00"  # the partition's and the topic's tagged fields
    body += b"\x01\x01\x00"  # no forgotten topics, rack id "", no tagged fields
    payload = head + body
    return _SIZE.pack(len(payload)) + payload


def timed_fetch(sock: socket.socket, frame: bytes) -> tuple[bytes, float, float]:
    """Send one request; its response payload, and the seconds to its first and last byte."""
    start = time.perf_counter()
    sock.sendall(frame)
    buf = bytearray()
    first = 0.0
    while len(buf) < 4 or len(buf) < 4 + _SIZE.unpack_from(buf)[0]:
        data = sock.recv(READ_SIZE)
        if not data:
            raise RuntimeError("the broker closed the connection")
        if not buf:
            first = time.perf_counter() - start
        buf += data
    return bytes(buf[4:]), first, time.perf_counter() - start


def _sock(conn: KafkaConnection) -> socket.socket:
    """The connection's socket: the capture times its reads itself."""
    sock: socket.socket = conn._sock
    return sock


def _partition_0(conn: KafkaConnection, topic: str) -> tuple[bytes, int, int]:
    """``topic``'s id, and its partition 0's leader and leader epoch (Metadata v12)."""
    from sasl_scram.kafka import ApiKey

    body = {
        "topics": [{"name": topic, "topic_id": None}],
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }
    [entry] = conn.request(ApiKey.METADATA, body, 12)["topics"]
    [partition] = entry["partitions"]
    return bytes(entry["topic_id"]), int(partition["leader_id"]), int(partition["leader_epoch"])


def capture(broker: KafkaBroker, topic: str, rounds: int) -> list[Response]:
    """Fetch v15 and v16 responses of each size from the broker, their arrival timed
    (the least of ``rounds`` reads: the machine's other load only adds)."""
    out = []
    with broker.connect(timeout=60.0) as conn:
        topic_id, _, _ = _partition_0(conn, topic)
        top = conn.broker_versions[_node_endpoints.FETCH][1]
        print(f"  the broker's Fetch versions go up to v{top}", flush=True)
        # One read of it all first, so no timed read is the first from disk or cold code.
        timed_fetch(_sock(conn), fetch_request(999, 15, topic_id, max(SIZES.values())))
        for label, size in SIZES.items():
            for version in (15, 16):
                reads = [
                    timed_fetch(_sock(conn), fetch_request(1000 + i, version, topic_id, size))
                    for i in range(rounds)
                ]
                payload = reads[0][0]
                _node_endpoints.tags_offset(_node_endpoints.FETCH, version, payload)
                out.append(
                    Response(
                        label,
                        version,
                        payload,
                        min(r[1] for r in reads),
                        min(r[2] for r in reads),
                    )
                )
    return out


def provoke(broker: KafkaBroker, topic: str) -> Response | None:
    """A Fetch v16 response that really carries NodeEndpoints, or None.

    After a restart the partition's leader epoch has moved on; a fetch naming
    the old epoch is refused with FENCED_LEADER_EPOCH, and Kafka's
    ``KafkaApis.handleFetchRequest`` (v16+) adds the current leader's endpoint.
    """
    broker.restart()
    deadline = time.monotonic() + 30
    with broker.connect(timeout=30.0) as conn:
        topic_id, leader, epoch = _partition_0(conn, topic)
        while leader < 0 and time.monotonic() < deadline:
            time.sleep(0.5)
            topic_id, leader, epoch = _partition_0(conn, topic)
        if epoch < 1:
            print(f"  leader epoch {epoch} after the restart: nothing to fence", flush=True)
            return None
        frame = fetch_request(2000, 16, topic_id, 1 << 20, leader_epoch=epoch - 1)
        payload, first, last = timed_fetch(_sock(conn), frame)
    endpoints = _node_endpoints.node_endpoints(_node_endpoints.FETCH, 16, payload)
    print(f"  fenced fetch (epoch {epoch - 1} < {epoch}): NodeEndpoints {endpoints}", flush=True)
    return Response("fenced", 16, payload, first, last) if endpoints else None


def fill_topic(broker: KafkaBroker, tmp: Path, topic: str, cpus: str) -> None:
    """``topic`` with one partition of ``RECORDS`` 1 KB records, from ProducerPerformance."""
    from tests.support.cluster_acls import create_topic

    create_topic(broker, topic)
    config = broker.client_properties(tmp / "admin.properties")
    bootstrap = broker.bootstrap
    args = _kafka_perf.producer_args(bootstrap, topic, RECORDS, RECORD_SIZE, -1, config)
    classpath = broker.classpath
    _kafka_perf.run_tool(
        _kafka_perf.tool_command(classpath, cpus, _kafka_perf.PRODUCER_CLASS, *args)
    )


def with_endpoints(payload: bytes) -> bytes:
    """``payload`` (a v16 Fetch response without NodeEndpoints) with three brokers' added."""
    endpoints = [
        _node_endpoints.NodeEndpoint(n, f"broker-{n}.cluster.internal", 9092, f"rack-{n}")
        for n in range(3)
    ]
    at = _node_endpoints.tags_offset(_node_endpoints.FETCH, 16, payload)
    tags = {0: _node_endpoints.encode_endpoints(endpoints)}
    return payload[:at] + _node_endpoints.encode_tags(tags)


def many_partitions(count: int, records: int) -> bytes:
    """A Fetch v16 payload of one topic with ``count`` partitions of ``records``
    bytes each (FetchResponse.json): what a consumer of many partitions gets."""
    length = _node_endpoints.varint(records + 1)
    partition = struct.pack(">ihqqq", 0, 0, 0, 0, 0) + b"\x01" + struct.pack(">i", -1)
    partition += length + bytes(records) + b"\x00"
    body = struct.pack(">i", 1) + b"\x00" + struct.pack(">ihi", 0, 0, 0)
    body += b"\x02" + bytes(16) + _node_endpoints.varint(count + 1) + partition * count
    return body + b"\x00\x00"  # the topic's tagged fields, the response's


def walk_ms_per_mb(payload: bytes, version: int) -> float:
    """CPU ms per MB of the walk alone (to the top-level tagged fields), no buffering."""
    reps = max(5, 20 * MB // len(payload))
    start = time.process_time()
    for _ in range(reps):
        _node_endpoints.tags_offset(_node_endpoints.FETCH, version, payload)
    return (time.process_time() - start) * 1000 / (reps * len(payload) / MB)


def _rewrite(entry: InFlight, payload: bytes) -> bytes:
    return _node_endpoints.rewrite_node_endpoints(
        entry.api_key, entry.api_version, payload, HOST, lambda node: 40000 + node
    )


@dataclass
class Case:
    """One mode on one response: the bytes as read, and how to split them."""

    mode: str
    version: int
    frame: bytes
    rewritten: frozenset[int]

    def chunks(self) -> list[bytes]:
        frame = self.frame
        return [frame[i : i + READ_SIZE] for i in range(0, len(frame), READ_SIZE)]

    def splitter(self) -> tuple[ResponseSplitter, InFlightQueue]:
        queue = InFlightQueue(1)
        split = ResponseSplitter(
            queue,
            _rewrite,
            self.rewritten,
            max_frame=len(self.frame) + 1,
            max_buffered=len(self.frame) + 1,
        )
        return split, queue

    def run(self, reps: int) -> float:
        """CPU seconds to pass ``reps`` copies of the response through a splitter."""
        chunks = self.chunks()
        split, queue = self.splitter()
        correlation_id = _SIZE.unpack_from(self.frame, 4)[0]
        start = time.process_time()
        for _ in range(reps):
            queue.push(InFlight(correlation_id, _node_endpoints.FETCH, self.version))
            for chunk in chunks:
                out = split.feed(chunk)
            assert out  # the last read emits (at least) the response's end
        return time.process_time() - start

    def held(self) -> int:
        """The most bytes allocated while one response goes through (its reads aside)."""
        chunks = self.chunks()
        split, queue = self.splitter()
        queue.push(InFlight(_SIZE.unpack_from(self.frame, 4)[0], 1, self.version))
        tracemalloc.start()
        try:
            for chunk in chunks:
                out = split.feed(chunk)
                del out
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def cases(responses: list[Response]) -> dict[str, dict[str, Case]]:
    """Per size: the cap passes v15 through, the rewrite walks v16 (and v16 + endpoints)."""
    by = {(r.label, r.version): r for r in responses}
    out: dict[str, dict[str, Case]] = {}
    for label in SIZES:
        v15, v16 = by[label, 15].payload, by[label, 16].payload
        plus = with_endpoints(v16)
        out[label] = {
            "cap": Case("cap", 15, _SIZE.pack(len(v15)) + v15, frozenset()),
            "rewrite": Case("rewrite", 16, _SIZE.pack(len(v16)) + v16, frozenset({1})),
            "rewrite+": Case("rewrite+", 16, _SIZE.pack(len(plus)) + plus, frozenset({1})),
        }
    return out


def measure(
    all_cases: dict[str, dict[str, Case]], rounds: int
) -> dict[tuple[str, str], list[float]]:
    """CPU ms per MB of response, per (size, mode), one entry per round."""
    ms_per_mb: dict[tuple[str, str], list[float]] = {}
    for i in range(rounds):
        order = MODES if i % 2 == 0 else MODES[::-1]
        for label, by_mode in all_cases.items():
            for mode in order:
                case = by_mode[mode]
                reps = max(2, MB_PER_ROUND * MB // len(case.frame))
                seconds = case.run(reps)
                ms_per_mb.setdefault((label, mode), []).append(
                    seconds * 1000 / (reps * len(case.frame) / MB)
                )
    return ms_per_mb


def span(values: list[float], fmt: str = ".3f") -> str:
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def report(
    responses: list[Response],
    all_cases: dict[str, dict[str, Case]],
    ms_per_mb: dict[tuple[str, str], list[float]],
) -> None:
    by = {(r.label, r.version): r for r in responses}
    print("\nCPU per MB of Fetch response through the ResponseSplitter (ms/MB, median [min-max]):")
    for label, by_mode in all_cases.items():
        cap = statistics.median(ms_per_mb[label, "cap"])
        line = [f"  {label:>6} ({len(by_mode['cap'].frame) / MB:6.2f} MB):"]
        for mode in MODES:
            ratio = statistics.median(ms_per_mb[label, mode]) / cap
            line.append(f"{mode} {span(ms_per_mb[label, mode])} (x{ratio:.1f})")
        print("  ".join(line))
    print("\nHeld per connection while one response goes through (tracemalloc peak):")
    for label, by_mode in all_cases.items():
        held = {mode: by_mode[mode].held() for mode in MODES}
        ratio = held["rewrite"] / max(held["cap"], 1)
        print(
            f"  {label:>6}: cap {held['cap'] / 1024:,.0f} KiB, rewrite {held['rewrite'] / 1024:,.0f}"
            f" KiB, rewrite+ {held['rewrite+'] / 1024:,.0f} KiB (x{ratio:,.0f})"
        )
    print("\nThe walk alone (to the top-level tagged fields), CPU per MB:")
    for label in SIZES:
        walk = walk_ms_per_mb(by[label, 16].payload, 16)
        print(f"  {label:>6}, 1 partition: {walk:.4f} ms/MB")
    for count, records in ((100, 10 << 10), (1000, 1 << 10)):
        walk = walk_ms_per_mb(many_partitions(count, records), 16)
        print(f"  {count} partitions of {records >> 10} KiB: {walk:.3f} ms/MB")
    print("\nTime to the client's first byte (the broker's response on loopback, least):")
    for label in SIZES:
        walk_ms = statistics.median(ms_per_mb[label, "rewrite"]) * len(by[label, 16].payload) / MB
        cap_ms = by[label, 15].first_byte_s * 1000
        rewrite_ms = by[label, 16].last_byte_s * 1000 + walk_ms
        print(
            f"  {label:>6}: cap {cap_ms:.2f} ms (first byte in); rewrite {rewrite_ms:.2f} ms"
            f" (last byte in {by[label, 16].last_byte_s * 1000:.2f} + walk {walk_ms:.2f})"
            f" (x{rewrite_ms / cap_ms:.1f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--cpus",
        default=",".join(map(str, sorted(ALL_CPUS))) or "0",
        help="taskset's CPU list for the producer tool",
    )
    parser.add_argument("--no-provoke", action="store_true", help="skip the broker restart")
    args = parser.parse_args()
    from tests.support.kafka_broker import KafkaBroker
    from tests.support.kafka_broker import unique_name
    from tools.fetch_kafka_broker import KAFKA_VERSIONS
    from tools.fetch_kafka_broker import is_fetched

    version = KAFKA_VERSIONS["kraft"]
    if not is_fetched(version):
        sys.exit(
            f"bench_rewrite.py: error: Kafka {version}'s jars are not cached; run `make brokers`"
        )
    print(
        f"\nNodeEndpoints (KIP-951): rewrite Fetch v16 responses, or cap Fetch at v15?"
        f" Kafka {version}, {RECORD_SIZE} B records, {args.rounds} rounds, modes alternating.",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="kafka-scram-rwbench-") as name:
        tmp = Path(name)
        with started_broker(KafkaBroker("kraft", tmp / "broker")) as broker:
            topic = unique_name("rewrite")
            fill_topic(broker, tmp, topic, args.cpus)
            responses = capture(broker, topic, args.rounds)
            fenced = None if args.no_provoke else provoke(broker, topic)
    if fenced is not None:
        back = _rewrite(InFlight(0, 1, 16), fenced.payload)
        print(f"  rewritten: {_node_endpoints.node_endpoints(1, 16, back)}")
    all_cases = cases(responses)
    report(responses, all_cases, measure(all_cases, args.rounds))


@contextlib.contextmanager
def started_broker(broker: KafkaBroker) -> Iterator[KafkaBroker]:
    try:
        broker.start()
        yield broker
    except Exception:
        print(f"broker log, last lines:\n{broker.log_tail(30)}", file=sys.stderr)
        raise
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
