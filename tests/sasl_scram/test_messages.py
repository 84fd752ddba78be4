"""Kafka's message grammar (ScramMessagesTest cases) and Java's base64 and credential rules."""

from __future__ import annotations

import pytest

from sasl_scram import Base64Error
from sasl_scram import ClientFinalMessage
from sasl_scram import ClientFirstMessage
from sasl_scram import InvalidCredentialString
from sasl_scram import ScramCredential
from sasl_scram import ScramProtocolError
from sasl_scram import ScramUsageError
from sasl_scram import ServerFinalMessage
from sasl_scram import ServerFirstMessage
from sasl_scram import java_b64decode
from sasl_scram import unescape_username
from sasl_scram._messages import java_hashmap_order
from sasl_scram._messages import java_string_hash

NONCE = "rOprNGfwEbeRWgbNEkqO"
SALT = "W22ZaJ0SNY7soEsUEjb6gQ=="
PROOF = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="

VALID_EXTENSIONS = [
    "ext=val1",
    "anotherext=name1=value1 name2=another test value \"'!$[]()",
    "first=val1,second=name1 = value ,third=123",
]
INVALID_EXTENSIONS = ["ext1=value", "ext", "ext=value1,value2", "ext=,", "ext =value"]
VALID_RESERVED = ["m=reserved-value", "m=name1=value1 name2=another test value \"'!$[]()"]
INVALID_RESERVED = ["m", "m=name,value", "m=,"]


def cf(text: str) -> ClientFirstMessage:
    return ClientFirstMessage.parse(text.encode())


class TestClientFirst:
    def test_plain(self) -> None:
        m = cf(f"n,,n=testuser,r={NONCE}")
        assert (m.saslname, m.nonce, m.authzid, m.extensions) == ("testuser", NONCE, "", ())
        assert m.bare == f"n=testuser,r={NONCE}"

    @pytest.mark.parametrize(
        ("saslname", "username"), [("test=2Cuser", "test,user"), ("test=3Duser", "test=user")]
    )
    def test_escaped_names(self, saslname: str, username: str) -> None:
        assert cf(f"n,,n={saslname},r={NONCE}").username == username

    def test_authzid(self) -> None:
        assert cf(f"n,a=testauthzid,n=testuser,r={NONCE}").authzid == "testauthzid"

    @pytest.mark.parametrize("reserved", VALID_RESERVED)
    def test_reserved_is_accepted(self, reserved: str) -> None:
        m = cf(f"n,,{reserved},n=testuser,r={NONCE}")
        assert m.reserved == reserved[2:]
        assert m.saslname == "testuser"

    @pytest.mark.parametrize("reserved", INVALID_RESERVED)
    def test_invalid_reserved(self, reserved: str) -> None:
        with pytest.raises(ScramProtocolError):
            cf(f"n,,{reserved},n=testuser,r={NONCE}")

    @pytest.mark.parametrize("ext", VALID_EXTENSIONS)
    def test_extensions(self, ext: str) -> None:
        m = cf(f"n,,n=testuser,r={NONCE},{ext}")
        assert ",".join(f"{k}={v}" for k, v in m.extensions) == ext

    @pytest.mark.parametrize("ext", INVALID_EXTENSIONS)
    def test_invalid_extensions(self, ext: str) -> None:
        with pytest.raises(ScramProtocolError):
            cf(f"n,,n=testuser,r={NONCE},{ext}")

    def test_tokenauth(self) -> None:
        m = cf(f"n,,n=testuser,r={NONCE},tokenauth=true")
        assert m.extension_map == {"tokenauth": "true"}

    def test_duplicate_extension_keeps_last(self) -> None:
        assert cf(f"n,,n=u,r={NONCE},a=1,a=2").extension_map == {"a": "2"}

    @pytest.mark.parametrize(
        "text",
        [
            f"n,x=something,n=testuser,r={NONCE}",
            f"y,,n=testuser,r={NONCE}",
            f"p=tls-unique,,n=testuser,r={NONCE}",
            f"n,,n=,r={NONCE}",
            "n,,n=testuser,r=",
            "n,,n=testuser,r=a b",
            f"n,,n=jörg,r={NONCE}",
            f"n,,n=a\x00b,r={NONCE}",
            f"n,,r={NONCE},n=testuser",
            "",
        ],
    )
    def test_rejected(self, text: str) -> None:
        with pytest.raises(ScramProtocolError):
            cf(text)

    def test_non_ascii_bytes(self) -> None:
        with pytest.raises(ScramProtocolError, match="non-ASCII"):
            ClientFirstMessage.parse(b"n,,n=\xff,r=abc")

    def test_bad_escape_fails_on_username(self) -> None:
        # '=2B' is not in the grammar at all; '=3D' and '=2C' are the only escapes.
        with pytest.raises(ScramProtocolError):
            cf(f"n,,n=a=2Bb,r={NONCE}")
        with pytest.raises(ScramProtocolError):
            unescape_username("a=2Bb")

    def test_create_escapes_and_validates(self) -> None:
        m = ClientFirstMessage.create("a,b=c", "xyz", (("tokenauth", "true"),))
        assert m.to_bytes() == b"n,,n=a=2Cb=3Dc,r=xyz,tokenauth=true"
        with pytest.raises(ScramUsageError):
            ClientFirstMessage.create("jörg", "xyz")
        with pytest.raises(ScramUsageError):
            ClientFirstMessage.create("u", "x,y")
        with pytest.raises(ScramUsageError):
            ClientFirstMessage.create("u", "x", (("ext1", "v"),))
        with pytest.raises(ScramUsageError):
            ClientFirstMessage.create("u", "x", (("ext", ""),))


