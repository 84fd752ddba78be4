"""Faults of ``kafka-scram serve`` as a front door (docs/front-door.md, "Faults"),
against real Kafka brokers: a broker restarting under a producer, a client
leaving mid-frame or while serve logs in at the cluster for it, the cluster
refusing the ``upstream.`` login after start, two workers sharing the
listener and the node ports, and the cluster frozen (SIGSTOP) under logins
that need owner tokens from it.

Each fault has a bounded outcome and loses nothing acknowledged. The edge user
alice exists only in serve's SQLite store; the cluster knows only the
``upstream.`` login. The cluster unreachable at start is
``tests/sasl_scram/endpoint/test_front_door.py``'s.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import threading
import time
import urllib.request
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ScramClient
from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.store import SQLiteCredentialStore
from tests.faults.harness import Results
from tests.sasl_scram.endpoint.test_metrics import samples_of
from tests.support.endpoint_harness import seed_users
from tests.support.front_door import front_door_keys
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until
from tests.support.proc_tcp import established_to
from tests.support.serve_process import ServeProcess
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import free_port
from tokenauth import DelegationTokenClient

pytestmark = pytest.mark.broker

Body = dict[str, Any]

EDGE = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
_METADATA = {
    "topics": [],
    "allow_auto_topic_creation": False,
    "include_topic_authorized_operations": False,
}
# How soon a lost client's upstream connection, or a refused upstream login,
# must show: the event loop's next turn, plus a loaded 2-core machine.
PROMPT = 2.0


@pytest.fixture(scope="module")
def restartable_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A KRaft broker of this module's own: the suite's shared one must not restart."""
    broker = KafkaBroker("kraft", tmp_path_factory.mktemp("kafka-restart"))
    try:  # stopped even when a restart failed half-way
        broker.start()
        yield broker
    finally:
        broker.stop()


def client_login(bootstrap: str) -> dict[str, Any]:
    """kafka-python's settings for alice's login at the edge."""
    return {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "alice-secret",
    }


def read_all(bootstrap: str, topic: str, expected: set[str], timeout: float = 30) -> list[str]:
    """Every value of ``topic`` from the start, until ``expected`` are all read
    (or ``timeout``): a consumer through the front door."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, **client_login(bootstrap), auto_offset_reset="earliest")
    got: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while not expected <= set(got) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got += [r.value.decode() for r in records]
    finally:
        consumer.close()
    return got


def upstream_count(pid: int, broker: KafkaBroker) -> int:
    """``pid``'s established connections to the broker."""
    return len(established_to(broker.port, pid))


def no_upstream(pid: int, port: int) -> None:
    """Until ``pid`` holds no connection to ``port``: the start-up look's
    connection may still be closing when serve says it is ready."""
    gone = wait_until(lambda: not established_to(port, pid), 10)
    assert gone is not None, f"serve keeps {len(established_to(port, pid))} connections to {port}"


def served(serve: ServeProcess) -> int:
    assert serve.proc is not None
    return serve.proc.pid


# -- 1. a broker restart under a producer ---------------------------------------------


