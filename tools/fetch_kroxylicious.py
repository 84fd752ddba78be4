"""Fetch Kroxylicious's proxy runtime from Maven Central for the front-door bench.

``io.kroxylicious:kroxylicious-runtime`` of ``KROXYLICIOUS_VERSION`` and
everything it needs at run time (Netty with its epoll transport, Jackson,
kafka-clients), plus slf4j's simple binding, are copied by Maven into
``~/.cache/kafka-scram/kroxylicious-<version>/libs`` (``$KAFKA_SCRAM_CACHE``
overrides the root), outside the repository; Maven keeps its own copy in
``~/.m2``. A ``.complete`` file marks a finished copy; an interrupted one is
fetched again. ``bench/bench_frontdoor.py`` compiles its launcher
(``bench/KroxyliciousLauncher.java``) against these jars.

    python -m tools.fetch_kroxylicious
"""

from __future__ import annotations

from pathlib import Path

from tools.fetch_kafka_broker import cache_root
from tools.fetch_kafka_broker import copy_runtime_jars

#: The release the side-by-side row runs: the one measured by hand before the
#: bench had the row (docs/performance.md).
KROXYLICIOUS_VERSION = "0.12.0"

POM = Path(__file__).resolve().parent / "kroxylicious" / "pom.xml"


def libs_dir(version: str = KROXYLICIOUS_VERSION) -> Path:
    """Where one Kroxylicious version's jars are (or will be)."""
    return cache_root() / f"kroxylicious-{version}" / "libs"


def is_fetched(version: str = KROXYLICIOUS_VERSION) -> bool:
    return (libs_dir(version) / ".complete").is_file()


def fetch(version: str = KROXYLICIOUS_VERSION) -> Path:
    """Copy the runtime's jars into the cache; a no-op once complete."""
    return copy_runtime_jars(
        "fetch_kroxylicious",
        f"Kroxylicious {version}",
        POM,
        {"kroxylicious.version": version},
        libs_dir(version),
        f"kroxylicious-runtime-{version}.jar",
    )


def main() -> int:
    print(fetch())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
