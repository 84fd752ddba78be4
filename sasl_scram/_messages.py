"""The four SCRAM messages, parsed and rendered with Kafka's grammar.

The patterns transcribe Kafka's ``ScramMessages`` (docs/kafka-facts.md §2.1-2.5):
only ASCII 0x01-0x7F in names and values, nonces of printable ASCII without
``,``, letters-only extension names, and base64 fields that may be empty.
Everything the Kafka parser rejects is rejected here with
:class:`ScramProtocolError`.
"""

from __future__ import annotations

import binascii
import math
import re
import struct
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from sasl_scram._b64 import decode_padded
from sasl_scram._b64 import java_b64encode
from sasl_scram._errors import ScramProtocolError
from sasl_scram._errors import ScramUsageError

__all__ = [
    "ClientFinalMessage",
    "ClientFirstMessage",
    "ServerFinalMessage",
    "ServerFirstMessage",
    "escape_username",
    "java_hashmap_order",
    "java_string_hash",
    "unescape_username",
]

_VALUE_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]"  # [\x01-\x7F&&[^=,]]
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F&&[^,]]+
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E&&[^,]]+
_SASLNAME = rf"(?:{_VALUE_SAFE}|=2C|=3D)+"
_B64C = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64C}{{4}})*(?:{_B64C}{{3}}=|{_B64C}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"

_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?P<bare>(?P<reserved>{_RESERVED})"
    rf"n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS}))"
)
_SERVER_FIRST = re.compile(
    rf"{_RESERVED}r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),"
    rf"i=(?P<iterations>[0-9]+)(?P<extensions>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})),p=(?P<proof>{_BASE64})"
)
# _CLIENT_FINAL with the base64 fields left to decode_padded (they cannot hold ',').
_CLIENT_FINAL_LOOSE = re.compile(
    rf"(?P<without_proof>c=(?P<channel>[^,]*),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})),p=(?P<proof>[^,]*)"
)
_SERVER_FINAL = re.compile(
    rf"(?:e=(?P<error>{_VALUE_SAFE}+))|(?:v=(?P<signature>{_BASE64})(?P<extensions>{_EXTENSIONS}))"
)
_EXTENSION_NAME = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(_VALUE)
_NONCE = re.compile(_PRINTABLE)
_INT_MAX = 2**31 - 1

Extensions = tuple[tuple[str, str], ...]


def escape_username(username: str) -> str:
    """RFC 5802 ``saslname``: ``=`` becomes ``=3D`` first, then ``,`` becomes ``=2C``."""
    return username.replace("=", "=3D").replace(",", "=2C")


def unescape_username(saslname: str) -> str:
    """Reverse :func:`escape_username` with Kafka's ``ScramFormatter.username`` rules."""
    text = saslname.replace("=2C", ",")
    if "=" in text.replace("=3D", ""):
        raise ScramProtocolError("Invalid username: bad '=' escape in saslname")
    return text.replace("=3D", "=")


def _decode(data: bytes, what: str) -> str:
    if type(data) is not bytes:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ScramUsageError(f"{what} must be bytes, got {type(data).__name__}")
        data = bytes(data)
    try:
        # Every pattern admits only 0x01-0x7F, so non-ASCII can never match.
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise ScramProtocolError(f"Invalid SCRAM {what} format: non-ASCII bytes") from None


def _parse_extensions(text: str) -> Extensions:
    """Kafka's ``Utils.parseMap(s, "=", ",")`` on the text after the leading comma."""
    if not text:
        return ()
    return tuple(
        (name, value) for name, _, value in (item.partition("=") for item in text[1:].split(","))
    )


def _render_extensions(extensions: Extensions) -> str:
    return "".join(f",{k}={v}" for k, v in extensions)


def _check_extensions(extensions: Extensions) -> None:
    for name, value in extensions:
        if not _EXTENSION_NAME.fullmatch(name):
            raise ScramUsageError(f"SCRAM extension name {name!r} must be letters only")
        if not _EXTENSION_VALUE.fullmatch(value):
            raise ScramUsageError(
                f"SCRAM extension {name!r} needs a non-empty ASCII value without ','"
            )


