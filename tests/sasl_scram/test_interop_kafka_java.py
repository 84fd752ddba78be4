"""Interop with Kafka's own Java implementation (kafka-clients 4.3.0).

Kafka's ScramSaslClient against our server, Kafka's ScramSaslServer against our
client (with and without tokenauth=true), credential strings both ways, and
the message grammar compared case by case.
"""

from __future__ import annotations

import itertools
import random
import string
from collections.abc import Iterator

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import AuthenticationFailed
from sasl_scram import ClientFinalMessage
from sasl_scram import ClientFirstMessage
from sasl_scram import Grant
from sasl_scram import InvalidCredentialString
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import ScramProtocolError
from sasl_scram import ScramServer
from sasl_scram import ServerFinalMessage
from sasl_scram import ServerFirstMessage
from sasl_scram import escape_username
from sasl_scram import unescape_username
from sasl_scram._messages import java_hashmap_order
from sasl_scram._messages import split_client_final
from tests.support.javaharness import JVM_DIR
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import newest_jdk
from tests.support.javaharness import unb64

pytestmark = pytest.mark.jvm

MECHS = [SCRAM_SHA_256, SCRAM_SHA_512]
_ids = itertools.count()
USERS = ["alice", "special user= test,scram", "x=3Dy", "!~"]

# A token's password is its HMAC in base64, as Kafka's Base64 encoder writes
# it: this one has a '+', a '/' and padding.
TOKEN_HMAC = "c2VjcmV0LWhtYWMtdmFsdWU+Lw=="


def new_id() -> str:
    return f"c{next(_ids)}"


def run_java_client(
    java: JavaHarness,
    mech: ScramMechanism,
    user: str,
    password: str,
    server: ScramServer,
    extensions: str = "",
) -> None:
    """Drive Kafka's ScramSaslClient against our server until both finish."""
    cid = new_id()
    assert java.call(
        "client", cid, mech.mechanism_name, b64(user), b64(password), b64(extensions)
    ) == ["ok"]
    status, c1, _ = java.call("cstep", cid, "-")
    assert status == "ok"
    s1 = server.step(unb64(c1))
    status, c2, _ = java.call("cstep", cid, b64(s1))
    assert status == "ok", unb64(c2)
    s2 = server.step(unb64(c2))
    reply = java.call("cstep", cid, b64(s2))
    assert reply[0] == "ok", unb64(reply[1])
    assert reply[1] == "null" and reply[2] == "1"  # Kafka's client verified our signature


@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize("user", USERS)
def test_kafka_client_against_our_server(
    kafka_java: JavaHarness, mech: ScramMechanism, user: str
) -> None:
    cred = ScramCredential.from_password(mech, "pässwörd-" + user)
    server = ScramServer(mech, lookup=lambda r: Grant.of(cred) if r.username == user else None)
    run_java_client(kafka_java, mech, user, "pässwörd-" + user, server)
    assert server.session.username == user and not server.session.token_authenticated


@pytest.mark.parametrize("mech", MECHS)
def test_kafka_client_with_tokenauth_against_our_server(
    kafka_java: JavaHarness, mech: ScramMechanism
) -> None:
    cred = ScramCredential.from_password(mech, TOKEN_HMAC)

    def lookup(req):  # type: ignore[no-untyped-def]
        assert req.token_auth and req.username == "tokenid-1"
        return Grant.of(cred, authorization_id="owner", expiry_ms=123)

    server = ScramServer(mech, lookup=lookup)
    run_java_client(kafka_java, mech, "tokenid-1", TOKEN_HMAC, server, "tokenauth=true")
    assert server.session.token_authenticated and server.session.authorization_id == "owner"


@pytest.mark.parametrize("mech", MECHS)
def test_kafka_client_with_several_extensions(
    kafka_java: JavaHarness, mech: ScramMechanism
) -> None:
    cred = ScramCredential.from_password(mech, "pw")
    server = ScramServer(mech, lookup=lambda r: Grant.of(cred))
    run_java_client(kafka_java, mech, "u", "pw", server, "zed=1,tokenauth=true,abc=2,foo=3")
    assert server.session.extensions["zed"] == "1"


@pytest.mark.parametrize("mech", MECHS)
def test_kafka_client_wrong_password(kafka_java: JavaHarness, mech: ScramMechanism) -> None:
    cred = ScramCredential.from_password(mech, "right")
    server = ScramServer(mech, lookup=lambda r: Grant.of(cred))
    with pytest.raises(AuthenticationFailed):
        run_java_client(kafka_java, mech, "alice", "wrong", server)


