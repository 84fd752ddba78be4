"""Write the seed corpus of every fuzz target into ``fuzz/corpus/<target>/``.

    python fuzz/seeds.py

Seeds are valid inputs, made by the real encoders the way real peers send
them: a Java-style client's login frames at every version the endpoint
speaks, the KIP-554, token and ACL RPCs, every API the front door forwards
(with a response), a real SCRAM exchange's four messages,
the JAAS vectors checked against the JDK (``tests/vectors/jaas``), the
shipped ``server.properties``, and the znodes our stores write in Kafka's
layout. File names are the SHA-1 of the content, as libFuzzer names its own.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz.front_door import seeds as front_door_seeds  # noqa: E402
from sasl_scram import SCRAM_SHA_256  # noqa: E402
from sasl_scram import SCRAM_SHA_512  # noqa: E402
from sasl_scram import Grant  # noqa: E402
from sasl_scram import ScramClient  # noqa: E402
from sasl_scram import ScramCredential  # noqa: E402
from sasl_scram import ScramMechanism  # noqa: E402
from sasl_scram import ScramServer  # noqa: E402
from sasl_scram.authz import AccessControlEntry  # noqa: E402
from sasl_scram.authz import AclOperation  # noqa: E402
from sasl_scram.authz import AclPermissionType  # noqa: E402
from sasl_scram.authz import PatternType  # noqa: E402
from sasl_scram.authz import ResourcePattern  # noqa: E402
from sasl_scram.authz import ResourceType  # noqa: E402
from sasl_scram.authz import change_node  # noqa: E402
from sasl_scram.authz import encode_acl_node  # noqa: E402
from sasl_scram.config import KafkaPrincipal  # noqa: E402
from sasl_scram.kafka import API_SPECS  # noqa: E402
from sasl_scram.kafka import ApiKey  # noqa: E402
from sasl_scram.kafka import encode_request  # noqa: E402
from sasl_scram.store import ScramUpsertion  # noqa: E402
from sasl_scram.store.zookeeper import sanitize  # noqa: E402
from tokenauth import TokenInformation  # noqa: E402
from tokenauth import encode_token  # noqa: E402

CORPUS = ROOT / "fuzz" / "corpus"


def _versions(key: int) -> range:
    spec = API_SPECS[key]
    return range(spec.min_version, spec.max_version + 1)


def _exchange(mechanism: ScramMechanism, token: bool = False) -> list[bytes]:
    """The four messages of a real exchange: client-first, server-first, ..."""
    cred = ScramCredential.from_password(mechanism, "alice-secret")
    server = ScramServer(mechanism, lookup=lambda r: Grant.of(cred))
    client = ScramClient(mechanism, "alice", "alice-secret", token_auth=token)
    messages = [client.client_first()]
    messages.append(server.step(messages[-1]))
    messages.append(client.step(messages[-1]) or b"")
    messages.append(server.step(messages[-1]))
    return messages


def _frames_before_auth() -> Iterator[bytes]:
    first = _exchange(SCRAM_SHA_256)[0]
    for v in _versions(ApiKey.API_VERSIONS):
        body = {"client_software_name": "apache-kafka-java", "client_software_version": "4.4.0"}
        yield encode_request(18, v, 1, "producer-1", body)
    for v in _versions(ApiKey.SASL_HANDSHAKE):
        handshake = encode_request(17, v, 2, "producer-1", {"mechanism": "SCRAM-SHA-256"})
        yield handshake
        for a in _versions(ApiKey.SASL_AUTHENTICATE):
            # The Java client pipelines nothing; kafka-python sends these back to back.
            yield handshake + encode_request(36, a, 3, "producer-1", {"auth_bytes": first})
    yield encode_request(3, 1, 4, None, {"topics": None})


def _acl_filter() -> dict[str, Any]:
    """A DescribeAcls body, and a DeleteAcls filter: bob's READ on any topic
    pattern (ANY), from any host (``*``), allowed or denied (ANY)."""
    return {
        "resource_type_filter": 2,
        "resource_name_filter": None,
        "pattern_type_filter": 1,
        "principal_filter": "User:bob",
        "host_filter": "*",
        "operation": 3,
        "permission_type": 1,
    }


def _frames_after_auth() -> Iterator[bytes]:
    alice = {"principal_type": "User", "principal_name": "alice"}
    # A CreateAcls creation: bob may read topic "orders" (literal) from anywhere.
    acl = {
        "resource_type": 2,
        "resource_pattern_type": 3,
        "principal": "User:bob",
        "host": "*",
        "operation": 3,
        "permission_type": 3,
    }
    upsert = ScramUpsertion.from_password("bob", SCRAM_SHA_512, "bob-secret", 8192)
    bodies: dict[ApiKey, dict[str, Any]] = {
        ApiKey.METADATA: {"topics": [{"name": "t"}], "allow_auto_topic_creation": False},
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: {"users": [{"name": "alice"}, {"name": "x"}]},
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: {
            "deletions": [{"name": "carol", "mechanism": 1}],
            "upsertions": [
                {
                    "name": upsert.user,
                    "mechanism": upsert.mechanism,
                    "iterations": upsert.iterations,
                    "salt": upsert.salt,
                    "salted_password": upsert.salted_password,
                }
            ],
        },
        ApiKey.CREATE_DELEGATION_TOKEN: {
            "owner_principal_type": "User",
            "owner_principal_name": "alice",
            "renewers": [alice],
            "max_lifetime_ms": 60_000,
        },
        ApiKey.RENEW_DELEGATION_TOKEN: {"hmac": b"\x01" * 32, "renew_period_ms": 1000},
        ApiKey.EXPIRE_DELEGATION_TOKEN: {"hmac": b"\x02" * 32, "expiry_time_period_ms": -1},
        ApiKey.DESCRIBE_DELEGATION_TOKEN: {"owners": [alice]},
        ApiKey.CREATE_ACLS: {"creations": [dict(acl, resource_name="orders")]},
        ApiKey.DESCRIBE_ACLS: {**_acl_filter(), "resource_name_filter": "orders"},
        ApiKey.DELETE_ACLS: {"filters": [_acl_filter()]},
    }
    for key, body in bodies.items():
        for v in _versions(key):
            yield encode_request(int(key), v, 7, "admin-1", body)


def _server_scram() -> Iterator[bytes]:
    for mechanism in (SCRAM_SHA_256, SCRAM_SHA_512):
        for token in (False, True):
            messages = _exchange(mechanism, token)
            yield messages[0]
            yield messages[2]


def _client_scram() -> Iterator[bytes]:
    for mechanism in (SCRAM_SHA_256, SCRAM_SHA_512):
        messages = _exchange(mechanism)
        yield messages[1]
        yield messages[3]
    yield b"e=invalid-proof"


def _jaas() -> Iterator[bytes]:
    for path in sorted((ROOT / "tests" / "vectors" / "jaas").rglob("*")):
        if path.is_file() and path.stat().st_size < 4096:
            yield path.read_bytes()


def _properties() -> Iterator[bytes]:
    yield (ROOT / "config" / "server.properties").read_bytes()
    yield b"a=b\nc : d\ne f\\\n  continued\n# comment \xe9\n! bang\nkey\\u00e9=\\u0041\n"
    yield b"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
    yield b'  username="alice" password="alice-secret";\n'


def _credential_znode() -> Iterator[bytes]:
    import json

    creds = {
        m.mechanism_name: ScramCredential.from_password(m, "pw").to_kafka_string()
        for m in (SCRAM_SHA_256, SCRAM_SHA_512)
    }
    yield json.dumps({"version": 1, "config": creds}, separators=(",", ":")).encode()
    yield json.dumps({"version": 2, "entity_path": f"users/{sanitize('al@ce')}"}).encode()
    yield b'{"version":1,"config":{"producer_byte_rate":"1024"}}'


def _token_znode() -> Iterator[bytes]:
    alice, bob = KafkaPrincipal.user("alice"), KafkaPrincipal.user("bob")
    info = TokenInformation("Xx_token-id01", alice, bob, (bob,), 1, 2, 3)
    yield encode_token(info)


def _acl_znode() -> Iterator[bytes]:
    bob = AccessControlEntry("User:bob", "*", AclOperation.READ, AclPermissionType.ALLOW)
    carol = AccessControlEntry("User:carol", "10.0.0.1", AclOperation.ALL, AclPermissionType.DENY)
    yield encode_acl_node([bob, carol])
    yield encode_acl_node([bob], before_3_8=True)
    yield b"Topic:orders"
    yield change_node(ResourcePattern(ResourceType.GROUP, "g-", PatternType.PREFIXED))[1]


def _saslprep() -> Iterator[bytes]:
    # RFC 4013 section 3's examples, and mapped-to-nothing and non-ASCII spaces.
    for text in (
        "I\u00adX",
        "user",
        "USER",
        "\u00aa",
        "\u2168",
        "\u0007",
        "\u0627\u0031",
        "a\u00a0b",
    ):
        yield text.encode("utf-8")


SEEDS = {
    "frames_before_auth": _frames_before_auth,
    "frames_after_auth": _frames_after_auth,
    "front_door": front_door_seeds,
    "server_scram": _server_scram,
    "client_scram": _client_scram,
    "jaas": _jaas,
    "properties": _properties,
    "credential_znode": _credential_znode,
    "token_znode": _token_znode,
    "acl_znode": _acl_znode,
    "saslprep": _saslprep,
}


def main() -> int:
    for target, make in SEEDS.items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        count = 0
        for data in make():
            (folder / hashlib.sha1(data, usedforsecurity=False).hexdigest()).write_bytes(data)
            count += 1
        print(f"{target}: {count} seeds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
