"""Generate ``sasl_scram/kafka/_message_data.py`` from Kafka's own message specs.

Kafka's request and response schemas are JSON files (``common/message/*.json``)
inside its ``kafka-clients`` jar. This reads them from the jars of the two
Kafka versions the test suite runs (``KAFKA_VERSIONS`` of
``tools/fetch_kafka_broker.py``: 4.4.0 and 3.9.2, cached by ``make brokers``)
and writes every request/response pair as one JSON text per API key, which
:mod:`sasl_scram.kafka._message_table` turns into
:class:`~sasl_scram.kafka._schema.Struct` trees on first use.

One tree per API serves every version either Kafka defines:

- The version range is the union of both. Kafka 4.0 dropped old versions
  that 3.9 brokers still accept (KIP-896), and the APIs of ZooKeeper mode
  (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown) that 4.x
  keeps with ``"validVersions": "none"``: those come from 3.9 alone.
- A version marked unstable (``latestVersionUnstable``) is left out: a broker
  accepts it only with ``unstable.api.versions.enable``, and it may change
  before its release (3.9's share-group v0 is not 4.x's).
- The tree is 4.x's, its field names included. For every version both define,
  both files must lay the fields out the same way on the wire (types, order,
  nullability, tags, defaults), else generation fails naming the API and the
  version. The fields 4.x's file dropped with its old versions (ListOffsets
  v0's ``MaxNumOffsets``) are put back from 3.9's file, limited to those
  versions; the merged tree is then checked to lay out every version as the
  file that defines it does.

Usage: ``python tools/gen_kafka_schemas.py [--check] [--output PATH]``
(``--check``: exit 1 if the committed module differs from what the jars give;
``--output``: write there instead of the committed module).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.fetch_kafka_broker import KAFKA_VERSIONS  # noqa: E402
from tools.fetch_kafka_broker import is_fetched  # noqa: E402
from tools.fetch_kafka_broker import libs_dir  # noqa: E402

OUT = ROOT / "sasl_scram" / "kafka" / "_message_data.py"
#: The newer Kafka, whose files win, and the older one.
NEWER, OLDER = KAFKA_VERSIONS["kraft"], KAFKA_VERSIONS["zookeeper"]

_PRIMITIVES = frozenset(
    {"int8", "int16", "int32", "int64", "uint16", "float64", "string", "bytes", "bool", "uuid"}
)

#: One field: ``[name, type, since, until, nullable_since, tag, default,
#: children]``. ``type`` is a primitive's name, ``records``, ``[]<primitive>``,
#: ``struct`` or ``[]struct`` (then ``children`` holds the fields).
Field = list[Any]
#: One file's message, read: ``(name, low, high, flexible_from, fields)``.
Message = tuple[str, int, int, int | None, list[Field]]


class SpecError(Exception):
    """Kafka's files say something the codec cannot hold, or the two disagree."""


def jar(version: str) -> Path:
    return libs_dir(version) / f"kafka-clients-{version}.jar"


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
    """One spec file: JSON with whole-line ``//`` comments."""
    lines = [line for line in raw.decode().splitlines() if not line.strip().startswith("//")]
    loaded: dict[str, Any] = json.loads("\n".join(lines))
    return loaded


def _default(spec: dict[str, Any], kind: str) -> object:
    """The field's ``default`` as the codec holds it (None: the type's own)."""
    if kind == "records":
        # FieldSpec.fieldDefault: a records field's default is always null.
        return "null" if "nullableVersions" in spec else None
    if "default" not in spec:
        return None
    value = spec["default"]
    if value == "null":
        return "null"
    if kind in {"int8", "int16", "int32", "int64", "uint16"}:
        return int(value.strip(), 0) if isinstance(value, str) else int(value)
    if kind == "bool":
        return value in (True, "true")
    if kind == "float64":
        return float(value)
    if kind == "string":
        return str(value)
    return None


def _array_default(spec: dict[str, Any]) -> object:
    """An array's default: null when the JSON says so, else empty (None here)."""
    return "null" if spec.get("default") == "null" else None


