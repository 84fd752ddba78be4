from __future__ import annotations

import base64
import itertools
import json
import re

import pytest

from sasl_scram import KafkaPrincipal
from tests.support.clock import T0
from tokenauth import DelegationToken
from tokenauth import MalformedToken
from tokenauth import TokenInformation
from tokenauth import TokenUsageError
from tokenauth import compute_hmac
from tokenauth import decode_token
from tokenauth import encode_token
from tokenauth import hmac_base64
from tokenauth import new_token_id

from .conftest import ALICE
from .conftest import BOB

# docs/kafka-facts.md §6.2, derived: secret "secretKey", token id "token1".
HMAC_VECTOR = (
    "FIC0SYBzUImN4fcJpDitFsREqy0UtLGgOHzxS0wq4u7FGkEgnvDERHzE36Pl+DjxuOW+rMTCXQQyhbmuBh0+vg=="
)


def test_hmac_vector() -> None:
    digest = compute_hmac("token1", "secretKey")
    assert len(digest) == 64
    assert hmac_base64(digest) == HMAC_VECTOR
    assert compute_hmac("token1", b"secretKey") == digest
    assert compute_hmac("token2", "secretKey") != digest
    assert compute_hmac("token1", "secretKey2") != digest


def test_hmac_refuses_empty_key() -> None:
    with pytest.raises(TokenUsageError, match="Invalid key to HMAC computation"):
        compute_hmac("token1", "")


def test_token_id_format() -> None:
    ids = {new_token_id() for _ in range(200)}
    assert len(ids) == 200
    for token_id in ids:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token_id)
        assert not token_id.startswith("-")
        raw = base64.urlsafe_b64decode(token_id + "==")
        assert raw[6] >> 4 == 4  # UUID version 4
        assert raw[8] >> 6 == 0b10  # IETF variant


def test_token_id_retries_leading_dash() -> None:
    # 0xF8 in the first byte gives index 62 ('-') for the first character.
    draws = iter([b"\xf8" + b"\x00" * 15, b"\x00" * 16])
    token_id = new_token_id(lambda n: next(draws))
    assert token_id.startswith("A")
    assert len(token_id) == 22


def test_token_id_from_injected_randomness_is_deterministic() -> None:
    counter = itertools.count()
    a = new_token_id(lambda n: bytes([next(counter) % 256] * n))
    assert a == new_token_id(lambda n: bytes([0] * n))


def info(**overrides: object) -> TokenInformation:
    values: dict[str, object] = {
        "token_id": "tok1",
        "owner": ALICE,
        "token_requester": BOB,
        "renewers": (BOB, KafkaPrincipal.user("a b*")),
        "issue_timestamp_ms": T0,
        "expiry_timestamp_ms": T0 + 10,
        "max_timestamp_ms": T0 + 20,
    }
    values.update(overrides)
    return TokenInformation(**values)  # type: ignore[arg-type]


def test_delegation_token_repr_hides_hmac() -> None:
    digest = compute_hmac("tok1", "secretKey")
    token = DelegationToken(info(), digest)
    text = repr(token) + str(token)
    assert hmac_base64(digest) not in text
    assert digest.hex() not in text
    assert "redacted" in text
    assert token.hmac_base64 == hmac_base64(digest)


def test_expiry_edges() -> None:
    token = info()
    assert not token.is_expired(T0 + 10)  # the instant itself is valid
    assert token.is_expired(T0 + 11)
    capped = info(expiry_timestamp_ms=T0 + 100)
    assert capped.is_expired(T0 + 21)  # max passed even though expiry has not


def test_visibility_vs_renewal() -> None:
    token = info(renewers=(KafkaPrincipal.user("carol"),))
    assert token.owner_or_renewer(BOB)  # requester sees it
    assert not token.may_renew(BOB)  # but may not renew
    assert token.may_renew(ALICE)
    assert token.may_renew(KafkaPrincipal.user("carol"))


def test_znode_json_is_kafkas_version_3() -> None:
    data = encode_token(info())
    assert b" " not in data  # compact, like Jackson
    document = json.loads(data)
    assert document == {
        "version": 3,
        "owner": "User%3Aalice",
        "tokenRequester": "User%3Abob",
        "renewers": ["User%3Abob", "User%3Aa%20b%2A"],
        "issueTimestamp": T0,
        "maxTimestamp": T0 + 20,
        "expiryTimestamp": T0 + 10,
        "tokenId": "tok1",
    }
    assert decode_token(data) == info()


def test_reads_versions_1_and_2_with_requester_equal_to_owner() -> None:
    for version in (1, 2):
        document: dict[str, object] = {
            "version": version,
            "owner": "User%3Aalice",
            "renewers": [],
            "issueTimestamp": 1,
            "maxTimestamp": 3,
            "expiryTimestamp": 2,
            "tokenId": "old",
        }
        token = decode_token(json.dumps(document).encode())
        assert token is not None
        assert token.owner == token.token_requester == ALICE
        assert (token.issue_timestamp_ms, token.expiry_timestamp_ms, token.max_timestamp_ms) == (
            1,
            2,
            3,
        )


def test_key_order_does_not_matter() -> None:
    document = json.loads(encode_token(info()))
    shuffled = dict(reversed(list(document.items())))
    assert decode_token(json.dumps(shuffled).encode()) == info()


def test_empty_or_non_json_is_no_token() -> None:
    assert decode_token(b"") is None
    assert decode_token(None) is None
    assert decode_token(b"not json") is None


@pytest.mark.parametrize(
    "change",
    [
        {"version": 4},
        {"version": 0},
        {"version": "3"},
        {"owner": "alice"},  # no principal type
        {"owner": "User%3"},  # bad escape
        {"tokenRequester": None},
        {"renewers": "User%3Abob"},
        {"issueTimestamp": "1"},
        {"maxTimestamp": 2**63},
        {"tokenId": 5},
    ],
)
def test_malformed_documents_raise(change: dict[str, object]) -> None:
    document = json.loads(encode_token(info()))
    document.update(change)
    with pytest.raises(MalformedToken):
        decode_token(json.dumps(document).encode())


def test_missing_key_raises() -> None:
    document = json.loads(encode_token(info()))
    del document["expiryTimestamp"]
    with pytest.raises(MalformedToken):
        decode_token(json.dumps(document).encode())
