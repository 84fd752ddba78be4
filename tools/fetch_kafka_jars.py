"""Fetch Kafka's own Java client classes for the interop tests.

``kafka-clients-4.3.0.jar`` and ``slf4j-api-2.0.18.jar`` come from Maven
Central (``mvn dependency:copy``) into ``~/.cache/kafka-scram/jars``
(``$KAFKA_SCRAM_JARS`` overrides it), outside the repository; Maven keeps its
own copy in ``~/.m2``, so a second run, or a fresh clone on the same machine,
needs no network. The brokers' jars are ``tools/fetch_kafka_broker.py``'s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tools.fetch_kafka_broker import cache_root

ARTIFACTS = ("org.apache.kafka:kafka-clients:4.3.0", "org.slf4j:slf4j-api:2.0.18")


def jar_dir() -> Path:
    configured = os.environ.get("KAFKA_SCRAM_JARS")
    return Path(configured) if configured else cache_root() / "jars"


def main() -> int:
    jars = jar_dir()
    wanted = {a: jars / f"{a.split(':')[1]}-{a.split(':')[2]}.jar" for a in ARTIFACTS}
    missing = [a for a, p in wanted.items() if not (p.is_file() and p.stat().st_size > 0)]
    if missing and shutil.which("mvn") is None:
        raise SystemExit(
            "fetch_kafka_jars: error: mvn not found; install Debian's maven (make system)"
        )
    jars.mkdir(parents=True, exist_ok=True)
    for artifact in missing:
        result = subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "dependency:copy",
                f"-Dartifact={artifact}",
                f"-DoutputDirectory={jars}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0 or not wanted[artifact].is_file():
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
            raise SystemExit(f"fetch_kafka_jars: error: Maven could not fetch {artifact}:\n{tail}")
    print(jars)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
