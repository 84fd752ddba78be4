"""Record Kafka's own answers to random authorization questions, for test_vectors.py.

Run by hand when the questions change (it needs a JDK and the Kafka libraries
`make brokers` caches): ``python -m tests.sasl_scram.authz.vectors.generate``.
It compiles ``AuthorizerVectors.java`` against Kafka 3.9.2 and 4.4.0, asks each
the same questions (``StandardAuthorizer.authorize``, ``authorizeByResourceType``,
``AclBindingFilter.matches``, the ``toString``s) and writes
``standard_authorizer.json``: each ACL set, each question and each version's
answer, with the ACL the audit line names as its index in the set.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
VERSIONS = ("3.9.2", "4.4.0")
SEED = 20241025
CASES = 400

# Names as clients use them, from a small alphabet so that literals and prefixes
# meet, and the wildcard ``*``.
NAME_CHARS = "ab-*"
PRINCIPALS = ("User:alice", "User:bob", "User:*", "Group:alice")
SESSIONS = (("User", "alice"), ("User", "bob"), ("Group", "alice"), ("User", "*"))
ACL_HOSTS = ("*", "*", "10.0.0.1", "10.0.0.2")
HOSTS = ("10.0.0.1", "10.0.0.2")
OPERATIONS = (
    "ALL",
    "READ",
    "WRITE",
    "CREATE",
    "DELETE",
    "ALTER",
    "DESCRIBE",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
)
TYPES = ("TOPIC", "GROUP")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode() or "-"


def unb64(field: str) -> str:
    return "" if field == "-" else base64.b64decode(field).decode()


def kafka_libs(version: str) -> Path:
    return Path.home() / ".cache" / "kafka-scram" / f"kafka-{version}" / "libs"


def name(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return "*"
    return "".join(rng.choice(NAME_CHARS) for _ in range(rng.choice((1, 2, 2, 3))))


def near(rng: random.Random, acls: list[list[str]]) -> str:
    """Mostly a name an ACL names, cut or extended, so that patterns meet."""
    if not acls or rng.random() < 0.25:
        return name(rng)
    stored = rng.choice(acls)[1]
    roll = rng.random()
    if roll < 0.4:
        return stored
    if roll < 0.7:
        return stored + rng.choice(NAME_CHARS)
    return stored[: rng.randint(0, len(stored))] or name(rng)


def acl(rng: random.Random) -> list[str]:
    return [
        rng.choice(TYPES),
        name(rng),
        rng.choice(("LITERAL", "LITERAL", "PREFIXED")),
        rng.choice(PRINCIPALS),
        rng.choice(ACL_HOSTS),
        rng.choice(OPERATIONS),
        rng.choice(("ALLOW", "ALLOW", "DENY")),
    ]


def aimed(rng: random.Random, acls: list[list[str]]) -> list[str]:
    """A question near a stored ACL: its type and, mostly, its principal, host and
    operation (or one it implies), on a name near its own."""
    rtype, _, _, principal, host, op, _ = rng.choice(acls)
    ptype, _, pname = principal.partition(":")
    if pname == "*" or rng.random() < 0.2:
        ptype, pname = rng.choice(SESSIONS[:3])
    if host == "*" or rng.random() < 0.2:
        host = rng.choice(HOSTS)
    if op == "ALL" or rng.random() < 0.3:
        op = rng.choice(("READ", "DESCRIBE", "WRITE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"))
    return [ptype, pname, host, op, rtype, near(rng, acls)]


def ask(rng: random.Random, acls: list[list[str]]) -> list[str]:
    """A question: mostly near a stored ACL, sometimes anyone's on any name."""
    if acls and rng.random() < 0.6:
        return aimed(rng, acls)
    return [
        *rng.choice(SESSIONS[:3] if rng.random() < 0.95 else SESSIONS[3:]),
        rng.choice(HOSTS),
        rng.choice((*OPERATIONS[1:], "READ", "DESCRIBE", "DESCRIBE_CONFIGS")),
        rng.choice(TYPES),
        near(rng, acls),
    ]


def acl_filter(rng: random.Random, acls: list[list[str]]) -> list[str | None]:
    """A DescribeAcls/DeleteAcls filter: mostly a stored ACL with fields loosened."""
    if not acls or rng.random() < 0.3:
        return [
            rng.choice(("ANY", *TYPES)),
            rng.choice((None, name(rng))),
            rng.choice(("ANY", "MATCH", "LITERAL", "PREFIXED")),
            rng.choice((None, *PRINCIPALS)),
            rng.choice((None, *ACL_HOSTS)),
            rng.choice(("ANY", *OPERATIONS)),
            rng.choice(("ANY", "ALLOW", "DENY")),
        ]
    rtype, rname, pattern, principal, host, op, permission = rng.choice(acls)
    loose = rng.random
    return [
        "ANY" if loose() < 0.3 else rtype,
        None if loose() < 0.3 else near(rng, acls) if loose() < 0.5 else rname,
        rng.choice(("ANY", "MATCH")) if loose() < 0.6 else pattern,
        None if loose() < 0.5 else principal,
        None if loose() < 0.5 else host,
        "ANY" if loose() < 0.5 else op,
        "ANY" if loose() < 0.5 else permission,
    ]