class TestServerFirst:
    def test_valid(self) -> None:
        m = ServerFirstMessage.parse(f"r={NONCE},s={SALT},i=4096".encode())
        assert (m.nonce, m.iterations) == (NONCE, 4096)

    @pytest.mark.parametrize("reserved", VALID_RESERVED)
    def test_reserved(self, reserved: str) -> None:
        assert ServerFirstMessage.parse(f"{reserved},r={NONCE},s={SALT},i=4096".encode())

    @pytest.mark.parametrize("ext", VALID_EXTENSIONS)
    def test_extensions(self, ext: str) -> None:
        assert ServerFirstMessage.parse(f"r={NONCE},s={SALT},i=4096,{ext}".encode()).extensions

    @pytest.mark.parametrize(
        ("text", "detail"),
        [
            (f"r={NONCE},s={SALT},i=0", "invalid iterations 0"),
            (f"r={NONCE},s={SALT},i=2147483648", "invalid iterations"),
            (f"r={NONCE},s={SALT},i=99999999999999999999", "invalid iterations"),
            (f"r={NONCE},s==123,i=4096", "format"),
            (f"r={NONCE},invalid,s={SALT},i=4096", "format"),
            (f"r={NONCE},s={SALT},i=-1", "format"),
        ],
    )
    def test_invalid(self, text: str, detail: str) -> None:
        with pytest.raises(ScramProtocolError, match=detail):
            ServerFirstMessage.parse(text.encode())

    def test_empty_salt_is_grammatical(self) -> None:
        assert ServerFirstMessage.parse(f"r={NONCE},s=,i=4096".encode()).salt == b""

    def test_leading_zero_iterations(self) -> None:
        assert ServerFirstMessage.parse(f"r={NONCE},s={SALT},i=0004096".encode()).iterations == 4096


class TestClientFinal:
    def test_valid(self) -> None:
        m = ClientFinalMessage.parse(f"c=biws,r={NONCE},p={PROOF}".encode())
        assert m.channel_binding == b"n,,"
        assert m.without_proof == f"c=biws,r={NONCE}"
        assert "redacted" in repr(m) and PROOF not in repr(m)

    @pytest.mark.parametrize("ext", VALID_EXTENSIONS)
    def test_extensions(self, ext: str) -> None:
        m = ClientFinalMessage.parse(f"c=biws,r={NONCE},{ext},p={PROOF}".encode())
        assert m.extensions and m.without_proof == f"c=biws,r={NONCE},{ext}"

    def test_empty_base64_fields(self) -> None:
        assert ClientFinalMessage.parse(b"c=,r=abc,p=").proof == b""

    @pytest.mark.parametrize("text", [f"c=ab,r={NONCE},p={PROOF}", "p=123", f"c=biws,r={NONCE}"])
    def test_invalid(self, text: str) -> None:
        with pytest.raises(ScramProtocolError):
            ClientFinalMessage.parse(text.encode())