def _nullable(spec: dict[str, Any], span: tuple[int, int | None], valid: range) -> int | None:
    """The first version the field may be null in.

    The codec's fields are nullable from a version on, to their last. A
    ``nullableVersions`` range that ends before the field does is taken only
    when it ends before the API's first valid version (ShareFetch's records,
    nullable in v0 alone, which 4.x no longer defines: never null).
    """
    nullable = versions(spec.get("nullableVersions", "none"))
    if nullable is None:
        return None
    since, until = nullable
    last = valid[-1] if span[1] is None else span[1]
    if until is None or until >= last:
        return since
    if until < max(span[0], valid[0]):
        return None
    raise SpecError(f"{spec['name']}: nullable in versions {since}-{until} only")


def fields(
    specs: Sequence[dict[str, Any]], common: dict[str, list[dict[str, Any]]], valid: range
) -> list[Field]:
    out: list[Field] = []
    for spec in specs:
        span = versions(spec["versions"])
        if span is None:
            continue
        kind: str = spec["type"].strip()
        array = kind.startswith("[]")
        element = kind[2:] if array else kind
        children: list[Field] = []
        if element in _PRIMITIVES or element == "records":
            shape = kind
        else:
            shape = "[]struct" if array else "struct"
            children = fields(spec.get("fields") or common[element], common, valid)
        tag = spec.get("tag")
        if tag is not None and spec.get("taggedVersions") != spec["versions"]:
            raise SpecError(f"{spec['name']}: tagged in {spec.get('taggedVersions')} only")
        out.append(
            [
                snake(spec["name"]),
                shape,
                *span,
                _nullable(spec, span, valid),
                # 3.9's files write some tags as strings ("0").
                None if tag is None else int(tag),
                _default(spec, element) if not array else _array_default(spec),
                children,
            ]
        )
    names = [f[0] for f in out]
    if len(set(names)) != len(names):
        raise SpecError(f"two fields share a snake_case name in {names}")
    return out


def stable_range(message: dict[str, Any]) -> tuple[int, int] | None:
    """``validVersions`` without an unstable latest version; None if none is left."""
    span = versions(message["validVersions"])
    if span is None:
        return None
    low, high = span
    assert high is not None
    if message.get("latestVersionUnstable"):
        high -= 1
    return (low, high) if low <= high else None


def read_jar(path: Path) -> dict[int, tuple[Message, Message]]:
    """Every API of one kafka-clients jar that has a stable version: its
    request and response, read."""
    found: dict[tuple[int, str], dict[str, Any]] = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                message = load(archive.read(name))
                if message.get("type") in {"request", "response"} and "apiKey" in message:
                    found[(message["apiKey"], message["type"])] = message
    apis: dict[int, tuple[Message, Message]] = {}
    for key in sorted(k for k, kind in found if kind == "request"):
        request, response = found[(key, "request")], found[(key, "response")]
        span = stable_range(request)
        if span is not None:
            flexible = versions(request.get("flexibleVersions", "none"))
            first_flexible = None if flexible is None else flexible[0]
            name = request["name"].removesuffix("Request")
            valid = range(span[0], span[1] + 1)
            apis[key] = (
                (name, *span, first_flexible, _tree(request, valid)),
                (name, *span, first_flexible, _tree(response, valid)),
            )
    return apis


def _tree(message: dict[str, Any], valid: range) -> list[Field]:
    common = {c["name"]: c["fields"] for c in message.get("commonStructs", ())}
    return fields(message.get("fields", []), common, valid)


def layout(tree: Sequence[Field], version: int) -> list[object]:
    """What reaches the wire at ``version``, recursively: every field present,
    with its shape, nullability, tag and default (the names may differ: 4.x
    renamed some fields of versions both define)."""
    return [
        (shape, nullable is not None and version >= nullable, tag, default, layout(kids, version))
        for _, shape, since, until, nullable, tag, default, kids in tree
        if since <= version and (until is None or version <= until)
    ]


def merge(newer: list[Field], older: Sequence[Field], below: int) -> list[Field]:
    """``newer``'s fields, with ``older``'s that exist before version ``below``
    (where only the older file defines the API) put back in their place."""
    merged = [list(f) for f in newer]
    after = 0  # where the next field taken from ``older`` goes
    for field in older:
        match = next((i for i, f in enumerate(merged) if f[0] == field[0]), None)
        if match is not None:
            if field[2] < below:
                merged[match][2] = min(merged[match][2], field[2])
                merged[match][7] = merge(merged[match][7], field[7], below)
            after = match + 1
        elif field[2] < below:
            until = below - 1 if field[3] is None else min(field[3], below - 1)
            merged.insert(after, [*field[:3], until, *field[4:]])
            after += 1
    return merged


