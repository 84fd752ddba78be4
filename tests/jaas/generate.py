"""Seeded generators of valid and near-valid JAAS inputs for the differential tests."""

from __future__ import annotations

import random

import jaas

MODULES = [
    "org.apache.kafka.common.security.scram.ScramLoginModule",
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "com.sun.security.auth.module.JndiLoginModule",
    "com.sun.security.auth.module.LdapLoginModule",
    "a.b.C",
    "m",
    "$m",
    "_m",
    "m-1",
    "m*",
    '"quoted.Module"',
    '"with space"',
    "'single.Module'",
    '""',
    "3",
    "-m",
    "é.mod",
    "m\u0085x",
    "{",
]
FLAGS = [
    "required",
    "REQUIRED",
    "Required",
    "requisite",
    "Sufficient",
    "optional",
    "OPTIONAL",
    "requıred",  # dotless i upper-cases to I in Java and Python
    "ſufficient",  # long s upper-cases to S
    "req",
    '"required"',
    "'optional'",
    "3",
    "=",
    "",
]
KEYS = [
    "username",
    "password",
    "tokenauth",
    "a",
    "x1",
    "$k",
    "_k",
    "k-1",
    "k.v",
    "k*",
    '"prop name"',
    "'q k'",
    "3",
    "9key",
    "-opt",
    "p@ss",
    "",
    "=",
]
WORD_VALUES = ["alice", "alice-secret", "val.ue", "$x_y", "pässwörd用", "true", "TRUE", "a-1.5"]
BAD_VALUES = ["3", "-1", ".5", "p@ss", "a/b", "#x", "a:b", "", "-", "a;b", "{", "}", "x*y"]
QUOTE_PIECES = [
    "a",
    " ",
    "=",
    ",",
    ";",
    "/",
    "//",
    "/*",
    "*/",
    "'",
    '\\"',
    "\\\\",
    "\\n",
    "\\t",
    "\\r",
    "\\b",
    "\\f",
    "\\a",
    "\\v",
    "\\101",
    "\\0",
    "\\07",
    "\\377",
    "\\477",
    "\\8",
    "\\u0041",
    "\\q",
    "\\\n",
    "é",
    "用",
    "😀",
    "\x85",
    "\x00",
    "${jp}",
    "${je}",
    "${missing}",
    "${}",
    "${/}",
    "${{jp}}",
    "${jp",
    "$",
    "}",
    "{",
]
SEPARATORS = [
    " ",
    " ",
    " ",
    "  ",
    "\n",
    "\t",
    "\r\n",
    "\r",
    " /* c */ ",
    " // c\n",
    "/**/",
    " # x\n",
    "",
    "/* a\nb */",
    "/*\r\n*/ ",
    "/* *\n/ */",
    "/*/ */",
    " /\n",
    " //\r",
    "\x0b",
    "\x00",
]
PROPERTIES = {"jp": "val", "je": "", "jq": "x y"}


def _sep(rng: random.Random) -> str:
    return rng.choice(SEPARATORS)


def _quoted(rng: random.Random, quote: str) -> str:
    body = "".join(rng.choice(QUOTE_PIECES) for _ in range(rng.randrange(0, 5)))
    end = quote if rng.random() > 0.03 else ""
    return quote + body + end


def _value(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.35:
        return rng.choice(WORD_VALUES)
    if r < 0.8:
        return _quoted(rng, '"')
    if r < 0.88:
        return _quoted(rng, "'")
    return rng.choice(BAD_VALUES)


def _option(rng: random.Random) -> str:
    key = rng.choice(KEYS) if rng.random() < 0.3 else rng.choice(KEYS[:10])
    eq = "=" if rng.random() > 0.04 else rng.choice(["", ":", "=="])
    return f"{key}{rng.choice(['', '', ' '])}{eq}{rng.choice(['', '', ' '])}{_value(rng)}"


def _entry(rng: random.Random) -> str:
    module = rng.choice(MODULES[:7]) if rng.random() < 0.7 else rng.choice(MODULES)
    flag = rng.choice(FLAGS[:8]) if rng.random() < 0.8 else rng.choice(FLAGS)
    parts = [module, _sep(rng) or " ", flag]
    options = [_option(rng) for _ in range(rng.randrange(0, 4))]
    if options and rng.random() < 0.15:
        options.append(options[0])  # a duplicate key: the last value wins
    for option in options:
        parts += [_sep(rng) or " ", option]
    if rng.random() > 0.08:
        parts += [rng.choice(["", " ", "\n"]), ";"]
    return "".join(parts)


def _mutate(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.1 and text:
        i = rng.randrange(len(text))
        return text[:i]
    if r < 0.2:
        i = rng.randrange(len(text) + 1)
        return (
            text[:i] + rng.choice(["'", '"', "/", ";", "=", "{", "}", "3", "\n", "\\"]) + text[i:]
        )
    return text


def _rendered_entry(rng: random.Random) -> jaas.LoginModuleEntry:
    alphabet = "aZ9_$.-= ;/'\"\\\n\r\t\x00\x7f\x85é用😀{}*,"

    def text(min_size: int = 0) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(min_size, 8)))

    options = {text(): text() for _ in range(rng.randrange(0, 4))}
    module = text(1)
    return jaas.LoginModuleEntry(module, rng.choice(list(jaas.ControlFlag)), options)


def property_inputs(seed: int, count: int) -> list[str]:
    """Valid and near-valid ``sasl.jaas.config`` values."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        r = rng.random()
        if r < 0.1:
            out.append(jaas.render_property(_rendered_entry(rng)))
            continue
        n = 1 if r < 0.9 else rng.randrange(0, 3)
        text = _sep(rng).strip(" ") + " ".join(_entry(rng) for _ in range(n)) + _sep(rng)
        out.append(_mutate(rng, text))
    return out


def _context(rng: random.Random, names: list[str]) -> str:
    name = rng.choice(names)
    parts = [name, _sep(rng) or " ", "{" if rng.random() > 0.03 else "(", _sep(rng)]
    for _ in range(rng.randrange(0, 3)):
        parts += [_entry(rng), _sep(rng) or "\n"]
    parts.append("}" if rng.random() > 0.03 else "")
    parts.append(";" if rng.random() > 0.05 else "")
    return "".join(parts)


def file_inputs(seed: int, count: int) -> list[str]:
    """Valid and near-valid static JAAS files."""
    rng = random.Random(seed)
    names = ["KafkaClient", "KafkaServer", "sasl_ssl.KafkaServer", "Client", '"Quoted Name"', "3"]
    out = []
    for _ in range(count):
        if rng.random() < 0.1:
            entries = [_rendered_entry(rng) for _ in range(rng.randrange(1, 3))]
            config = jaas.Configuration((jaas.Context(rng.choice(names[:4]), tuple(entries)),))
            out.append(jaas.render_file(config))
            continue
        blocks = [_context(rng, names) for _ in range(rng.randrange(0, 4))]
        text = "".join(b + rng.choice(["\n", "\n\n", " ", "\r\n"]) for b in blocks)
        out.append(_mutate(rng, text))
    return out