def run_java_server(
    java: JavaHarness,
    mech: ScramMechanism,
    client: ScramClient,
    kind: str,
    name: str,
    cred: ScramCredential | None,
    owner: str = "-",
) -> list[str]:
    sid = new_id()
    cred_field = b64(cred.to_kafka_string()) if cred else "-"
    owner_field = b64(owner) if owner != "-" else "-"
    assert java.call(
        "server", sid, mech.mechanism_name, kind, b64(name), cred_field, owner_field, "99"
    ) == ["ok"]
    reply = java.call("sstep", sid, b64(client.client_first()))
    if reply[0] != "ok":
        return reply
    final = client.receive_server_first(unb64(reply[1]))
    reply = java.call("sstep", sid, b64(final))
    if reply[0] != "ok":
        return reply
    client.receive_server_final(unb64(reply[1]))
    return reply


def login_to_java_server(
    java: JavaHarness,
    mech: ScramMechanism,
    client: ScramClient,
    kind: str,
    name: str,
    cred: ScramCredential,
    owner: str = "-",
) -> list[str]:
    """:func:`run_java_server` where Kafka's server must accept the login and our
    client must verify its signature; returns Kafka's reply."""
    reply = run_java_server(java, mech, client, kind, name, cred, owner)
    assert reply[0] == "ok", unb64(reply[1])
    assert client.complete
    return reply


@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize("user", USERS)
def test_our_client_against_kafka_server(
    kafka_java: JavaHarness, mech: ScramMechanism, user: str
) -> None:
    cred = ScramCredential.from_password(mech, "pässwörd")
    client = ScramClient(mech, user, "pässwörd", key_cache=None)
    reply = login_to_java_server(kafka_java, mech, client, "user", user, cred)
    assert unb64(reply[3]).decode() == user  # Kafka's authorization id


@pytest.mark.parametrize("mech", MECHS)
def test_our_token_client_against_kafka_server(
    kafka_java: JavaHarness, mech: ScramMechanism
) -> None:
    cred = ScramCredential.from_password(mech, TOKEN_HMAC)
    client = ScramClient(mech, "tok-123", TOKEN_HMAC, token_auth=True, key_cache=None)
    reply = login_to_java_server(kafka_java, mech, client, "token", "tok-123", cred, owner="bob")
    assert unb64(reply[3]) == b"bob"  # User:<owner>
    assert unb64(reply[4]) == b"true"  # negotiated tokenauth
    assert reply[5] == "99"  # CREDENTIAL.LIFETIME.MS = token expiry


@pytest.mark.parametrize("mech", MECHS)
def test_our_client_with_one_custom_extension_against_kafka_server(
    kafka_java: JavaHarness, mech: ScramMechanism
) -> None:
    cred = ScramCredential.from_password(mech, "pw")
    client = ScramClient(mech, "u", "pw", extensions={"zed": "1"}, key_cache=None)
    login_to_java_server(kafka_java, mech, client, "user", "u", cred)


def test_our_client_wrong_password_against_kafka_server(kafka_java: JavaHarness) -> None:
    cred = ScramCredential.from_password(SCRAM_SHA_256, "right")
    client = ScramClient(SCRAM_SHA_256, "alice", "wrong", key_cache=None)
    reply = run_java_server(kafka_java, SCRAM_SHA_256, client, "user", "alice", cred)
    assert reply[0] == "err"
    assert unb64(reply[1]).decode() == "SaslException: Invalid client credentials"


def test_kafka_server_refuses_unknown_user_after_client_first(kafka_java: JavaHarness) -> None:
    # The enumeration leak we fix: Kafka fails before any server-first.
    client = ScramClient(SCRAM_SHA_256, "ghost", "pw", key_cache=None)
    reply = run_java_server(kafka_java, SCRAM_SHA_256, client, "user", "alice", None)
    assert reply[0] == "err"
    assert b"Invalid user credentials" in unb64(reply[1])


@pytest.mark.parametrize("mech", MECHS)
def test_credential_strings_both_ways(kafka_java: JavaHarness, mech: ScramMechanism) -> None:
    for password in ["pencil", "pässwörd用", "a" * 100]:
        ours = ScramCredential.from_password(mech, password, iterations=8192)
        status, canonical = kafka_java.call("credparse", b64(ours.to_kafka_string()))
        assert status == "ok" and unb64(canonical).decode() == ours.to_kafka_string()
        assert kafka_java.call(
            "credverify", mech.mechanism_name, b64(ours.to_kafka_string()), b64(password)
        ) == ["ok", "1"]
        status, theirs = kafka_java.call("credmake", mech.mechanism_name, b64(password), "4096")
        assert status == "ok"
        text = unb64(theirs).decode()
        parsed = ScramCredential.from_kafka_string(text)
        assert parsed.to_kafka_string() == text
        # Kafka's salt is a base-36 string, like ours.
        assert parsed.salt.isalnum() and parsed.salt == parsed.salt.lower()
        assert parsed == ScramCredential.from_password(mech, password, salt=parsed.salt)