def _b64field(text: str, what: str) -> bytes:
    # The BASE64 pattern already admitted only whole, correctly padded units, which
    # binascii decodes exactly as Java does (ignoring non-zero trailing bits).
    try:
        return binascii.a2b_base64(text)
    except binascii.Error as exc:  # pragma: no cover - excluded by the grammar
        raise ScramProtocolError(f"Invalid base64 in {what}: {exc}") from None


def _match(pattern: re.Pattern[str], data: bytes, what: str) -> re.Match[str]:
    """``data`` decoded and matched whole, as ``Matcher.matches()`` in Kafka's
    ``ScramMessages``; otherwise Kafka's ``Invalid SCRAM <what> format``."""
    m = pattern.fullmatch(_decode(data, what))
    if m is None:
        raise ScramProtocolError(f"Invalid SCRAM {what} format")
    return m


def split_client_first(data: bytes) -> tuple[str, str, str, Extensions, str]:
    """The server's view of client-first: authzid, saslname, nonce, extensions, bare."""
    m = _match(_CLIENT_FIRST, data, "client first message")
    extensions = _parse_extensions(m["extensions"]) if m["extensions"] else ()
    return m["authzid"] or "", m["saslname"], m["nonce"], extensions, m["bare"]


def split_client_final(data: bytes) -> tuple[str, bytes, str]:
    """The fields a server needs from client-final: nonce, proof, message without proof.

    The server's hot path: no channel-binding decode, no extension parsing
    (Kafka ignores both), no intermediate object. The grammar is Kafka's: the
    loose pattern plus the base64 checks accept exactly what ``_CLIENT_FINAL`` does.
    """
    m = _CLIENT_FINAL_LOOSE.fullmatch(_decode(data, "client final message"))
    proof = None if m is None else decode_padded(m["proof"])
    if m is None or proof is None or decode_padded(m["channel"]) is None:
        raise ScramProtocolError("Invalid SCRAM client final message format")
    return m["nonce"], proof, m["without_proof"]


def extension_dict(extensions: Extensions) -> dict[str, str]:
    """Last value wins for a repeated name, as in Kafka's HashMap."""
    return dict(extensions)


# base64("n,,"): the GS2 header without channel binding, in every client-final.
_GS2_NO_BINDING = "biws"


@dataclass(frozen=True, slots=True)
class ClientFirstMessage:
    """``n,[a=authzid],[m=reserved,]n=saslname,r=nonce[,ext=value...]``.

    Attributes:
        saslname: The user name as on the wire, still escaped.
        nonce: The client nonce.
        authzid: The raw authorization id, "" when absent. Kafka never unescapes it.
        reserved: The ``m=`` value when present; Kafka accepts and discards it.
        extensions: ``(name, value)`` pairs in wire order.
        bare: client-first-message-bare exactly as received or rendered.
    """

    saslname: str
    nonce: str
    authzid: str = ""
    reserved: str | None = None
    extensions: Extensions = ()
    bare: str = field(default="", compare=False)

    @classmethod
    def create(
        cls,
        username: str,
        nonce: str,
        extensions: Extensions = (),
        authzid: str = "",
    ) -> ClientFirstMessage:
        """Build a message from an unescaped user name, validating every field."""
        saslname = escape_username(username)
        if not re.fullmatch(_SASLNAME, saslname):
            raise ScramUsageError(
                "SCRAM user names must be non-empty ASCII without NUL "
                "(Kafka's grammar admits only 0x01-0x7F)"
            )
        if authzid and not re.fullmatch(_SASLNAME, authzid):
            raise ScramUsageError("authzid must be a valid escaped saslname")
        if not _NONCE.fullmatch(nonce):
            raise ScramUsageError("nonce must be printable ASCII without ','")
        _check_extensions(extensions)
        bare = f"n={saslname},r={nonce}{_render_extensions(extensions)}"
        return cls(saslname, nonce, authzid, None, extensions, bare)

    @classmethod
    def parse(cls, data: bytes) -> ClientFirstMessage:
        m = _match(_CLIENT_FIRST, data, "client first message")
        reserved = m["reserved"][2:-1] if m["reserved"] else None
        return cls(
            m["saslname"],
            m["nonce"],
            m["authzid"] or "",
            reserved,
            _parse_extensions(m["extensions"]),
            m["bare"],
        )

    @property
    def username(self) -> str:
        """The unescaped user name; raises :class:`ScramProtocolError` on a bad escape."""
        return unescape_username(self.saslname)

    @property
    def extension_map(self) -> Mapping[str, str]:
        return extension_dict(self.extensions)

    @property
    def gs2_header(self) -> str:
        return f"n,a={self.authzid}," if self.authzid else "n,,"

    def to_bytes(self) -> bytes:
        return (self.gs2_header + self.bare).encode("ascii")