def _check(name: str, tree: Sequence[Field], other: Sequence[Field], span: range) -> None:
    for version in span:
        if layout(tree, version) != layout(other, version):
            raise SpecError(
                f"{name} v{version}: Kafka {OLDER} and {NEWER} lay its fields out differently"
            )


def entry(newer: tuple[Message, Message] | None, older: tuple[Message, Message] | None) -> Any:
    """One API: ``[name, low, high, flexible_from, request fields, response fields]``."""
    base = newer or older
    assert base is not None
    name, low, high, flexible_from, _ = base[0]
    trees = [base[0][4], base[1][4]]
    if newer is not None and older is not None:
        _, old_low, old_high, old_flexible, _ = older[0]
        if old_flexible != flexible_from or not low - 1 <= old_high <= high:
            raise SpecError(f"{name}: Kafka {OLDER} and {NEWER} version it differently")
        for i, kind in enumerate(("Request", "Response")):
            old_tree = older[i][4]
            _check(f"{name}{kind}", trees[i], old_tree, range(low, old_high + 1))
            if old_low < low:
                merged = merge(trees[i], old_tree, low)
                _check(f"{name}{kind}", merged, old_tree, range(old_low, low))
                _check(f"{name}{kind}", merged, trees[i], range(low, high + 1))
                trees[i] = merged
        low = min(low, old_low)
    return [name, low, high, flexible_from, *trees]


def _pieces(tree: Sequence[Field], out: list[str]) -> None:
    """Append ``tree`` as JSON to ``out``, one field a piece (a struct's
    closing brackets end the piece of its last field)."""
    for i, field in enumerate(tree):
        comma = "," if i < len(tree) - 1 else ""
        head = json.dumps(field[:7], separators=(",", ":"))[:-1]
        if field[7]:
            out.append(f"{head},[")
            _pieces(field[7], out)
            out[-1] += f"]]{comma}"
        else:
            out.append(f"{head},[]]{comma}")


def render(key: int, api: list[Any]) -> str:
    """One API's JSON text as a Python literal of one line per field."""
    name, low, high, flexible_from, request, response = api
    pieces = [json.dumps([name, low, high, flexible_from], separators=(",", ":"))[:-1] + ",["]
    _pieces(request, pieces)
    pieces[-1] += "],["
    _pieces(response, pieces)
    pieces[-1] += "]]"
    body = "\n".join(f"        {piece!r}" for piece in pieces)
    return f"    {key}: (\n{body}\n    ),"


def generate() -> str:
    newer, older = read_jar(jar(NEWER)), read_jar(jar(OLDER))
    apis = {key: entry(newer.get(key), older.get(key)) for key in sorted({*newer, *older})}
    body = "\n".join(render(key, api) for key, api in apis.items())
    text = (
        '"""Kafka\'s request and response schemas, as data.\n\n'
        "Generated by tools/gen_kafka_schemas.py from the ``common/message/*.json``\n"
        f"specs in kafka-clients {NEWER} and {OLDER}: do not edit, run it again.\n"
        "Per API key one JSON text, read on first use (importing this module costs\n"
        "next to nothing): ``[name, lowest version, highest version, first flexible\n"
        "version or null, request fields, response fields]``, each field ``[name,\n"
        "type, since, until, nullable_since, tag, default, children]``.\n"
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed module")
    parser.add_argument("--output", type=Path, default=OUT, help="where to write the module")
    args = parser.parse_args(argv)
    missing = [v for v in (NEWER, OLDER) if not is_fetched(v)]
    if missing:
        print(
            f"gen_kafka_schemas: error: Kafka {missing[0]} is not in {libs_dir(missing[0])}: "
            "run make brokers",
            file=sys.stderr,
        )
        return 2
    try:
        text = generate()
    except SpecError as exc:
        print(f"gen_kafka_schemas: error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        if OUT.read_text() != text:
            print(
                f"gen_kafka_schemas: {OUT} is stale: run tools/gen_kafka_schemas.py",
                file=sys.stderr,
            )
            return 1
        return 0
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