CRED_CASES = [
    "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=1",
    "salt=YQ,stored_key=YR==,server_key=YQ==,iterations=4096,",
    "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=4096,a=test",
    "stored_key=YQ==,server_key=YQ==,iterations=4096",
    "salt=YQ=,stored_key=YQ==,server_key=YQ==,iterations=4096",
    "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=x",
    "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=+7",
    "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=2147483648",
    ",salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=1",
    "salt=YQ==,,stored_key=YQ==,server_key=YQ==,iterations=1",
    "salt=,stored_key=,server_key=,iterations=0",
    "salt=YQ==,salt=Yg==,stored_key=YQ==,server_key=YQ==,iterations=1",
    "=x,salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=1",
    "salt=Y Q==,stored_key=YQ==,server_key=YQ==,iterations=1",
    "abc",
    "",
]


@pytest.mark.parametrize("text", CRED_CASES)
def test_credential_parser_matches_kafka(kafka_java: JavaHarness, text: str) -> None:
    reply = kafka_java.call("credparse", b64(text))
    try:
        ours: str | None = ScramCredential.from_kafka_string(text).to_kafka_string()
    except InvalidCredentialString:
        ours = None
    if reply[0] == "ok":
        assert ours == unb64(reply[1]).decode()
    else:
        assert ours is None, unb64(reply[1])


def _random_message(rng: random.Random) -> bytes:
    pieces = [
        "n,",
        ",",
        "n=",
        "r=",
        "s=",
        "i=",
        "c=",
        "p=",
        "v=",
        "e=",
        "a=",
        "m=",
        "=2C",
        "=3D",
        "biws",
        "4096",
        "0",
        "QUJD",
        "QQ==",
        "QQ=",
        "==",
        "tokenauth=true",
        "ext=1",
        "x y",
        "\x7f",
        "\x01",
        "user",
        "abc",
        "-",
        "+/",
        "é",
    ]
    templates = [
        "n,,n={u},r={n}{x}",
        "n,a={u},n={u},r={n}{x}",
        "n,,m={v},n={u},r={n}{x}",
        "r={n},s={b},i={i}{x}",
        "m={v},r={n},s={b},i={i}{x}",
        "c={b},r={n}{x},p={b}",
        "v={b}{x}",
        "e={v}",
    ]

    def frag() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3)))

    def ext() -> str:
        return "".join(
            f",{rng.choice(['a', 'tokenauth', 'ext', 'x1', ''])}={frag()}"
            for _ in range(rng.randint(0, 2))
        )

    t = rng.choice(templates)
    text = t.format(
        u=rng.choice(["alice", "a=2Cb", "a=3D", "a=b", "", frag()]),
        n=rng.choice(["abc", "a%$)", "", frag()]),
        v=rng.choice(["val", "a=b", "", frag()]),
        b=rng.choice(["", "QUJD", "QQ==", "QQ=", "biws", frag()]),
        i=rng.choice(["4096", "0", "-1", "2147483647", "2147483648", "04096", frag()]),
        x=ext(),
    )
    if rng.random() < 0.1:
        text = text.replace(",", "", 1)
    return text.encode("utf-8")


def test_message_grammar_matches_kafka(kafka_java: JavaHarness) -> None:
    """Differential: Kafka's ScramMessages parsers and ours decide alike on generated input."""
    rng = random.Random(5802)
    checked = {"cfirst": 0, "sfirst": 0, "cfinal": 0, "sfinal": 0}
    accepted = dict.fromkeys(checked, 0)
    for _ in range(1500):
        data = _random_message(rng)
        for kind in checked:
            reply = kafka_java.call(kind, b64(data))
            java_ok = reply[0] == "ok"
            try:
                if kind == "cfirst":
                    m1 = ClientFirstMessage.parse(data)
                    ours = [b64(m1.saslname), b64(m1.nonce), b64(m1.authzid)]
                    theirs = reply[1:4]
                elif kind == "sfirst":
                    m2 = ServerFirstMessage.parse(data)
                    ours = [b64(m2.nonce), b64(m2.salt), str(m2.iterations)]
                    theirs = reply[1:4]
                elif kind == "cfinal":
                    m3 = ClientFinalMessage.parse(data)
                    # The server's fast path must agree with the full parser.
                    assert split_client_final(data) == (m3.nonce, m3.proof, m3.without_proof)
                    ours = [b64(m3.nonce), b64(m3.channel_binding), b64(m3.proof)]
                    theirs = reply[1:4]
                else:
                    m4 = ServerFinalMessage.parse(data)
                    ours = [
                        b64(m4.error) if m4.error is not None else "null",
                        b64(m4.signature) if m4.signature is not None else "null",
                    ]
                    theirs = reply[1:3]
                ok = True
            except ScramProtocolError:
                ok = False
                if kind == "cfinal":
                    with pytest.raises(ScramProtocolError):
                        split_client_final(data)
            assert ok == java_ok, (kind, data, reply)
            if ok:
                assert ours == theirs, (kind, data)
                accepted[kind] += 1
            checked[kind] += 1
    # The generator must exercise both outcomes for every message type.
    assert all(n > 20 for n in accepted.values()), accepted


