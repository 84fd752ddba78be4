"""``kafka-scram serve`` as a front door to a real broker: start-up errors, and the
order of answers when the edge answers a request between forwarded ones.

The edge user exists only in serve's SQLite store; the broker knows only its
own admin, which is serve's ``upstream.`` login.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.front_door import admin_login
from tests.support.front_door import edge_store
from tests.support.front_door import front_door_keys
from tests.support.front_door import upstream_keys
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.serve_process import ServeProcess
from tests.support.tcp_proxy import Copy
from tests.support.tcp_proxy import Pair
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import free_port_base


def serve_config(tmp_path: Path, keys: dict[str, str]) -> Path:
    config = tmp_path / "server.properties"
    props = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{free_port()}",
        "scram.credential.store.path": str(tmp_path / "edge.db"),
        "upstream.node.port.base": str(free_port_base()),
        **keys,
    }
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return config


FAIL_FAST = {"upstream.start.wait": "false"}


def test_an_unreachable_cluster_at_start_is_one_line_and_exit_1_when_asked(
    tmp_path: Path,
) -> None:
    """``upstream.start.wait=false``: the start of old, for a supervisor that
    restarts serve itself (by default serve waits for the cluster:
    ``tests/faults/test_cluster_down.py``)."""
    port = free_port()
    edge_store(tmp_path)
    config = serve_config(tmp_path, {**upstream_keys(f"127.0.0.1:{port}"), **FAIL_FAST})
    result = kafka_scram("serve", "--config", str(config), timeout=60)
    line = assert_one_error(result, "serve")
    assert f"cannot reach the cluster: 127.0.0.1:{port}" in line, line


def test_a_cluster_unreachable_since_start_shows_on_the_gauge(tmp_path: Path) -> None:
    """Waiting for the cluster at start (``upstream.start.wait``, the default),
    nothing is accepted: the gauge an operator alerts on says so, as it does for
    an outage that begins later (``tests/faults/test_cluster_down.py``)."""
    from tests.sasl_scram.endpoint.test_metrics import samples_of

    metrics_port = free_port()
    keys = front_door_keys(
        tmp_path,
        f"127.0.0.1:{free_port()}",  # nothing listens there
        **{"scram.metrics.listener": f"127.0.0.1:{metrics_port}"},
    )
    with ServeProcess(tmp_path, keys) as serve:
        serve.wait_for_log("Cannot reach the cluster at start")
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:
            samples = samples_of(answer.read().decode())
    assert samples.get("kafka_scram_upstream_unreachable") == 1, samples


def test_a_silent_cluster_at_start_is_given_upstream_request_timeout_ms(tmp_path: Path) -> None:
    """A broker that accepts and never answers: serve gives up after the
    configured time, not the 30 s default."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        edge_store(tmp_path)
        keys = {**upstream_keys(f"127.0.0.1:{port}"), "upstream.request.timeout.ms": "1500"}
        keys |= FAIL_FAST
        config = serve_config(tmp_path, keys)
        began = time.monotonic()
        result = kafka_scram("serve", "--config", str(config), timeout=60)
        took = time.monotonic() - began
    line = assert_one_error(result, "serve")
    assert f"127.0.0.1:{port}: no answer within 1.5 s" in line, line
    assert took < 20, took