@dataclass(frozen=True, slots=True)
class ServerFirstMessage:
    """``r=nonce,s=salt,i=iterations``; Kafka's server never adds anything else."""

    nonce: str
    salt: bytes
    iterations: int
    extensions: Extensions = ()
    text: str = field(default="", compare=False)

    @classmethod
    def create(cls, nonce: str, salt: bytes, iterations: int) -> ServerFirstMessage:
        return cls(
            nonce, salt, iterations, (), f"r={nonce},s={java_b64encode(salt)},i={iterations}"
        )

    @classmethod
    def parse(cls, data: bytes) -> ServerFirstMessage:
        m = _match(_SERVER_FIRST, data, "server first message")
        digits = m["iterations"]
        # Integer.parseInt in Kafka's client: overflow and non-positive both fail.
        if len(digits.lstrip("0")) > 10 or int(digits) > _INT_MAX:
            raise ScramProtocolError(
                "Invalid SCRAM server first message format: invalid iterations"
            )
        iterations = int(digits)
        if iterations <= 0:
            raise ScramProtocolError(
                f"Invalid SCRAM server first message format: invalid iterations {iterations}"
            )
        return cls(
            m["nonce"],
            _b64field(m["salt"], "salt"),
            iterations,
            _parse_extensions(m["extensions"]),
            m.string,
        )

    def to_bytes(self) -> bytes:
        return self.text.encode("ascii")


@dataclass(frozen=True, slots=True)
class ClientFinalMessage:
    """``c=channel-binding,r=nonce[,ext=value...],p=proof``."""

    channel_binding: bytes
    nonce: str
    proof: bytes
    extensions: Extensions = ()
    without_proof: str = field(default="", compare=False, repr=False)

    def __repr__(self) -> str:
        return f"ClientFinalMessage(nonce={self.nonce!r}, proof=<redacted>)"

    @classmethod
    def create(
        cls, nonce: str, proof: bytes, channel_binding: bytes = b"n,,"
    ) -> ClientFinalMessage:
        binding = _GS2_NO_BINDING if channel_binding == b"n,," else java_b64encode(channel_binding)
        without_proof = f"c={binding},r={nonce}"
        return cls(channel_binding, nonce, proof, (), without_proof)

    def with_proof(self, proof: bytes) -> ClientFinalMessage:
        """The same message carrying ``proof`` (the AuthMessage needs it without)."""
        return ClientFinalMessage(
            self.channel_binding, self.nonce, proof, self.extensions, self.without_proof
        )

    @classmethod
    def parse(cls, data: bytes) -> ClientFinalMessage:
        m = _match(_CLIENT_FINAL, data, "client final message")
        return cls(
            _b64field(m["channel"], "channel binding"),
            m["nonce"],
            _b64field(m["proof"], "proof"),
            _parse_extensions(m["extensions"]),
            m["without_proof"],
        )

    def to_bytes(self) -> bytes:
        return f"{self.without_proof},p={java_b64encode(self.proof)}".encode("ascii")


