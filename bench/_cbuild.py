"""The benches' C programs, compiled with the system compiler once per source.

Each executable is named after the digest of its source and flags, in the
bench cache (``$KAFKA_SCRAM_CACHE``, else ``~/.cache/kafka-scram``), so that
checkouts of other commits share it; it is built aside and renamed, so that a
bench or test running meanwhile never sees half a file. Only the standard
library here: the benches import it by its bare name, the tests as
``bench._cbuild``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def compiled(source: Path, flags: Sequence[str], *, program: str, hint: str) -> Path:
    """``source`` compiled with ``$CC`` (``cc``) and ``flags`` (libraries last);
    on failure, exit with ``program``'s one-line error ending in ``hint``."""
    cache = Path(os.environ.get("KAFKA_SCRAM_CACHE", Path.home() / ".cache" / "kafka-scram"))
    digest = hashlib.sha256(source.read_bytes() + "\0".join(flags).encode()).hexdigest()[:16]
    exe = cache / "bench" / f"{source.stem}-{digest}"
    if exe.exists():
        return exe
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if compiler is None:
        sys.exit(f"{program}: error: no C compiler to build bench/{source.name}; {hint}")
    exe.parent.mkdir(parents=True, exist_ok=True)
    building = exe.with_name(f"{exe.name}.{os.getpid()}")
    result = subprocess.run(
        [compiler, "-o", str(building), str(source), *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        first = next(iter(result.stderr.strip().splitlines()), "no message")
        sys.exit(f"{program}: error: cannot build bench/{source.name} ({first}); {hint}")
    os.replace(building, exe)
    return exe