@pytest.mark.broker
def test_a_refused_upstream_login_at_start_names_the_login_not_its_password(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    edge_store(tmp_path)
    config = serve_config(tmp_path, upstream_keys(kraft_broker.bootstrap, "not-the-password"))
    result = kafka_scram("serve", "--config", str(config), timeout=60)
    line = assert_one_error(result, "serve")
    assert f"the cluster refused the login of '{ADMIN_USER}'" in line, line
    assert "not-the-password" not in result.stderr


def _frame_reader(sock: socket.socket) -> Any:
    buf = b""
    while True:
        while len(buf) < 4 or len(buf) < 4 + struct.unpack_from(">i", buf)[0]:
            data = sock.recv(65536)
            assert data, "the front door closed the connection"
            buf += data
        size = struct.unpack_from(">i", buf)[0]
        payload, buf = buf[4 : 4 + size], buf[4 + size :]
        yield payload


@pytest.mark.broker
def test_an_edge_answer_between_forwarded_requests_keeps_its_place(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Metadata (forwarded), ApiVersions (the edge's), Metadata, sent in one
    write: three answers in that order, the brokers' addresses the front door's."""
    edge_store(tmp_path)
    base = free_port_base()
    metrics_port = free_port()
    while base < metrics_port <= base + 4:
        metrics_port = free_port()
    keys = {
        **upstream_keys(kraft_broker.bootstrap),
        "scram.credential.store.path": str(tmp_path / "edge.db"),
        "upstream.node.port.base": str(base),
        "scram.metrics.listener": f"127.0.0.1:{metrics_port}",
    }
    with ServeProcess(tmp_path, keys) as serve:
        login = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
        with KafkaConnection(serve.bootstrap, login, timeout=20) as conn:
            sock = conn._sock  # logged in: from here on, raw frames
            metadata = {"topics": [], "allow_auto_topic_creation": False}
            metadata |= {"include_topic_authorized_operations": False}
            software = {"client_software_name": "t", "client_software_version": "1"}
            asked = encode_request(ApiKey.METADATA, 12, 101, "t", metadata)
            sock.sendall(
                asked
                + encode_request(ApiKey.API_VERSIONS, 3, 102, "t", software)
                + encode_request(ApiKey.METADATA, 12, 103, "t", metadata)
            )
            frames = _frame_reader(sock)
            answers = [next(frames) for _ in range(3)]
            first = decode_response(ApiKey.METADATA, 12, answers[0])
            versions = decode_response(ApiKey.API_VERSIONS, 3, answers[1])
            last = decode_response(ApiKey.METADATA, 12, answers[2])
            figures = _metrics(metrics_port)
    assert [first[0], versions[0], last[0]] == [101, 102, 103]
    brokers = {(b["node_id"], b["host"], b["port"]) for b in first[1]["brokers"]}
    assert brokers == {(1, "127.0.0.1", base + 1)}
    advertised = {k["api_key"]: k["max_version"] for k in versions[1]["api_keys"]}
    # The edge's answer: Produce capped where its responses would carry endpoints.
    assert advertised[ApiKey.PRODUCE] == 9 and advertised[ApiKey.FETCH] == 15
    assert ApiKey.CREATE_DELEGATION_TOKEN in advertised
    # Counted per API, from the frames' sizes; the edge's own answer is not forwarded.
    assert figures['kafka_scram_forwarded_requests_total{api="Metadata"}'] == 2
    assert figures['kafka_scram_forwarded_request_bytes_total{api="Metadata"}'] == 2 * len(asked)
    response_bytes = 8 + len(answers[0]) + len(answers[2])  # each frame's size, then it
    assert figures['kafka_scram_forwarded_response_bytes_total{api="Metadata"}'] == response_bytes
    assert not any("ApiVersions" in name for name in figures)
    assert figures['kafka_scram_upstream_connection_events_total{event="opened"}'] == 1
    assert figures["kafka_scram_upstream_connections"] == 1


@pytest.mark.broker
def test_thousands_of_edge_answers_pipelined_in_one_write_keep_the_connection(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """5,000 ApiVersions, which the edge answers itself, in one write, then a
    Metadata: each answer hands over the next request, and all of them come
    back in order on a connection that stays open (a call per answer used to
    exhaust the stack: the transport's fatal error, logged with a traceback)."""
    keys = front_door_keys(tmp_path, kraft_broker.bootstrap)
    software = {"client_software_name": "t", "client_software_version": "1"}
    asked = 5_000
    metadata = {"topics": [], "allow_auto_topic_creation": False}
    metadata |= {"include_topic_authorized_operations": False}
    pipelined = b"".join(
        encode_request(ApiKey.API_VERSIONS, 3, i, "t", software) for i in range(asked)
    ) + encode_request(ApiKey.METADATA, 12, asked, "t", metadata)
    with ServeProcess(tmp_path, keys) as serve:
        alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
        with KafkaConnection(serve.bootstrap, alice, timeout=30) as conn:
            sock = conn._sock
            sender = threading.Thread(target=sock.sendall, args=(pipelined,), daemon=True)
            sender.start()
            frames = _frame_reader(sock)
            answered = [struct.unpack_from(">i", next(frames))[0] for _ in range(asked)]
            last = decode_response(ApiKey.METADATA, 12, next(frames))
            sender.join(timeout=10)
        log = serve.log_text()
    assert answered == list(range(asked))
    assert last[0] == asked and last[1]["brokers"], log[-3000:]
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]


def _metrics(port: int) -> dict[str, float]:
    """``/metrics`` as name (with labels) to value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


@pytest.mark.broker
def test_the_cluster_login_is_renewed_in_band_for_a_producer_that_keeps_going(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """A broker listener with connections.max.reauth.ms (3 s) closes a session
    not re-authenticated in time: the front door logs in again, in band, and
    the client never notices."""
    from kafka import KafkaConsumer
    from kafka import KafkaProducer

    keys = front_door_keys(tmp_path, kraft_broker.reauth_bootstrap)
    topic = f"reauth-{free_port()}"
    with ServeProcess(tmp_path, keys, args=("--log-level", "DEBUG")) as serve:
        login = {
            "bootstrap_servers": serve.bootstrap,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "alice",
            "sasl_plain_password": "alice-secret",
        }
        producer = KafkaProducer(**login, acks="all")
        deadline = time.monotonic() + 8
        sent = 0
        while time.monotonic() < deadline:
            producer.send(topic, f"v{sent}".encode()).get(timeout=10)
            sent += 1
            time.sleep(0.05)
        producer.close()
        consumer = KafkaConsumer(
            topic, **login, auto_offset_reset="earliest", consumer_timeout_ms=5000
        )
        got = [m.value.decode() for m in consumer]
        consumer.close()
        log = serve.log_text()
    assert got == [f"v{i}" for i in range(sent)]
    assert log.count("re-authenticated at the cluster") >= 2, log[-3000:]
    assert "the broker closed" not in log and "cannot forward" not in log


@pytest.mark.broker
def test_the_cluster_login_is_renewed_while_the_client_does_not_read(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """A client that does not read what the edge answers (ApiVersions, sent
    by the thousand) has paused our reads from the broker by the time the
    session there (3 s) is due again: the re-login reads its answer all the
    same, rather than waiting for upstream.request.timeout.ms and closing a
    connection that only had to wait for its client."""
    keys = front_door_keys(
        tmp_path, kraft_broker.reauth_bootstrap, **{"upstream.request.timeout.ms": "2000"}
    )
    software = {"client_software_name": "t", "client_software_version": "1"}
    asked = 14_000  # some 6 MB of answers: more than the kernel's buffers hold
    versions = b"".join(
        encode_request(ApiKey.API_VERSIONS, 3, i, "t", software) for i in range(asked)
    )
    metadata = {"topics": [], "allow_auto_topic_creation": False}
    metadata |= {"include_topic_authorized_operations": False}
    with ServeProcess(tmp_path, keys, args=("--log-level", "DEBUG")) as serve:
        alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
        with KafkaConnection(serve.bootstrap, alice, timeout=30) as conn:
            sock = conn._sock
            # A small receive buffer, not one the kernel grows to hold every answer.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            sender = threading.Thread(target=sock.sendall, args=(versions,), daemon=True)
            sender.start()
            # The re-login falls due at 85 % of 3 s; failing, it would close at 2 s more.
            time.sleep(6)
            frames = _frame_reader(sock)
            answered = [struct.unpack_from(">i", next(frames))[0] for _ in range(asked)]
            sender.join(timeout=10)
            sock.sendall(encode_request(ApiKey.METADATA, 12, asked, "t", metadata))
            last = decode_response(ApiKey.METADATA, 12, next(frames))
        log = serve.log_text()
    assert answered == list(range(asked))
    assert last[0] == asked and last[1]["brokers"], log[-3000:]
    assert "re-authenticated at the cluster" in log, log[-3000:]
    assert "re-authentication failed" not in log, log[-3000:]


class _CutAfterLogin(TcpProxy):
    """Relays to the broker; from its second connection on (the first is serve's
    start-up look), closes both sides right after the broker's third frame, the
    server-final of serve's login: a broker that goes as soon as it took it."""

    def _pipe(self, src: socket.socket, dst: socket.socket, pair: Pair, copy: Copy) -> None:
        if src is not pair[1] or self.accepted < 2:
            return super()._pipe(src, dst, pair, copy)
        buf, frames = b"", 0
        try:
            while frames < 3 and (data := src.recv(65536)):
                buf += data
                while frames < 3 and 4 <= len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
                    size = 4 + struct.unpack_from(">i", buf)[0]
                    dst.sendall(buf[:size])
                    buf, frames = buf[size:], frames + 1
        except OSError:
            pass
        finally:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


@pytest.mark.broker
def test_a_broker_that_closes_right_after_our_login_closes_the_client_cleanly(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """The broker closes the upstream connection as soon as it has taken our
    login, before the forwarding is attached to it: the client's connection
    closes, with one line, rather than forwarding its requests into a closed
    connection (a hang on asyncio's loop, the transport's fatal error on
    uvloop's)."""
    host, port = kraft_broker.bootstrap.rsplit(":", 1)
    metadata = {"topics": [], "allow_auto_topic_creation": False}
    metadata |= {"include_topic_authorized_operations": False}
    with _CutAfterLogin(host, int(port)) as relay:
        keys = front_door_keys(tmp_path, relay.address)
        with ServeProcess(tmp_path, keys) as serve:
            alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
            started = time.monotonic()
            try:
                with KafkaConnection(serve.bootstrap, alice, timeout=20) as conn:
                    conn._sock.sendall(encode_request(ApiKey.METADATA, 12, 7, "t", metadata))
                    conn._sock.settimeout(20)
                    got = conn._sock.recv(100)
            except (KafkaConnectionError, OSError):
                got = b""
            waited = time.monotonic() - started
            log = serve.log_text()
    assert got == b"" and waited < 10, (got, waited)
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
    assert "the broker closed" in log, log[-3000:]


def _produce_and_consume(
    bootstrap: str, topic: str, mechanism: str, n: int = 20, cafile: Path | None = None
) -> list[str]:
    from kafka import KafkaConsumer
    from kafka import KafkaProducer

    login: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_PLAINTEXT" if cafile is None else "SASL_SSL",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "alice",
        "sasl_plain_password": "alice-secret",
    }
    if cafile is not None:
        login["ssl_cafile"] = str(cafile)
    producer = KafkaProducer(**login, acks="all")
    for i in range(n):
        producer.send(topic, f"v{i}".encode())
    producer.flush(timeout=20)
    producer.close()
    consumer = KafkaConsumer(topic, **login, auto_offset_reset="earliest", consumer_timeout_ms=5000)
    got = [m.value.decode() for m in consumer]
    consumer.close()
    return got


@pytest.mark.broker
def test_the_cluster_over_sasl_ssl(kraft_broker: KafkaBroker, tmp_path: Path) -> None:
    """The upstream login over TLS, the broker's certificate checked against
    upstream.ssl.truststore.location (PEM), host name included."""
    tls = {
        "upstream.security.protocol": "SASL_SSL",
        "upstream.ssl.truststore.type": "PEM",
        "upstream.ssl.truststore.location": str(kraft_broker.ca_path),
    }
    keys = front_door_keys(tmp_path, kraft_broker.ssl_bootstrap, **tls)
    with ServeProcess(tmp_path, keys) as serve:
        got = _produce_and_consume(serve.bootstrap, f"tls-{free_port()}", "SCRAM-SHA-512")
    assert got == [f"v{i}" for i in range(20)]


@pytest.mark.broker
def test_clients_over_a_sasl_ssl_edge_listener_are_forwarded(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """The edge's own TLS: a forwarded connection's reads come from the TLS
    layer's transport, at the bootstrap listener and at the node listeners
    (which take the first listener's protocol), once the login is done."""
    from tests.support.tls import self_signed

    ca, keystore = self_signed(tmp_path, ip="127.0.0.1")
    keys = front_door_keys(tmp_path, kraft_broker.bootstrap)
    keys |= {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore)}
    serve = ServeProcess(tmp_path, keys)
    serve.properties["listeners"] = f"SASL_SSL://{serve.bootstrap}"
    with serve:
        got = _produce_and_consume(
            serve.bootstrap, f"edge-tls-{free_port()}", "SCRAM-SHA-512", cafile=ca
        )
    assert got == [f"v{i}" for i in range(20)]


@pytest.mark.broker
def test_a_cluster_certificate_nobody_trusts_is_one_line_at_start(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    from tests.support.tls import self_signed

    (tmp_path / "other").mkdir()
    other_ca, _ = self_signed(tmp_path / "other", ip="127.0.0.1")
    edge_store(tmp_path)
    config = serve_config(
        tmp_path,
        {
            **upstream_keys(kraft_broker.ssl_bootstrap),
            "upstream.security.protocol": "SASL_SSL",
            "upstream.ssl.truststore.location": str(other_ca),
        },
    )
    result = kafka_scram("serve", "--config", str(config), timeout=60)
    line = assert_one_error(result, "serve")
    assert "CERTIFICATE_VERIFY_FAILED" in line and kraft_broker.ssl_bootstrap in line, line


@pytest.mark.broker
def test_an_edge_tokens_session_is_cut_at_its_expiry(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """A token created through the front door (answered from our store) logs
    in at the edge; once it expires, the next forwarded request closes the
    connection (KIP-368: an expired session may only re-authenticate)."""
    import base64

    from tokenauth import DelegationTokenClient

    secret = {"delegation.token.secret.key": "front-door-test-secret"}
    keys = front_door_keys(tmp_path, kraft_broker.bootstrap, **secret)
    metadata = {"topics": [], "allow_auto_topic_creation": False}
    metadata |= {"include_topic_authorized_operations": False}
    with ServeProcess(tmp_path, keys) as serve:
        alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
        with KafkaConnection(serve.bootstrap, alice, timeout=20) as conn:
            token = DelegationTokenClient(conn).create_token(max_lifetime_ms=3000)
        hmac = base64.b64encode(token.hmac).decode()
        login = SaslCredentials(SCRAM_SHA_512, token.info.token_id, hmac, token_auth=True)
        with KafkaConnection(serve.bootstrap, login, timeout=20) as conn:
            assert 0 < conn.session_lifetime_ms <= 3000
            brokers = conn.request(ApiKey.METADATA, metadata, version=12)["brokers"]
            assert [b["node_id"] for b in brokers] == [1]  # the cluster's answer
            time.sleep(token.info.max_timestamp_ms / 1000 - time.time() + 0.5)
            sock = conn._sock
            sock.sendall(encode_request(ApiKey.METADATA, 12, 7, "t", metadata))
            sock.settimeout(10)
            assert sock.recv(4096) == b""  # closed, unanswered
        assert "session expired without re-authentication" in serve.log_text()


@pytest.mark.broker
def test_a_login_the_cluster_refuses_later_is_a_failed_login_not_a_hang(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """The upstream login is removed from the cluster after start: the next
    client's login fails at once with the front door's reason (error 58),
    and the log says so once, naming the login, never its password."""
    from sasl_scram.admin import KafkaConnectionError

    upstream_user = f"fd-upstream-{free_port()}"
    kraft_broker.add_user(upstream_user, "upstream-secret")
    keys = front_door_keys(tmp_path, kraft_broker.bootstrap, upstream_user, "upstream-secret")
    alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
    with ServeProcess(tmp_path, keys) as serve:
        with KafkaConnection(serve.bootstrap, alice, timeout=20):
            pass  # the cluster takes the upstream login
        kraft_broker.delete_user(upstream_user)
        kraft_broker.wait_refused(kraft_broker.credentials(upstream_user, "upstream-secret"))
        failures = []
        for _ in range(2):
            started = time.monotonic()
            with pytest.raises(KafkaConnectionError) as caught:
                KafkaConnection(serve.bootstrap, alice, timeout=20)
            failures.append((time.monotonic() - started, str(caught.value)))
        log = serve.log_text()
    for took, message in failures:
        assert took < 5 and "could not log in to the cluster" in message, failures
    assert log.count("upstream login refused") == 1, log
    assert upstream_user in log and "upstream-secret" not in log


@pytest.mark.broker
def test_a_login_the_cluster_refuses_is_not_charged_to_the_users_failure_budget(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Alice's password was right: the cluster refusing serve's own login is
    no guess of hers. With a budget of one failure and ten seconds between
    paced verdicts, three refusals in a row each still come at once, and her
    login goes through at once when the cluster takes the login again."""
    from sasl_scram.admin import KafkaConnectionError

    upstream_user = f"fd-budget-{free_port()}"
    kraft_broker.add_user(upstream_user, "upstream-secret")
    budget = {"scram.login.failure.budget": "1", "scram.login.failure.budget.interval.ms": "10000"}
    keys = front_door_keys(
        tmp_path, kraft_broker.bootstrap, upstream_user, "upstream-secret", **budget
    )
    alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
    took = []
    with ServeProcess(tmp_path, keys) as serve:
        kraft_broker.delete_user(upstream_user)
        kraft_broker.wait_refused(kraft_broker.credentials(upstream_user, "upstream-secret"))
        for _ in range(3):
            started = time.monotonic()
            with pytest.raises(KafkaConnectionError, match="could not log in to the cluster"):
                KafkaConnection(serve.bootstrap, alice, timeout=20)
            took.append(time.monotonic() - started)
        kraft_broker.add_user(upstream_user, "upstream-secret")
        kraft_broker.wait_login(kraft_broker.credentials(upstream_user, "upstream-secret"))
        started = time.monotonic()
        with KafkaConnection(serve.bootstrap, alice, timeout=20):
            took.append(time.monotonic() - started)
    assert max(took) < 5, f"paced as a guesser: {took}"


def _fetch_v4(correlation_id: int, topic: str, max_bytes: int) -> bytes:
    """A Fetch v4 request (Kafka 3.x and 4.x accept it), encoded by hand."""
    name = topic.encode()
    body = struct.pack(">iiiib", -1, 500, 1, max_bytes, 0)
    body += struct.pack(">ih", 1, len(name)) + name
    body += struct.pack(">iiqi", 1, 0, 0, max_bytes)
    header = struct.pack(">hhih", ApiKey.FETCH, 4, correlation_id, 1) + b"t"
    return struct.pack(">i", len(header) + len(body)) + header + body


@pytest.mark.broker
def test_a_client_that_does_not_read_slows_its_broker_reads_not_our_memory(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """A 25 MB Fetch response to a client that reads nothing: the front door
    pauses its reads from the broker instead of buffering it, and the whole
    response still arrives once the client reads."""
    from kafka import KafkaProducer

    topic = f"big-{free_port()}"
    producer = KafkaProducer(
        **admin_login(kraft_broker.bootstrap), acks=1, max_request_size=2 * 1024 * 1024
    )
    value = b"x" * 100_000
    for _ in range(250):
        producer.send(topic, value)
    producer.flush(timeout=60)
    producer.close()
    keys = front_door_keys(tmp_path, kraft_broker.bootstrap)
    with ServeProcess(tmp_path, keys) as serve:
        alice = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
        with KafkaConnection(serve.bootstrap, alice, timeout=30) as conn:
            sock = conn._sock
            before = serve.rss()
            sock.sendall(_fetch_v4(9, topic, 60 * 1024 * 1024))
            time.sleep(3)  # what the front door would buffer, it has read by now
            grown = serve.rss() - before
            size = struct.unpack(">i", _read_exactly(sock, 4))[0]
            payload = _read_exactly(sock, size)
    assert grown < 12 * 1024 * 1024, grown
    assert size > 25_000_000 and struct.unpack_from(">i", payload)[0] == 9


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        data = sock.recv(min(n, 1 << 20))
        assert data, "closed"
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)