@dataclass(frozen=True, slots=True)
class ServerFinalMessage:
    """``v=signature`` on success or ``e=error`` on failure."""

    signature: bytes | None = None
    error: str | None = None
    extensions: Extensions = ()

    def __repr__(self) -> str:
        if self.error is not None:
            return f"ServerFinalMessage(error={self.error!r})"
        return "ServerFinalMessage(signature=<redacted>)"

    @classmethod
    def parse(cls, data: bytes) -> ServerFinalMessage:
        m = _match(_SERVER_FINAL, data, "server final message")
        if m["error"] is not None:
            return cls(error=m["error"])
        return cls(
            signature=_b64field(m["signature"], "signature"),
            extensions=_parse_extensions(m["extensions"] or ""),
        )

    def to_bytes(self) -> bytes:
        if self.error is not None:
            return f"e={self.error}".encode("ascii")
        assert self.signature is not None
        return f"v={java_b64encode(self.signature)}".encode("ascii")


# --- Java ``HashMap`` iteration order for SCRAM extensions ---------------------
#
# Java ``HashMap`` iteration order for SCRAM extensions.
#
# Kafka keeps SCRAM extensions in a ``HashMap`` and writes them, and rebuilds the
# client-first-message-bare for the AuthMessage, in that map's iteration order
# (docs/kafka-facts.md §2.6). A client sending several extensions must send them in
# that order or the proof fails against a Kafka broker.
#
# The order is: by bucket ``spread(String.hashCode()) & (capacity - 1)``, and
# within a bucket by insertion order (resizes keep relative order). Kafka parses
# into a default map (``Utils.parseMap``) and then copies it
# (``new HashMap<>(map)`` in ``SaslExtensions``); the copy's capacity depends on
# the JDK: 17 sizes it as ``tableSizeFor((int)(s / 0.75f + 1))``, 19 and later as
# ``tableSizeFor(ceil(s / 0.75))`` (JDK-8281631). They differ for 3, 6, 12, ...
# extensions; with the single ``tokenauth`` extension Kafka uses, order is moot.

_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as an unsigned 32-bit value."""
    h = 0
    units = text.encode("utf-16-be")
    for (unit,) in struct.iter_unpack(">H", units):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h


def _bucket(key: str, capacity: int) -> int:
    h = java_string_hash(key)
    return (h ^ (h >> 16)) & (capacity - 1)


def _table_size_for(cap: int) -> int:
    n = 1
    while n < cap:
        n <<= 1
    return n


def _default_map_capacity(size: int) -> int:
    capacity = _DEFAULT_CAPACITY
    while size > capacity * _LOAD_FACTOR:
        capacity <<= 1
    return capacity


def _copy_capacity(size: int, jdk: int) -> int:
    if jdk >= 19:
        return _table_size_for(math.ceil(size / _LOAD_FACTOR))
    # float32 division as in JDK 17's putMapEntries; exact for the sizes that matter.
    ft = struct.unpack("f", struct.pack("f", size / _LOAD_FACTOR))[0] + 1.0
    return _table_size_for(int(ft))


def _iteration_order(keys: list[str], capacity: int) -> list[str]:
    return [
        key for _, key in sorted(enumerate(keys), key=lambda p: (_bucket(p[1], capacity), p[0]))
    ]


def java_hashmap_order(keys: Iterable[str], jdk: int = 17) -> list[str]:
    """Order distinct ``keys`` (given in insertion order) as Kafka iterates them.

    Args:
        keys: Extension names in the order they were first inserted.
        jdk: The Java feature release the Kafka peer runs on.
    """
    unique = list(dict.fromkeys(keys))
    if len(unique) < 2:
        return unique
    parsed = _iteration_order(unique, _default_map_capacity(len(unique)))
    return _iteration_order(parsed, _copy_capacity(len(unique), jdk))
