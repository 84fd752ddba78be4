"""tools/gen_kafka_schemas.py on small made-up jars: how it reads Kafka's specs,
joins two Kafkas' versions into one tree, and fails loudly where it cannot.

That the committed table is what the real jars give, byte for byte, is
``test_message_table_kafka.py``'s (it needs the cached distributions)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tools.gen_kafka_schemas import SpecError
from tools.gen_kafka_schemas import entry
from tools.gen_kafka_schemas import read_jar
from tools.gen_kafka_schemas import render
from tools.gen_kafka_schemas import snake

ROOT = Path(__file__).resolve().parents[3]


def _jar(tmp_path: Path, name: str, *messages: dict[str, Any]) -> Path:
    """A kafka-clients-like jar holding ``messages`` as common/message/*.json
    files, each opening with a licence-style ``//`` comment as Kafka's do."""
    path = tmp_path / f"{name}.jar"
    with zipfile.ZipFile(path, "w") as archive:
        for message in messages:
            text = "// Licensed to the Apache Software Foundation\n" + json.dumps(message)
            archive.writestr(f"common/message/{message['name']}.json", text)
        archive.writestr("common/message/RequestHeader.json", '{"type": "header"}')
    return path


def _api(valid: str, request: list[Any], response: list[Any], **more: Any) -> list[dict[str, Any]]:
    """API key 90's request and response, ``Foo``."""
    common = {"apiKey": 90, "validVersions": valid, "flexibleVersions": "1+", **more}
    return [
        {"name": "FooRequest", "type": "request", "fields": request, **common},
        {"name": "FooResponse", "type": "response", "fields": response, **common},
    ]


def _field(name: str, kind: str, versions: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, "versions": versions, **more}


def _entry(tmp_path: Path, newer: list[Any], older: list[Any]) -> Any:
    new, old = read_jar(_jar(tmp_path, "new", *newer)), read_jar(_jar(tmp_path, "old", *older))
    return entry(new.get(90), old.get(90))


ERROR = [_field("ErrorCode", "int16", "0+")]


def test_versions_both_define_must_be_laid_out_alike(tmp_path: Path) -> None:
    newer = _api("0-2", [_field("TimeoutMs", "int32", "0+")], ERROR)
    renamed = _api("0-1", [_field("Timeout", "int32", "0+")], ERROR)
    # A field renamed in 4.x is the same on the wire: the newer name is kept.
    assert _entry(tmp_path, newer, renamed)[4][0][0] == "timeout_ms"
    retyped = _api("0-1", [_field("Timeout", "int64", "0+")], ERROR)
    with pytest.raises(SpecError, match=r"FooRequest v0: Kafka 3\.9\.2 and 4\.4\.0 lay its fields"):
        _entry(tmp_path, newer, retyped)
    response = [_field("ErrorCode", "int16", "0+", nullableVersions="1+")]
    nullable = _api("0-1", [_field("Timeout", "int32", "0+")], response)
    with pytest.raises(SpecError, match="FooResponse v1"):
        _entry(tmp_path, newer, nullable)


def test_versions_only_the_older_defines_come_back_with_their_fields(tmp_path: Path) -> None:
    request = [_field("Name", "string", "0+"), _field("TopicId", "uuid", "2+")]
    older_request = [
        _field("Name", "string", "0+"),
        _field("MaxNumOffsets", "int32", "0", default="1"),
        _field("Timestamp", "int64", "0+"),
    ]
    newer = _api("1-2", [*request[:1], _field("Timestamp", "int64", "0+"), request[1]], ERROR)
    name, low, high, flexible, fields, _ = _entry(
        tmp_path, newer, _api("0-1", older_request, ERROR)
    )
    assert (name, low, high, flexible) == ("Foo", 0, 2, 1)
    assert [f[:4] for f in fields] == [
        ["name", "string", 0, None],
        ["max_num_offsets", "int32", 0, 0],  # back in its place, limited to v0
        ["timestamp", "int64", 0, None],
        ["topic_id", "uuid", 2, None],
    ]
    assert fields[1][6] == 1  # its default


def test_unstable_and_undefined_versions_are_left_out(tmp_path: Path) -> None:
    fields = [_field("Name", "string", "0+")]
    unstable = _api("0-3", fields, ERROR, latestVersionUnstable=True)
    assert _entry(tmp_path, unstable, [])[1:3] == [0, 2]
    only_unstable = _api("0", fields, ERROR, latestVersionUnstable=True)
    assert _entry(tmp_path, unstable, only_unstable)[1:3] == [0, 2]
    # ZooKeeper mode's APIs: 4.x keeps their files with no valid version.
    none = _api("none", fields, ERROR)
    assert _entry(tmp_path, none, _api("0-4", fields, ERROR))[1:3] == [0, 4]


def test_tags_nullability_and_names_the_codec_cannot_hold_fail(tmp_path: Path) -> None:
    # 3.9's files write some tags as strings.
    tagged = _field("Cordoned", "[]uuid", "1+", tag="0", taggedVersions="1+")
    assert _entry(tmp_path, _api("0-1", [tagged], ERROR), [])[4][0][5] == 0
    partly = _field("Cordoned", "[]uuid", "1+", tag=0, taggedVersions="2+")
    with pytest.raises(SpecError, match="tagged in 2\\+ only"):
        _entry(tmp_path, _api("0-2", [partly], ERROR), [])
    # Nullable in versions the API no longer has: never null.
    old_null = _field("Records", "records", "0+", nullableVersions="0")
    assert _entry(tmp_path, _api("1-2", [old_null], ERROR), [])[4][0][4] is None
    with pytest.raises(SpecError, match="nullable in versions 0-1 only"):
        early = _field("Records", "records", "0+", nullableVersions="0-1")
        _entry(tmp_path, _api("0-2", [early], ERROR), [])
    twins = [_field("TopicID", "string", "0+"), _field("TopicId", "string", "0+")]
    with pytest.raises(SpecError, match="share a snake_case name"):
        _entry(tmp_path, _api("0", twins, ERROR), [])


def test_defaults_structs_and_records_as_the_table_holds_them(tmp_path: Path) -> None:
    request = [
        _field("MaxBytes", "int32", "0+", default="0x7fffffff"),
        _field("Enabled", "bool", "0+", default="true"),
        _field("Topics", "[]Topic", "0+", nullableVersions="0+", default="null"),
        _field("Leader", "Leader", "1+", tag=0, taggedVersions="1+"),
        _field("Records", "records", "0+", nullableVersions="0+"),
    ]
    common = [
        {"name": "Topic", "versions": "0+", "fields": [_field("Name", "string", "0+")]},
        {"name": "Leader", "versions": "0+", "fields": [_field("Id", "int32", "0+", default=-1)]},
    ]
    api = _entry(tmp_path, _api("0-1", request, ERROR, commonStructs=common), [])
    assert api[4] == [
        ["max_bytes", "int32", 0, None, None, None, 2**31 - 1, []],
        ["enabled", "bool", 0, None, None, None, True, []],
        [
            "topics",
            "[]struct",
            0,
            None,
            0,
            None,
            "null",
            [["name", "string", 0, None] + [None] * 3 + [[]]],
        ],
        [
            "leader",
            "struct",
            1,
            None,
            None,
            0,
            None,
            [["id", "int32", 0, None, None, None, -1, []]],
        ],
        # FieldSpec.fieldDefault: records default to null.
        ["records", "records", 0, None, 0, None, "null", []],
    ]
    # The rendered entry is a Python literal of one JSON text that gives it back.
    literal = render(90, api).removeprefix("    90: ").removesuffix(",")
    assert json.loads(ast.literal_eval(literal)) == api


def test_snake_case_names() -> None:
    assert snake("ThrottleTimeMs") == "throttle_time_ms"
    assert snake("KRaftVersionFeature") == "k_raft_version_feature"
    assert snake("isKRaftController") == "is_k_raft_controller"


def test_missing_jars_are_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_kafka_schemas.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "KAFKA_SCRAM_CACHE": str(tmp_path)},
    )
    assert done.returncode == 2
    assert done.stderr.startswith("gen_kafka_schemas: error: Kafka 4.4.0 is not in ")
    assert done.stderr.endswith("run make brokers\n") and done.stderr.count("\n") == 1