def test_escaping_matches_kafka(kafka_java: JavaHarness) -> None:
    rng = random.Random(7677)
    alphabet = "a=,2C3D =" + string.ascii_letters
    for _ in range(300):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
        status, escaped = kafka_java.call("saslname", b64(name))
        assert status == "ok" and unb64(escaped).decode() == escape_username(name)
        reply = kafka_java.call("username", b64(name))
        try:
            ours: str | None = unescape_username(name)
        except ScramProtocolError:
            ours = None
        if reply[0] == "ok":
            assert ours == unb64(reply[1]).decode()
        else:
            assert ours is None


@pytest.fixture(scope="module", params=["java on PATH", "JDK 19+"])
def any_jdk(request: pytest.FixtureRequest, kafka_java: JavaHarness) -> Iterator[JavaHarness]:
    """ScramHarness on the JDK on ``PATH`` (17 here), and on a JDK 19 or newer (Temurin 25
    here): JDK 19 changed how ``new HashMap<>(map)`` sizes its table (JDK-8281631)."""
    if request.param == "java on PATH":
        yield kafka_java
        return
    newer = newest_jdk(19)
    if newer is None:
        pytest.skip(f"no JDK 19 or newer in {JVM_DIR} (these machines have Temurin 25 there)")
    harness = JavaHarness("ScramHarness", java_home=newer[0])
    yield harness
    harness.close()


def test_extension_order_matches_java_hashmap(any_jdk: JavaHarness) -> None:
    """Kafka 3.x rebuilds extensions in java.util.HashMap order; our emulation and the
    order ``ScramClient(jdk=...)`` sends them in, checked on that release's JVM."""
    status, release = any_jdk.call("jdk")
    assert status == "ok"
    jdk = int(release)
    other_line = 17 if jdk >= 19 else 25
    rng = random.Random(48)
    names = [
        "tokenauth",
        "abc",
        "zed",
        "foo",
        "q",
        "ext",
        "anotherext",
        "first",
        "second",
        "x",
        "Y",
        "a",
        "b",
        "c",
        "aa",
        "BB",
        "Ab",
        "ba",
    ] + [f"k{c}" for c in string.ascii_letters]
    differs = 0
    for _ in range(400):
        keys = [k for k in rng.sample(names, rng.randint(1, 30)) if k.isalpha()]
        status, order = any_jdk.call("hashmap", b64(",".join(keys)))
        assert status == "ok"
        java_order = unb64(order).decode().split(",")
        assert java_order == java_hashmap_order(keys, jdk), keys
        client = ScramClient(SCRAM_SHA_256, "u", "p", extensions=dict.fromkeys(keys, "v"), jdk=jdk)
        # n,,n=u,r=<nonce>,<extensions>
        sent = client.client_first().decode().split(",")[4:]
        assert [kv.split("=", 1)[0] for kv in sent] == java_order, keys
        differs += java_order != java_hashmap_order(keys, other_line)
    # The key sets tell JDK 17 and 19+ apart, so the release really was checked.
    assert differs > 0


def test_kafka_4_rebuilds_a_single_extension_verbatim(kafka_java: JavaHarness) -> None:
    # Kafka 4.x keeps extensions in Map.copyOf, whose order is random per JVM run, so
    # only a single extension (tokenauth) is reliably rebuilt as sent.
    for ext in ["tokenauth=true", "abc=x", "tokenauth=TRUE"]:
        text = f"n,,n=u,r=abc,{ext}"
        status, *fields = kafka_java.call("cfirst", b64(text))
        assert status == "ok"
        assert unb64(fields[3]).decode() == ClientFirstMessage.parse(text.encode()).bare
