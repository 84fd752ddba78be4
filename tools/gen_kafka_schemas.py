"""Generate ``sasl_scram/kafka/_message_data.py`` from Kafka's own message specs.

Kafka's request and response schemas are JSON files (``common/message/*.json``)
inside its ``kafka-clients`` jar. This reads them from the 4.x and 3.9 jars
that ``make brokers`` caches and writes every request/response pair as plain
data (tuples of field descriptions) for :mod:`sasl_scram.kafka._message_table`
to build :class:`~sasl_scram.kafka._schema.Struct` trees from on first use.

Kafka 4.0 dropped old versions that 3.9 brokers still accept (KIP-896). Each
API's range here is the union of both; the tree comes from the 4.x file, and
for every version the 3.9 file also defines, both files must lay the fields
out the same way, else generation fails, naming the API and version.

Usage: ``python tools/gen_kafka_schemas.py [--check]`` (``--check``: exit 1
if the committed module differs from what the jars give).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "sasl_scram" / "kafka" / "_message_data.py"
CACHE = Path.home() / ".cache" / "kafka-scram"
JARS = {
    "4.4.0": CACHE / "kafka-4.4.0" / "libs" / "kafka-clients-4.4.0.jar",
    "3.9.2": CACHE / "kafka-3.9.2" / "libs" / "kafka-clients-3.9.2.jar",
}
#: Inter-broker APIs whose 3.9 layouts 4.x replaced (ZooKeeper mode's, early
#: KRaft's, and KIP-932's share-group state, unreleased in 3.9): only 4.x's
#: versions are kept. A client never sends them, and the front door forwards
#: none of them.
_BROKER_ONLY_REWORKED = frozenset({4, 5, 6, 7, 52, 63, 87})
_PRIMITIVES = frozenset(
    {"int8", "int16", "int32", "int64", "uint16", "float64", "string", "bytes", "bool", "uuid"}
)

#: One field: (name, type, since, until, nullable_since, tag, default, children).
#: ``type`` is a primitive's name, ``records``, ``[]<primitive>`` or ``struct``
#: / ``[]struct`` (then ``children`` holds the fields).
Field = tuple[Any, ...]


def snake(name: str) -> str:
    """Kafka's CamelCase field names as the codec's snake_case keys."""
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    out = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", out)
    return out.lower()


def versions(text: str) -> tuple[int, int | None] | None:
    """``"3+"``, ``"0-7"``, ``"5"`` or ``"none"`` as ``(since, until)``."""
    if text == "none":
        return None
    if text.endswith("+"):
        return int(text[:-1]), None
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def load(raw: bytes) -> dict[str, Any]:
    lines = [line for line in raw.decode().splitlines() if not line.strip().startswith("//")]
    loaded: dict[str, Any] = json.loads("\n".join(lines))
    return loaded


def _default(spec: dict[str, Any], kind: str) -> object:
    """The field's ``default`` as the codec holds it (None: the type's own)."""
    if "default" not in spec:
        return None
    value = spec["default"]
    if value == "null":
        return "null"
    if kind in {"int8", "int16", "int32", "int64", "uint16"}:
        return int(value, 0) if isinstance(value, str) else int(value)
    if kind == "bool":
        return value in (True, "true")
    if kind == "float64":
        return float(value)
    if kind == "string":
        return str(value)
    return None


def fields(
    specs: list[dict[str, Any]], common: dict[str, list[dict[str, Any]]]
) -> tuple[Field, ...]:
    out = []
    for spec in specs:
        span = versions(spec["versions"])
        if span is None:
            continue
        since, until = span
        nullable = versions(spec.get("nullableVersions", "none"))
        tagged = spec.get("tag")
        kind: str = spec["type"]
        array = kind.startswith("[]")
        element = kind[2:] if array else kind
        children: tuple[Field, ...] = ()
        if element in _PRIMITIVES or element == "records":
            shape = kind
        else:
            shape = "[]struct" if array else "struct"
            children = fields(spec.get("fields") or common[element], common)
        default = _default(spec, element) if not array else None
        out.append(
            (
                snake(spec["name"]),
                shape,
                since,
                until,
                None if nullable is None else nullable[0],
                tagged,
                default,
                children,
            )
        )
    return tuple(out)


def _messages(jar: Path) -> dict[tuple[int, str], dict[str, Any]]:
    found: dict[tuple[int, str], dict[str, Any]] = {}
    with zipfile.ZipFile(jar) as archive:
        for name in archive.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                message = load(archive.read(name))
                if message.get("type") in {"request", "response"} and "apiKey" in message:
                    found[(message["apiKey"], message["type"])] = message
    return found


def _tree(message: dict[str, Any]) -> tuple[Field, ...]:
    common = {c["name"]: c["fields"] for c in message.get("commonStructs", ())}
    return fields(message.get("fields", []), common)


def _layout(tree: tuple[Field, ...], version: int) -> list[object]:
    """The fields present at ``version``, recursively: what must agree (on the
    wire: a field renamed between the two, as 4.x did to some, still agrees)."""
    out: list[object] = []
    for _, shape, since, until, nullable, tag, default, children in tree:
        if since <= version and (until is None or version <= until):
            nullable_here = nullable is not None and version >= nullable
            out.append((shape, nullable_here, tag, default, _layout(children, version)))
    return out


class _Differs(Exception):
    pass


def _check_shared(
    name: str, kind: str, old: tuple[Field, ...], new: tuple[Field, ...], span: range
) -> None:
    for version in span:
        if _layout(old, version) != _layout(new, version):
            raise _Differs(
                f"gen_kafka_schemas: {name} {kind} v{version}: "
                "3.9.2 and 4.4.0 lay its fields out differently"
            )


def _entry(key: int, newest: dict[Any, Any], older: dict[Any, Any]) -> tuple[Any, ...]:
    """One API: name, versions, first flexible version, and its trees by version range."""
    request = newest[(key, "request")]
    low, high = versions(request["validVersions"]) or (0, 0)
    assert high is not None
    trees = tuple(_tree(newest[(key, kind)]) for kind in ("request", "response"))
    ranges = [(low, high, *trees)]
    if (key, "request") in older and key not in _BROKER_ONLY_REWORKED:
        old_low, old_high = versions(older[(key, "request")]["validVersions"]) or (0, 0)
        assert old_high is not None
        old_trees = tuple(_tree(older[(key, kind)]) for kind in ("request", "response"))
        for kind, old, new in zip(("request", "response"), old_trees, trees, strict=True):
            _check_shared(request["name"], kind, old, new, range(max(low, old_low), old_high + 1))
        if old_low < low:
            only_old = range(old_low, low)
            same = all(
                _layout(old, v) == _layout(new, v)
                for old, new in zip(old_trees, trees, strict=True)
                for v in only_old
            )
            if same:
                ranges = [(old_low, high, *trees)]
            else:
                ranges.append((old_low, low - 1, *old_trees))
            low = old_low
    flexible = versions(request.get("flexibleVersions", "none"))
    name = request["name"].removesuffix("Request")
    return (name, low, high, None if flexible is None else flexible[0], tuple(ranges))


def generate() -> str:
    newest, older = (_messages(JARS[v]) for v in ("4.4.0", "3.9.2"))
    entries = {key: _entry(key, newest, older) for key in sorted({k for k, _ in newest})}
    compact = {key: json.dumps(entry, separators=(",", ":")) for key, entry in entries.items()}
    body = "\n".join(f"    {key}: {text!r}," for key, text in compact.items())
    text = (
        '"""Kafka\'s request and response schemas, as data.\n\n'
        "Generated by tools/gen_kafka_schemas.py from the ``common/message/*.json``\n"
        "specs in kafka-clients 4.4.0 and 3.9.2: do not edit. Per API key, one JSON\n"
        "text (read on first use, so importing this costs next to nothing): name,\n"
        "lowest and highest version, first flexible version (or null), then\n"
        "``[low, high, request fields, response fields]`` per range of versions\n"
        "sharing a layout, each field ``[name, type, since, until, nullable_since,\n"
        "tag, default, children]``.\n"
        '"""\n\n'
        "from __future__ import annotations\n\n"
        "MESSAGES: dict[int, str] = {\n"
        f"{body}\n"
        "}\n"
    )
    return _formatted(text)


def _formatted(text: str) -> str:
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [str(ruff), "format", "--stdin-filename", str(OUT), "-"],
        input=text.encode(),
        capture_output=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout.decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed module")
    args = parser.parse_args()
    missing = [str(jar) for jar in JARS.values() if not jar.exists()]
    if missing:
        print(f"gen_kafka_schemas: {missing[0]} is missing: run make brokers", file=sys.stderr)
        return 2
    try:
        text = generate()
    except _Differs as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.check:
        if OUT.read_text() != text:
            print(
                f"gen_kafka_schemas: {OUT} is stale: run tools/gen_kafka_schemas.py",
                file=sys.stderr,
            )
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
