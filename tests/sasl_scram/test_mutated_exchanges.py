"""The server against valid exchanges with one field mutated.

``test_fuzz.py::test_server_any_call_order`` feeds random bytes, which almost never get
past the client-first parser, let alone to a completed login. Here each example is a
real exchange for alice with one field changed: the user name, either nonce, the proof,
the channel binding, the GS2 header or an extension. Half the time the peer re-signs
what it sends with the password "pw" (RFC 5802 section 3, computed by
``tests/support/rfc5802.py`` with hashlib and hmac, not with the library), as a peer that
knows a password would; otherwise it sends alice's proof over alice's original
messages.

What must hold, against this module's own model of Kafka's rules (``ScramMessages``'
grammar, ``ScramSaslServer``'s checks): the server refuses the client-first exactly when
it breaks the grammar; it then either raises a ``ScramError`` or completes, and it
completes exactly when the proof verifies, for exactly the user the client-first names,
with a server signature that verifies. Changed nonces and proofs never complete. The
examples must reach completion in a known share of cases.
"""

from __future__ import annotations

import base64
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import pytest
from hypothesis import event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram import SCRAM_SHA_256
from sasl_scram import CredentialRequest
from sasl_scram import Grant
from sasl_scram import ScramCredential
from sasl_scram import ScramError
from sasl_scram import ScramServer
from sasl_scram import escape_username
from tests.support import rfc5802

PASSWORD = "pw"
#: Three users share the password (with their own salts); carol has another.
USERS = {
    name: ScramCredential.from_password(SCRAM_SHA_256, password, salt=salt)
    for name, password, salt in [
        ("alice", PASSWORD, b"alice-salt-0001"),
        ("bob", PASSWORD, b"bob-salt-000002"),
        ("a,b=c", PASSWORD, b"escaped-salt-03"),
        ("carol", "carols-own", b"carol-salt-0004"),
    ]
}
KNOW_PW = {"alice", "bob", "a,b=c"}
CLIENT_NONCE = "fyko+d2lbbFgONRv9qkxdawL"
#: RFC 5802 "printable": %x21-2B / %x2D-7E.
PRINTABLE = "".join(chr(c) for c in range(0x21, 0x7F) if c != 0x2C)
_BASE64_ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _same(value: str) -> str:
    return value


def _same_bytes(value: bytes) -> bytes:
    return value


@dataclass(frozen=True)
class Exchange:
    """Alice's exchange with at most one field changed; the nonce and the proof the
    server needs are known only while it runs, so those two are changed by functions."""

    kind: str = "none"
    user: str = "alice"
    gs2: str = "n,,"
    client_nonce: str = CLIENT_NONCE
    extensions: str = ""
    channel: str = "biws"
    final_nonce: Callable[[str], str] = field(default=_same, compare=False)
    proof: Callable[[bytes], bytes] = field(default=_same_bytes, compare=False)

    @property
    def bare(self) -> str:
        return f"n={escape_username(self.user)},r={self.client_nonce}{self.extensions}"


ALICE_BARE = Exchange().bare


def _ascii_text(text: str) -> bool:
    return all("\x01" <= c <= "\x7f" for c in text)


def first_is_valid(x: Exchange) -> bool:
    """Kafka's client-first grammar: ``n,[a=<authzid>],n=<saslname>,r=<printable>`` then
    ``(,[A-Za-z]+=[\\x01-\\x7F&&[^,]]+)*``; the authzid must be the user name."""
    return (
        x.user != ""
        and _ascii_text(x.user)
        and x.client_nonce != ""
        and all(c in PRINTABLE for c in x.client_nonce)
        and x.gs2 in ("n,,", "n,a=alice,")
        and all(_extension_is_valid(pair) for pair in x.extensions.split(",")[1:])
        and (x.extensions == "" or x.extensions.startswith(","))
    )


def _extension_is_valid(pair: str) -> bool:
    name, sep, value = pair.partition("=")
    return bool(sep and name.isascii() and name.isalpha() and value and _ascii_text(value))


def _is_base64(text: str) -> bool:
    body = text.rstrip("=")
    pads = len(text) - len(body)
    return len(text) % 4 == 0 and pads <= 2 and set(body) <= _BASE64_ALPHABET


def expected_user(x: Exchange, resign: bool, nonce_kept: bool, proof_kept: bool) -> str | None:
    """Who a login with a valid client-first completes as, or ``None``.

    The server signs and checks what the client sent (RFC 5802 section 3), ignores the
    c= value once it is base64 (as ``ScramSaslServer`` does), needs the nonce exactly
    (CVE-2024-56128) and finds no delegation token for ``tokenauth=true``.
    """
    extensions = dict(pair.split("=", 1) for pair in x.extensions.split(",")[1:])
    token = extensions.get("tokenauth", "").lower() == "true"
    if not _is_base64(x.channel) or not nonce_kept or not proof_kept or token:
        return None
    if not resign and (x.bare, x.channel) != (ALICE_BARE, "biws"):
        return None  # alice's proof signs alice's messages only
    return x.user if x.user in KNOW_PW else None


def _lookup(request: CredentialRequest) -> Grant | None:
    credential = USERS.get(request.username)
    return None if credential is None or request.token_auth else Grant.of(credential)