class TestServerFinal:
    def test_valid(self) -> None:
        assert ServerFinalMessage.parse(f"v={PROOF}".encode()).signature
        assert ServerFinalMessage.parse(b"e=other-error").error == "other-error"
        assert ServerFinalMessage.parse(f"v={PROOF},ext=val1".encode()).extensions

    @pytest.mark.parametrize("text", ["e=error1,error2", "v=1=23", "e=unknown-user,ext=val1", "e="])
    def test_invalid(self, text: str) -> None:
        with pytest.raises(ScramProtocolError):
            ServerFinalMessage.parse(text.encode())

    def test_repr_hides_signature(self) -> None:
        assert PROOF not in repr(ServerFinalMessage.parse(f"v={PROOF}".encode()))


class TestJavaBase64:
    @pytest.mark.parametrize(
        ("text", "value"),
        [("YQ==", b"a"), ("YQ", b"a"), ("YR==", b"a"), ("", b""), ("YWI=", b"ab"), ("YWI", b"ab")],
    )
    def test_accepted(self, text: str, value: bytes) -> None:
        assert java_b64decode(text) == value

    @pytest.mark.parametrize(
        "text", ["YQ=", "Y", "YQ==YQ==", "Y Q==", "YQ\n", "-_==", "YQ===", "===="]
    )
    def test_rejected(self, text: str) -> None:
        with pytest.raises(Base64Error):
            java_b64decode(text)


CRED = (
    "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,"
    "server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096"
)


class TestCredentialString:
    def test_round_trip(self) -> None:
        assert ScramCredential.from_kafka_string(CRED).to_kafka_string() == CRED

    def test_trailing_comma_and_duplicates(self) -> None:
        assert ScramCredential.from_kafka_string(CRED + ",").iterations == 4096
        assert ScramCredential.from_kafka_string(CRED + ",iterations=8192").iterations == 8192

    def test_padding_optional(self) -> None:
        unpadded = CRED.replace("gQ==", "gQ")
        assert ScramCredential.from_kafka_string(unpadded).to_kafka_string() == CRED

    @pytest.mark.parametrize(
        ("text", "detail"),
        [
            ("abc", "element 1"),
            (CRED[CRED.index(",") :], "element 1"),
            (CRED + ",a=test", "unexpected key"),
            (CRED.replace("iterations=4096", ""), "missing key"),
            (CRED.replace(",iterations", ",,iterations"), "element 4"),
            (CRED.replace("4096", "40x6"), "iterations is not an integer"),
            (CRED.replace("4096", "99999999999"), "out of range"),
            (CRED.replace("gQ==", "g Q=="), "salt is not valid base64"),
            (CRED.replace("=,iterations", "=A,iterations").replace("wfPL", "wf"), "base64|length"),
        ],
    )
    def test_rejected(self, text: str, detail: str) -> None:
        with pytest.raises(InvalidCredentialString, match=detail) as info:
            ScramCredential.from_kafka_string(text)
        # Key material never reaches the message.
        assert "WG5d8oPm" not in str(info.value) and "wfPLwcE6" not in str(info.value)

    def test_repr_hides_keys(self) -> None:
        cred = ScramCredential.from_kafka_string(CRED)
        assert "WG5d" not in repr(cred) and repr(cred) == str(cred)
        assert "stored" not in repr(cred)


class TestJavaHashMapOrder:
    def test_spec_examples(self) -> None:
        assert java_hashmap_order(["abc", "tokenauth"]) == ["tokenauth", "abc"]
        assert java_hashmap_order(["zed", "tokenauth", "abc", "foo"]) == [
            "zed",
            "abc",
            "tokenauth",
            "foo",
        ]

    def test_string_hash(self) -> None:
        # "hello".hashCode() == 99162322; "tokenauth" checked against a JVM in the interop test.
        assert java_string_hash("hello") == 99162322
        assert java_string_hash("") == 0
