"""Known-answer tests: RFC 7677 as Kafka's ScramFormatterTest runs it, and Kafka's KRaft vector."""

from __future__ import annotations

import base64
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import Grant
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import ScramServer
from sasl_scram import _crypto
from sasl_scram import escape_username
from sasl_scram import unescape_username

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "vectors" / "kafka_scram_formatter_test.json").read_text()
)
V = VECTORS["sha256"]


def b(text: str) -> bytes:
    return base64.b64decode(text)


def test_rfc7677_intermediates() -> None:
    salted = _crypto.salted_password(SCRAM_SHA_256, b"pencil", b(V["salt"]), 4096)
    assert salted == b(V["salted_password"])
    client_key = _crypto.client_key(SCRAM_SHA_256, salted)
    assert client_key == b(V["client_key"])
    stored = _crypto.hash_digest(SCRAM_SHA_256, client_key)
    assert stored == b(V["stored_key"])
    assert _crypto.server_key(SCRAM_SHA_256, salted) == b(V["server_key"])
    signature = _crypto.hmac_digest(SCRAM_SHA_256, stored, V["auth_message"].encode())
    assert signature == b(V["client_signature"])


def test_rfc7677_credential_string() -> None:
    cred = ScramCredential.from_password(SCRAM_SHA_256, "pencil", salt=b(V["salt"]))
    assert cred.to_kafka_string() == V["credential_string"]
    assert ScramCredential.from_kafka_string(V["credential_string"]) == cred


def _run_vector_exchange(mechanism: ScramMechanism, credential: ScramCredential) -> list[bytes]:
    server = ScramServer(
        mechanism,
        lookup=lambda req: Grant.of(credential) if req.username == "user" else None,
        nonce_factory=lambda: V["server_nonce"],
    )
    client = ScramClient(
        mechanism, "user", "pencil", nonce_factory=lambda: V["client_nonce"], key_cache=None
    )
    c1 = client.client_first()
    s1 = server.step(c1)
    c2 = client.receive_server_first(s1)
    s2 = server.step(c2)
    client.receive_server_final(s2)
    assert client.complete and server.complete
    return [c1, s1, c2, s2]


def test_rfc7677_exchange_byte_for_byte() -> None:
    cred = ScramCredential.from_kafka_string(V["credential_string"])
    messages = _run_vector_exchange(SCRAM_SHA_256, cred)
    expected = [V["client_first"], V["server_first"], V["client_final"], V["server_final"]]
    assert messages == [m.encode() for m in expected]


def test_sha512_derived_vector() -> None:
    d = VECTORS["sha512"]
    cred = ScramCredential.from_password(SCRAM_SHA_512, "pencil", salt=b(V["salt"]))
    assert cred.stored_key == b(d["stored_key"])
    assert cred.server_key == b(d["server_key"])
    _, _, c2, s2 = _run_vector_exchange(SCRAM_SHA_512, cred)
    assert c2.endswith(b",p=" + d["client_proof"].encode())
    assert s2 == b"v=" + d["server_signature"].encode()


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_kraft_storage_vector(mechanism: ScramMechanism) -> None:
    k = VECTORS["kraft_storage"]
    salt = k["salt_ascii"].encode()
    salted = _crypto.salted_password(SCRAM_SHA_256, b"alice", salt, k["iterations"])
    assert salted == b(k["salted_password"])
    prefix = "sha256" if mechanism is SCRAM_SHA_256 else "sha512"
    # Kafka keys the SHA-512 MAC with the 32-byte value in testPerMechanismDataToRecord.
    cred = ScramCredential.from_salted_password(mechanism, salt, salted, k["iterations"])
    assert cred.stored_key == b(k[f"{prefix}_stored_key"])
    assert cred.server_key == b(k[f"{prefix}_server_key"])


@pytest.mark.parametrize("name", VECTORS["sasl_names"]["round_trip"])
def test_sasl_name_round_trip(name: str) -> None:
    escaped = escape_username(name)
    assert "," not in escaped
    assert "=" not in escaped.replace("=2C", "").replace("=3D", "")
    assert unescape_username(escaped) == name


def test_sasl_name_special_characters() -> None:
    for raw, escaped in VECTORS["sasl_names"]["escaped"].items():
        assert escape_username(raw) == escaped


def test_mechanism_table() -> None:
    assert SCRAM_SHA_256.type_byte == 1 and SCRAM_SHA_512.type_byte == 2
    assert SCRAM_SHA_256.min_iterations == 4096 and SCRAM_SHA_512.max_iterations == 16384
    assert ScramMechanism.from_name("SCRAM-SHA-512") is SCRAM_SHA_512
    assert ScramMechanism.from_type(1) is SCRAM_SHA_256
    assert SCRAM_SHA_256.java_name == "SCRAM_SHA_256"


def test_kafka_random_string_shape() -> None:
    samples = [_crypto.kafka_random_string() for _ in range(2000)]
    assert all(s.isalnum() and s == s.lower() and len(s) <= 26 for s in samples)
    assert all(not s.startswith("0") for s in samples)
    assert _crypto.base36(2**130 - 1) == "1omfro7zwmumr3umxudzyj6scf"
    assert _crypto.base36(0) == "0" and _crypto.base36(35) == "z" and _crypto.base36(36) == "10"
    lengths = {len(s) for s in samples}
    assert 26 in lengths and 25 in lengths


def test_nonces_never_repeat_across_threads() -> None:
    # Nonces come from a pool of CSPRNG values: two threads must never share one.
    with ThreadPoolExecutor(8) as pool:
        batches = list(
            pool.map(lambda _: [_crypto.kafka_random_string() for _ in range(1000)], range(8))
        )
    values = [value for batch in batches for value in batch]
    assert len(set(values)) == len(values) == 8000


def test_a_forked_child_never_uses_its_parents_next_nonces() -> None:
    _crypto.kafka_random_string()  # the pool now holds the parent's next values
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        os.write(write_end, " ".join(_crypto.kafka_random_string() for _ in range(5)).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        child = pipe.read().split()
    os.waitpid(pid, 0)
    parent = [_crypto.kafka_random_string() for _ in range(5)]
    assert len(child) == 5 and not set(child) & set(parent)
