"""Fetch Apache Kafka's broker and tools from Maven Central for the test suite.

Each version's runtime jars (``kafka_2.13``, ``kafka-tools`` and everything
they need) are copied by Maven into ``~/.cache/kafka-scram/kafka-<version>/libs``
(``$KAFKA_SCRAM_CACHE`` overrides the root), outside the repository, so a
second run needs no network. A ``.complete`` file marks a finished copy; an
interrupted one is fetched again.

    python tools/fetch_kafka_broker.py            # every version the suite runs
    python tools/fetch_kafka_broker.py 3.9.2      # one version

The versions are ``KAFKA_VERSIONS``: the newest 4.x (KRaft only) and the newest
3.9.x, the last line with ZooKeeper mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: The brokers the suite starts, by mode: KRaft on the newest 4.x, ZooKeeper
#: mode on the newest 3.9.x (Kafka 4.0 removed ZooKeeper mode, KIP-500/KIP-833).
KAFKA_VERSIONS = {"kraft": "4.4.0", "zookeeper": "3.9.2"}

POM = Path(__file__).resolve().parent / "kafka" / "pom.xml"


def cache_root() -> Path:
    root = os.environ.get("KAFKA_SCRAM_CACHE") or str(Path.home() / ".cache" / "kafka-scram")
    return Path(root)


def libs_dir(version: str) -> Path:
    """Where the jars of one Kafka version are (or will be)."""
    return cache_root() / f"kafka-{version}" / "libs"


def is_fetched(version: str) -> bool:
    return (libs_dir(version) / ".complete").is_file()


def fetch(version: str) -> Path:
    """Copy one version's runtime jars into the cache; a no-op once complete."""
    # Kafka 3.x brings its own slf4j binding (reload4j); one binding only, so
    # both versions log through slf4j-simple the same way.
    excluded = ["slf4j-reload4j"] if version.startswith("3.") else []
    return copy_runtime_jars(
        "fetch_kafka_broker",
        f"Kafka {version}",
        POM,
        {"kafka.version": version},
        libs_dir(version),
        f"kafka_2.13-{version}.jar",
        excluded,
    )


def copy_runtime_jars(
    tool: str,
    what: str,
    pom: Path,
    properties: dict[str, str],
    libs: Path,
    marker_jar: str,
    excluded: list[str] | None = None,
) -> Path:
    """Maven copies ``pom``'s runtime dependencies into ``libs`` (through a
    partial folder, then a ``.complete`` file naming what was fetched); a no-op
    once complete. Errors are one ``<tool>: error:`` line and exit."""
    if (libs / ".complete").is_file():
        return libs
    if shutil.which("mvn") is None:
        raise SystemExit(f"{tool}: error: mvn not found; install Debian's maven (make system)")
    partial = libs.with_name("libs.partial")
    shutil.rmtree(partial, ignore_errors=True)
    command = [
        "mvn",
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        *(f"-D{key}={value}" for key, value in properties.items()),
        "-DincludeScope=runtime",
        f"-DoutputDirectory={partial}",
    ]
    if excluded:
        command.append(f"-DexcludeArtifactIds={','.join(excluded)}")
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
        raise SystemExit(f"{tool}: error: Maven could not fetch {what}:\n{tail}")
    if not any(partial.glob(marker_jar)):
        raise SystemExit(f"{tool}: error: {marker_jar} missing in {partial}")
    shutil.rmtree(libs, ignore_errors=True)
    partial.rename(libs)
    (libs / ".complete").write_text(next(iter(properties.values())) + "\n")
    return libs


def main(argv: list[str]) -> int:
    versions = argv or list(KAFKA_VERSIONS.values())
    for version in versions:
        print(fetch(version))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