def test_a_broker_restart_loses_no_acknowledged_value(
    restartable_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    """The broker restarts (a controlled shutdown, then a cold start) while a
    kafka-python producer with acks=all sends through the front door: the
    producer gets disconnects, retries, reconnects through the front door and
    carries on; a consumer through it then reads every acknowledged value."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    broker = restartable_broker
    topic = unique_name("restart")
    with ServeProcess(tmp_path, front_door_keys(tmp_path, broker.bootstrap)) as serve:
        producer = KafkaProducer(
            **client_login(serve.bootstrap),
            acks="all",
            request_timeout_ms=5000,
            reconnect_backoff_max_ms=1000,
        )
        acked: list[tuple[float, str]] = []  # (when, value)
        failed: list[str] = []
        restarted: list[float] = []
        sent = 0

        def send() -> None:
            nonlocal sent
            value = f"v{sent}"
            sent += 1
            try:
                producer.send(topic, value.encode()).get(timeout=60)
                acked.append((time.monotonic(), value))
            except KafkaError:
                failed.append(value)

        def after() -> list[str]:
            """The values acknowledged once the broker was back."""
            return [v for t, v in acked if restarted and t > restarted[0]]

        while len(acked) < 10:
            send()

        def restart_broker() -> None:
            broker.restart()
            restarted.append(time.monotonic())

        restart = threading.Thread(target=restart_broker)
        started = time.monotonic()
        restart.start()
        deadline = started + 120
        while time.monotonic() < deadline and (restart.is_alive() or len(after()) < 10):
            send()
            time.sleep(0.01)
        restart.join(1)
        producer.close(timeout=10)
        values = [v for _, v in acked]
        got = read_all(serve.bootstrap, topic, set(values))
        log = serve.log_text()
    results.record(
        sent=sent,
        acked=len(acked),
        acked_after_restart=len(after()),
        failed=len(failed),
        restart_s=round(restarted[0] - started, 2) if restarted else None,
        read=len(got),
        duplicates=len(got) - len(set(got)),
    )
    assert restarted, "the broker did not come back within 120 s"
    assert len(after()) >= 10, f"the producer did not carry on: {len(acked)} of {sent} acked"
    lost = [v for v in values if v not in set(got)]
    assert not lost, f"acknowledged but not read: {lost}"
    # The front door saw its upstream connections go, and said so in one line each.
    assert "the broker closed" in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]


# -- 2. a client leaving mid-frame ----------------------------------------------------


@pytest.mark.parametrize("cut", [2, -7], ids=["in-the-size", "in-the-payload"])
def test_a_client_leaving_mid_frame_frees_its_upstream_connection_at_once(
    kraft_broker: KafkaBroker, tmp_path: Path, results: Results, cut: int
) -> None:
    """After its login a client sends part of a request frame (2 bytes of its
    size, or all but its last 7 bytes) and closes the socket: serve's
    connection to the broker goes at once, instead of waiting for the rest
    of a frame that will never come (the broker's own idle time-out is
    10 minutes, connections.max.idle.ms)."""
    with ServeProcess(tmp_path, front_door_keys(tmp_path, kraft_broker.bootstrap)) as serve:
        pid = served(serve)
        no_upstream(pid, kraft_broker.port)
        conn = KafkaConnection(serve.bootstrap, EDGE, timeout=20)
        opened = wait_until(lambda: upstream_count(pid, kraft_broker) == 1, 10)
        assert opened is not None, f"{upstream_count(pid, kraft_broker)} upstream connections"
        frame = encode_request(ApiKey.METADATA, 12, 7, "t", _METADATA)
        conn._sock.sendall(frame[:cut])
        conn.close()
        freed = wait_until(lambda: upstream_count(pid, kraft_broker) == 0, 10)
        log = serve.log_text()
    results.record(cut=cut, freed_s=None if freed is None else round(freed, 3))
    assert freed is not None and freed < PROMPT, f"upstream connection freed after {freed} s"
    assert "Traceback" not in log, log[-3000:]


def test_a_client_leaving_during_the_upstream_login_frees_that_connection(
    kraft_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    """The cluster is reached through a proxy that swallows every byte once
    serve has started: alice's login is right at the edge, and serve holds its
    verdict while it logs in at the cluster for her, which never answers.
    Alice gives up and leaves: the half-open upstream connection goes with
    her, not at the 30 s upstream time-out."""
    from sasl_scram.admin import KafkaConnectionError

    with TcpProxy("127.0.0.1", kraft_broker.port) as proxy:
        keys = front_door_keys(tmp_path, proxy.address)
        with ServeProcess(tmp_path, keys) as serve:
            pid = served(serve)
            proxy.partition("drop")
            no_upstream(pid, proxy.port)
            outcome: list[BaseException] = []

            def give_up() -> None:
                try:
                    KafkaConnection(serve.bootstrap, EDGE, timeout=3).close()
                except KafkaConnectionError as exc:  # no verdict within 3 s
                    outcome.append(exc)

            client = threading.Thread(target=give_up)
            client.start()
            opened = wait_until(lambda: len(established_to(proxy.port, pid)) == 1, 10)
            client.join(10)
            freed = wait_until(lambda: not established_to(proxy.port, pid), 10)
            log = serve.log_text()
    results.record(freed_s=None if freed is None else round(freed, 3))
    assert opened is not None, "the front door never tried the cluster"
    assert outcome, "alice heard a verdict although the cluster never answered"
    assert freed is not None and freed < PROMPT, f"upstream connection freed after {freed} s"
    assert "Traceback" not in log, log[-3000:]


# -- 3. the cluster refusing the upstream login after start ----------------------------


def _refused_login(bootstrap: str) -> float:
    """Alice's login, right at the edge, which the front door must refuse
    (the cluster refused its own): the seconds it took."""
    from sasl_scram.admin import KafkaConnectionError

    started = time.monotonic()
    with pytest.raises(KafkaConnectionError) as caught:
        KafkaConnection(bootstrap, EDGE, timeout=20).close()
    assert caught.value.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED, caught.value
    assert "could not log in to the cluster" in str(caught.value), caught.value
    return time.monotonic() - started


def test_a_refused_upstream_login_fails_new_logins_and_is_said_once(
    kraft_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    """The ``upstream.`` user's password changes on the cluster (KIP-554) after
    serve started: each new client's login fails promptly with the front
    door's reason, never left hanging; the log names the login once at
    WARNING, never a password."""
    user, first, second = unique_name("door"), "first-upstream-pw", "second-upstream-pw"
    kraft_broker.add_user(user, first)
    keys = front_door_keys(tmp_path, kraft_broker.bootstrap, user, first)
    # At DEBUG, to see every later refusal, and that no line at any level holds a password.
    with ServeProcess(tmp_path, keys, args=("--log-level", "DEBUG")) as serve:
        with KafkaConnection(serve.bootstrap, EDGE, timeout=20) as conn:
            assert conn.request(ApiKey.METADATA, _METADATA, 12)["brokers"], "not forwarding"
        kraft_broker.add_user(user, second)
        kraft_broker.wait_refused(kraft_broker.credentials(user, first))
        closed = [_refused_login(serve.bootstrap) for _ in range(3)]
        log = serve.log_text()
    results.record(closed_s=[round(t, 3) for t in closed])
    assert max(closed) < PROMPT, f"closed after {closed} s"
    refused = [line for line in log.splitlines() if "upstream login refused" in line]
    assert len(refused) == 3, log[-3000:]
    warnings = [line for line in refused if " WARNING " in line]
    assert len(warnings) == 1, refused
    assert f"the cluster refused the login of '{user}'" in warnings[0], warnings[0]
    assert first not in log and second not in log


# -- 4. two workers ---------------------------------------------------------------------


def _workers(serve: ServeProcess) -> list[int]:
    pid = served(serve)
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children]


def _spread(serve: ServeProcess, port: int, broker: KafkaBroker, n: int) -> dict[int, int]:
    """``n`` client connections to ``port``, each answered through the front
    door: how many upstream connections each worker holds while they are open."""
    conns = []
    try:
        for _ in range(n):
            conn = KafkaConnection(f"127.0.0.1:{port}", EDGE, timeout=20)
            conns.append(conn)
            assert conn.request(ApiKey.METADATA, _METADATA, 12)["brokers"]
        return {w: upstream_count(w, broker) for w in _workers(serve)}
    finally:
        for conn in conns:
            conn.close()
        gone = wait_until(lambda: not any(upstream_count(w, broker) for w in _workers(serve)), 10)
        assert gone is not None, "upstream connections outlived their clients"


def test_two_workers_both_forward_on_the_listener_and_the_node_ports(
    kraft_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    """``scram.workers=2``: the listener and the node port (SO_REUSEPORT in
    each worker) spread client connections over both workers, each of which
    forwards them; producers and consumers through them lose nothing."""
    from kafka import KafkaProducer

    keys = front_door_keys(tmp_path, kraft_broker.bootstrap, **{"scram.workers": "2"})
    node_port = int(keys["upstream.node.port.base"]) + 1
    topic = unique_name("workers")
    with ServeProcess(tmp_path, keys) as serve:
        assert len(_workers(serve)) == 2
        listener = _spread(serve, serve.port, kraft_broker, 16)
        node = _spread(serve, node_port, kraft_broker, 16)
        values = [f"v{i}" for i in range(60)]
        for part in (values[:30], values[30:]):  # two producers, their own connections
            producer = KafkaProducer(**client_login(serve.bootstrap), acks="all")
            for value in part:
                producer.send(topic, value.encode())
            producer.flush(timeout=30)
            producer.close()
        got = read_all(serve.bootstrap, topic, set(values))
        log = serve.log_text()
    results.record(listener=sorted(listener.values()), node_port=sorted(node.values()))
    for name, spread in (("listener", listener), ("node port", node)):
        assert sum(spread.values()) == 16 and all(spread.values()), (name, spread)
    assert got == values
    assert "Traceback" not in log, log[-3000:]


# -- 5. a frozen cluster under owner tokens ----------------------------------------------

#: ``scram.authentication.timeout.ms`` of the frozen-cluster test: short, so the
#: broker stays frozen for a few seconds only (its KRaft controller, in the same
#: JVM, fences a broker it has not heard from for 9 s).
FROZEN_AUTH_TIMEOUT_S = 4.0


def _frame_call(sock: socket.socket, key: int, version: int, corr: int, body: Body) -> Body:
    sock.sendall(encode_request(key, version, corr, "frozen-test", body))
    (size,) = struct.unpack(">i", _read_exactly(sock, 4))
    _, answer = decode_response(key, version, _read_exactly(sock, size))
    return answer


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _held_login(
    bootstrap: str, user: str, finals: threading.Semaphore, outcomes: list[tuple[str, float]]
) -> None:
    """``user``'s login, right at the edge, through its client-final (``finals``
    released once sent), then whatever comes: a verdict, or the connection closed."""
    host, port = bootstrap.rsplit(":", 1)
    started = time.monotonic()
    client = ScramClient(SCRAM_SHA_512, user, f"{user}-secret")
    outcome = "verdict"
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        _frame_call(sock, ApiKey.SASL_HANDSHAKE, 1, 1, {"mechanism": "SCRAM-SHA-512"})
        first = _frame_call(sock, ApiKey.SASL_AUTHENTICATE, 2, 2, {"auth_bytes": client.step(b"")})
        final = client.step(bytes(first["auth_bytes"]))
        sock.sendall(encode_request(ApiKey.SASL_AUTHENTICATE, 2, 3, "t", {"auth_bytes": final}))
        finals.release()
        try:
            if not sock.recv(4):
                outcome = "closed"
        except OSError:
            outcome = "closed"
    outcomes.append((outcome, time.monotonic() - started))


def _timed(call: Callable[[], object]) -> tuple[float, object]:
    """How long ``call`` took, and what it returned or raised."""
    started = time.monotonic()
    try:
        result: object = call()
    except KafkaConnectionError as exc:
        result = exc
    return time.monotonic() - started, result


def _token_login(bootstrap: str, mechanism: ScramMechanism, token_id: str, hmac: str) -> None:
    login = SaslCredentials(mechanism, token_id, hmac, token_auth=True)
    KafkaConnection(bootstrap, login, timeout=10).close()


def _logs_in(bootstrap: str, mechanism: ScramMechanism, token_id: str, hmac: str) -> bool:
    try:
        _token_login(bootstrap, mechanism, token_id, hmac)
    except KafkaConnectionError:
        return False
    return True


def _forwards(bootstrap: str, user: str) -> bool:
    try:
        login = SaslCredentials(SCRAM_SHA_512, user, f"{user}-secret")
        with KafkaConnection(bootstrap, login, timeout=10) as conn:
            return bool(conn.request(ApiKey.METADATA, _METADATA, 12)["brokers"])
    except KafkaConnectionError:
        return False


@dataclass
class FrozenDoor:
    """A front door's keys for a freeze, with more new users than asyncio's
    default pool has threads, and one to log in once the cluster is thawed."""

    keys: dict[str, str]
    default_pool: int
    users: list[str]
    late: str


def _frozen_door(tmp_path: Path, broker: KafkaBroker, prefix: str, **more: str) -> FrozenDoor:
    """alice a super user at the edge, and the new users (password
    ``<user>-secret``) in its store; in ``owner-token`` mode every owner is
    listed in ``upstream.owner.admins``: each is a cluster administrator on a
    broker that allows everyone on a resource without ACLs."""
    default_pool = min(32, (os.cpu_count() or 1) + 4)  # ThreadPoolExecutor's default
    users = [unique_name(f"{prefix}{i}") for i in range(default_pool + 2)]
    late = unique_name("late")
    if more.get("upstream.identity") == "owner-token":
        more["upstream.owner.admins"] = ",".join(f"User:{u}" for u in ["alice", *users, late])
    keys = front_door_keys(tmp_path, broker.bootstrap, **{"super.users": "User:alice", **more})
    edge = SQLiteCredentialStore(tmp_path / "edge.db", poll_interval=0)
    try:
        seed_users(edge, [(user, f"{user}-secret") for user in [*users, late]])
    finally:
        edge.close()
    return FrozenDoor(keys, default_pool, users, late)


def _freeze(pid: int, logins: list[threading.Thread]) -> float:
    """SIGSTOP ``pid``, then start ``logins`` once every thread of it is
    stopped (a login started before then might still be answered); the
    monotonic time of the freeze."""
    os.kill(pid, signal.SIGSTOP)
    frozen_at = time.monotonic()

    def stopped() -> bool:
        tasks = Path(f"/proc/{pid}/task")
        try:
            stats = [(t / "stat").read_text() for t in tasks.iterdir()]
        except FileNotFoundError:  # a thread gone meanwhile: look again
            return False
        states = [stat.rsplit(")", 1)[1].split()[0] for stat in stats]
        return all(state in "TtZX" for state in states)  # exiting threads count as stopped

    assert wait_until(stopped, 10, 0.01) is not None, "the broker did not stop"
    for login in logins:
        login.start()
    return frozen_at


def test_a_frozen_cluster_delays_only_the_logins_that_need_it(
    restartable_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    """An ``upstream.identity=owner-token`` front door; alice (a super user at the
    edge) logged in before the broker is frozen with SIGSTOP (its sockets still
    take bytes; nothing answers). Then more new edge users than asyncio's default
    pool has threads log in at once, each needing a token from the frozen
    cluster: each hears no verdict and is closed at the authentication time-out.
    Meanwhile the edge answers, at once, what needs nothing from the cluster but
    runs on asyncio's default pool: alice's DescribeUserScramCredentials
    (KIP-554: the store, in a thread), and a login with a wrong password for an
    edge delegation token whose SCRAM-SHA-512 keys are not derived yet (its
    credential look-up runs PBKDF2 in a thread), which the edge refuses. Once
    thawed, a new user's login is forwarded again."""
    broker = restartable_broker
    door = _frozen_door(
        tmp_path,
        broker,
        "held",
        **{
            "upstream.identity": "owner-token",
            "delegation.token.secret.key": "frozen-test-edge-token-secret",
            "scram.authentication.timeout.ms": str(int(FROZEN_AUTH_TIMEOUT_S * 1000)),
        },
    )
    keys, default_pool, held, late = door.keys, door.default_pool, door.users, door.late
    assert broker.pid is not None
    with (
        ServeProcess(tmp_path, keys) as serve,
        KafkaConnection(serve.bootstrap, EDGE, timeout=10) as alice,
    ):
        assert RemoteScramAdmin(alice).describe().results, "alice's describe before the freeze"
        token = DelegationTokenClient(alice).create_token()
        # Known to the edge (SCRAM-SHA-256 keys derived); SCRAM-SHA-512's not yet.
        assert wait_until(
            lambda: _logs_in(serve.bootstrap, SCRAM_SHA_256, token.token_id, token.hmac_base64), 10
        )
        finals = threading.Semaphore(0)
        outcomes: list[tuple[str, float]] = []
        logins = [
            threading.Thread(target=_held_login, args=(serve.bootstrap, u, finals, outcomes))
            for u in held
        ]
        try:
            frozen_at = _freeze(broker.pid, logins)
            assert all(finals.acquire(timeout=10) for _ in held), "a login stopped half-way"
            time.sleep(0.5)  # each held verdict has asked for its user's token
            describe_s, described = _timed(lambda: RemoteScramAdmin(alice).describe())
            token_s, refused = _timed(
                lambda: _token_login(serve.bootstrap, SCRAM_SHA_512, token.token_id, "wrong")
            )
            for login in logins:
                login.join(FROZEN_AUTH_TIMEOUT_S + 10)
        finally:
            os.kill(broker.pid, signal.SIGCONT)
        frozen_s = time.monotonic() - frozen_at
        recovered = wait_until(lambda: _forwards(serve.bootstrap, late), 60, 0.5)
        log = serve.log_text()
    results.record(
        default_pool=default_pool,
        describe_s=round(describe_s, 3),
        token_refused_s=round(token_s, 3),
        held_closed_s=sorted(round(s, 2) for _, s in outcomes),
        frozen_s=round(frozen_s, 2),
        recovered_s=None if recovered is None else round(recovered, 2),
    )
    assert not isinstance(described, Exception), f"describe: {described} after {describe_s} s"
    assert describe_s < PROMPT, f"alice's describe answered after {describe_s} s"
    assert isinstance(refused, KafkaConnectionError), refused
    assert refused.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED, refused
    assert token_s < PROMPT, f"the token login refused after {token_s} s"
    assert [o for o, _ in outcomes] == ["closed"] * len(held), outcomes
    for _, seconds in outcomes:
        assert FROZEN_AUTH_TIMEOUT_S - 0.5 < seconds < FROZEN_AUTH_TIMEOUT_S + PROMPT, outcomes
    assert recovered is not None, log[-3000:]
    assert "Traceback" not in log, log[-3000:]