def run(x: Exchange, resign: bool) -> str:
    """One exchange against the server; checks it against the model and says how it
    ended: ``refused-first``, ``refused`` or ``complete``."""
    server = ScramServer(SCRAM_SHA_256, lookup=_lookup)
    try:
        server_first = server.step(f"{x.gs2}{x.bare}".encode()).decode()
    except ScramError:
        assert not first_is_valid(x), "a valid client-first was refused"
        return "refused-first"
    assert first_is_valid(x), "an invalid client-first was accepted"
    fields = dict(part.split("=", 1) for part in server_first.split(","))
    nonce = fields["r"]
    sent_nonce = x.final_nonce(nonce)
    without_proof = f"c={x.channel},r={sent_nonce}"
    salt, iterations = base64.b64decode(fields["s"]), int(fields["i"])
    client_key, server_key = rfc5802.keys("sha256", PASSWORD, salt, iterations)
    # Signed over what is sent, or (no password known) over alice's messages.
    signed = (
        f"{x.bare},{server_first},{without_proof}"
        if resign
        else (f"{ALICE_BARE},{server_first},c=biws,r={nonce}")
    )
    good_proof = rfc5802.client_proof("sha256", client_key, signed.encode())
    proof = x.proof(good_proof)
    final = f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
    expected = expected_user(x, resign, sent_nonce == nonce, proof == good_proof)
    try:
        server_final = server.step(final).decode()
    except ScramError:
        assert not server.complete
        assert expected is None, f"{expected} could not log in"
        return "refused"
    assert server.complete, "the final step returned without completing"
    assert server.session.username == expected, "completed for the wrong user or none"
    auth = f"{x.bare},{server_first},{without_proof}".encode()
    signature = rfc5802.server_signature("sha256", server_key, auth)
    assert server_final == "v=" + base64.b64encode(signature).decode()
    return "complete"


def _flip(bit: int) -> Callable[[bytes], bytes]:
    def change(proof: bytes) -> bytes:
        out = bytearray(proof)
        out[bit // 8 % len(out)] ^= 1 << bit % 8
        return bytes(out)

    return change


_NOT_COMMA = [chr(c) for c in range(1, 128) if c != 0x2C]
_EXTENSION = st.builds(
    ",{}={}".format,
    st.text(alphabet=string.ascii_letters, min_size=1, max_size=9),
    st.text(alphabet=_NOT_COMMA, min_size=1, max_size=6),
)
_ODD_EXTENSIONS = ["", ",abc=x", ",tokenauth=false", ",tokenauth=true", ",tokenauth=TRUE"]
_ODD_EXTENSIONS += [",tokenauth=true,tokenauth=no", ",1x=y", ",abc=", ",abc", ",=x", ",abc=\u00e9"]
KINDS = {
    "none": st.just(Exchange()),
    "user": st.one_of(
        st.sampled_from(
            ["alice", "bob", "a,b=c", "carol", "mallory", "", "al\x00ce", "alic\u00e9"]
        ),
        st.text(max_size=6),
    ).map(lambda name: Exchange("user", user=name)),
    "client-nonce": st.one_of(
        st.text(alphabet=PRINTABLE, min_size=1, max_size=12),
        st.sampled_from(["", "a b", "a,b", "\x7f", "\u00e9"]),
    ).map(lambda nonce: Exchange("client-nonce", client_nonce=nonce)),
    "final-nonce": st.one_of(
        st.sampled_from(
            [_same, lambda n: n[:-1], lambda n: n + "x", lambda n: CLIENT_NONCE, str.swapcase]
        ),
        st.text(alphabet=PRINTABLE, min_size=1, max_size=40).map(lambda t: lambda n: t),
    ).map(lambda change: Exchange("final-nonce", final_nonce=change)),
    "proof": st.one_of(
        st.integers(0, 255).map(_flip),
        st.binary(max_size=40).map(lambda b: lambda p: b),
        st.integers(0, 31).map(lambda n: lambda p: p[:n]),
    ).map(lambda change: Exchange("proof", proof=change)),
    "channel": st.one_of(
        st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
        st.sampled_from(["biws", "", "biws=", "b!ws", "bi", "====", "eSws", "bmEs"]),
    ).map(lambda c: Exchange("channel", channel=c)),
    "gs2": st.sampled_from(
        ["n,,", "n,a=alice,", "n,a=bob,", "y,,", "p=tls-unique,,", "n,a=,", ",,", "n,"]
    ).map(lambda gs2: Exchange("gs2", gs2=gs2)),
    "extensions": st.one_of(
        st.sampled_from(_ODD_EXTENSIONS), _EXTENSION, st.lists(_EXTENSION, max_size=3).map("".join)
    ).map(lambda ext: Exchange("extensions", extensions=ext)),
}


@pytest.mark.slow
def test_server_on_mutated_valid_exchanges() -> None:
    outcomes: Counter[tuple[str, str]] = Counter()

    # derandomize: the same examples each run, so the share of completions is known;
    # each kind of change is drawn as often.
    @settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @given(st.sampled_from(list(KINDS)).flatmap(KINDS.__getitem__), st.booleans())
    def check(x: Exchange, resign: bool) -> None:
        outcome = run(x, resign)
        event(f"{x.kind}: {outcome}")
        outcomes[x.kind, outcome] += 1

    check()
    total = sum(outcomes.values())
    completed = {kind for kind, outcome in outcomes if outcome == "complete"}
    # A changed proof never verifies; a changed final nonce completes only unchanged.
    assert completed == set(KINDS) - {"proof"}, outcomes
    complete = sum(n for (_, outcome), n in outcomes.items() if outcome == "complete")
    refused = total - complete
    assert complete >= total // 5 and refused >= total // 3, outcomes
    assert outcomes["proof", "refused"] > 0 and outcomes["user", "refused-first"] > 0, outcomes