def case(rng: random.Random) -> dict[str, Any]:
    # Kafka stores an ACL once (AclCache refuses a second copy).
    acls = list({tuple(a): a for a in (acl(rng) for _ in range(rng.randint(0, 12)))}.values())
    asks = [{"q": ask(rng, acls), "kafka": {}} for _ in range(10)]
    by_type = [
        {
            "q": [
                *rng.choice(SESSIONS[:3]),
                rng.choice(HOSTS),
                rng.choice(("WRITE", "READ")),
                "TOPIC",
            ],
            "kafka": {},
        }
        for _ in range(2)
    ]
    filters = [{"q": acl_filter(rng, acls), "kafka": {}} for _ in range(4)]
    return {
        "allow_everyone": rng.random() < 0.3,
        "super_users": rng.choice(("",) * 8 + ("User:bob", " User:bob ; Group:x ;")),
        "acls": acls,
        "asks": asks,
        "by_type": by_type,
        "filters": filters,
        "order": {},
        "text": {} if rng.random() < 0.1 else None,
    }


def script(cases: list[dict[str, Any]]) -> str:
    lines = []
    for c in cases:
        lines.append(f"CASE {str(c['allow_everyone']).lower()} {b64(c['super_users'])}")
        for t, n, p, pr, h, op, perm in c["acls"]:
            lines.append(f"ACL {t} {b64(n)} {p} {b64(pr)} {b64(h)} {op} {perm}")
        for ptype, pname, host, op, t, n in (ask["q"] for ask in c["asks"]):
            lines.append(f"ASK {b64(ptype)} {b64(pname)} {host} {op} {t} {b64(n)}")
        for ptype, pname, host, op, t in (question["q"] for question in c["by_type"]):
            lines.append(f"BYTYPE {b64(ptype)} {b64(pname)} {host} {op} {t}")
        for t, n, p, pr, h, op, perm in (f["q"] for f in c["filters"]):
            fields = ["-" if v is None else b64(v) for v in (n, pr, h)]
            lines.append(f"MATCH {t} {fields[0]} {p} {fields[1]} {fields[2]} {op} {perm}")
        lines.append("ORDER")
        if c["text"] is not None:
            lines.append("TEXT")
    return "\n".join(lines) + "\n"


def run(version: str, commands: str) -> list[str]:
    libs = kafka_libs(version)
    with tempfile.TemporaryDirectory() as build:
        subprocess.run(
            ["javac", "-d", build, "-cp", f"{libs}/*", str(HERE / "AuthorizerVectors.java")],
            check=True,
        )
        done = subprocess.run(
            [
                "java",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.log.kafka.authorizer.logger=debug",
                "-cp",
                f"{libs}/*:{build}",
                "AuthorizerVectors",
            ],
            input=commands,
            capture_output=True,
            text=True,
            check=True,
        )
    return done.stdout.splitlines()


def rule_of(text: str, acls: list[list[str]]) -> str:
    """``SuperUser``, ``DefaultAllow``, ``DefaultDeny`` or ``acl:<index>``."""
    if not text.startswith("MatchingAcl("):
        return text
    flat = text.replace("StandardAcl[", "StandardAcl(").replace("])", "))")
    for index, (t, n, p, pr, h, op, perm) in enumerate(acls):
        fields = (
            f"resourceType={t}, resourceName={n}, patternType={p}, principal={pr}, "
            f"host={h}, operation={op}, permissionType={perm}"
        )
        if flat == f"MatchingAcl(acl=StandardAcl({fields}))":
            return f"acl:{index}"
    raise AssertionError(f"no ACL of the case is {text}")


def record(cases: list[dict[str, Any]], version: str, lines: list[str]) -> None:
    """Each version's answers beside each question, in the order they were asked."""
    at = iter(lines)
    for c in cases:
        for ask in c["asks"]:
            result, rule = next(at).split(" ")
            ask["kafka"][version] = f"{result} {rule_of(unb64(rule), c['acls'])}".strip()
        for question in c["by_type"]:
            question["kafka"][version] = next(at).split(" ")[0]
        for f in c["filters"]:
            f["kafka"][version] = next(at)
        c["order"][version] = [int(i) for i in next(at).strip("-,").split(",") if i]
        if c["text"] is not None:
            c["text"][version] = [unb64(t) for t in next(at).split(" ")]


def main() -> None:
    rng = random.Random(SEED)
    cases = [case(rng) for _ in range(CASES)]
    commands = script(cases)
    for version in VERSIONS:
        record(cases, version, run(version, commands))
    out = {"kafka": list(VERSIONS), "seed": SEED, "cases": cases}
    (HERE / "standard_authorizer.json").write_text(json.dumps(out, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