# How long a service-mode login's verdict waits for a cluster slow to take our
# login (ProxyBounds.verdict_wait_s), and the upstream time-out the test sets.
VERDICT_WAIT_S = 1.0
FROZEN_UPSTREAM_TIMEOUT_S = 4.0


def _login_timed(bootstrap: str, user: str) -> tuple[float, KafkaConnection | Exception]:
    started = time.monotonic()
    try:
        login = SaslCredentials(SCRAM_SHA_512, user, f"{user}-secret")
        conn: KafkaConnection | Exception = KafkaConnection(bootstrap, login, timeout=10)
    except KafkaConnectionError as exc:
        conn = exc
    return time.monotonic() - started, conn


def test_a_frozen_cluster_does_not_stop_service_mode_logins(
    restartable_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    """An ``upstream.identity=service`` front door; alice logged in before the
    broker is frozen with SIGSTOP (its sockets still take bytes; nothing
    answers). More new edge users than asyncio's default pool has threads then
    log in at once: their logins need nothing from the cluster, so each hears
    its verdict after the front door's short wait for the cluster, not at a
    time-out; alice's DescribeUserScramCredentials (KIP-554) is answered at
    the edge at once. A new user's first forwarded request waits for the
    cluster and is closed at ``upstream.request.timeout.ms``. Once thawed, a
    new user's login is forwarded again."""
    broker = restartable_broker
    timeout_ms = str(int(FROZEN_UPSTREAM_TIMEOUT_S * 1000))
    metrics_port = free_port()
    door = _frozen_door(
        tmp_path,
        broker,
        "svc",
        **{
            "upstream.request.timeout.ms": timeout_ms,
            "scram.metrics.listener": f"127.0.0.1:{metrics_port}",
        },
    )
    keys, default_pool, users, late = door.keys, door.default_pool, door.users, door.late
    assert broker.pid is not None
    with (
        ServeProcess(tmp_path, keys) as serve,
        KafkaConnection(serve.bootstrap, EDGE, timeout=10) as alice,
    ):
        # alice's connection was forwarded: the cluster took the front door's login.
        assert alice.request(ApiKey.METADATA, _METADATA, 12)["brokers"], "not forwarding"
        logins: list[tuple[float, KafkaConnection | Exception]] = []
        threads = [
            threading.Thread(target=lambda u=u: logins.append(_login_timed(serve.bootstrap, u)))
            for u in users
        ]
        try:
            frozen_at = _freeze(broker.pid, threads)
            describe_s, described = _timed(lambda: RemoteScramAdmin(alice).describe())
            for thread in threads:
                thread.join(20)
            connected = [c for _, c in logins if isinstance(c, KafkaConnection)]
            waited_s, forwarded = (
                _timed(lambda: connected[0].request(ApiKey.METADATA, _METADATA, 12))
                if connected
                else (0.0, None)
            )
            # Until every upstream connection has given up, before the thaw.
            time.sleep(max(0.0, frozen_at + FROZEN_UPSTREAM_TIMEOUT_S + 1 - time.monotonic()))
        finally:
            os.kill(broker.pid, signal.SIGCONT)
            for _, conn in logins:
                if isinstance(conn, KafkaConnection):
                    conn.close()
        recovered = wait_until(lambda: _forwards(serve.bootstrap, late), 60, 0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as m:
            metrics = samples_of(m.read().decode())
        log = serve.log_text()
    login_s = sorted(round(s, 2) for s, _ in logins)
    unforwarded = metrics.get('kafka_scram_unforwarded_logins_total{reason="unreachable"}')
    results.record(
        default_pool=default_pool,
        login_s=login_s,
        describe_s=round(describe_s, 3),
        first_request_closed_s=round(waited_s, 2),
        recovered_s=None if recovered is None else round(recovered, 2),
    )
    assert not isinstance(described, Exception), f"describe: {described} after {describe_s} s"
    assert describe_s < PROMPT, f"alice's describe answered after {describe_s} s"
    failed = [c for _, c in logins if not isinstance(c, KafkaConnection)]
    assert not failed and len(logins) == len(users), failed
    for seconds in login_s:
        assert seconds < VERDICT_WAIT_S + PROMPT, login_s
    assert isinstance(forwarded, KafkaConnectionError), forwarded
    assert waited_s < FROZEN_UPSTREAM_TIMEOUT_S + PROMPT, waited_s
    # Each login told its verdict whose upstream connection never opened.
    assert unforwarded == len(users), metrics
    assert recovered is not None, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
