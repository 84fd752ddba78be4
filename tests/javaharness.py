"""Run a small Java program against Kafka's own classes, one JVM per test session.

Harnesses under ``tests/java/`` speak a line protocol on stdin/stdout: one
request line in, one response line out, fields separated by single spaces and
binary or free-text fields base64-encoded (``LineProtocol.java``, which the
Kafka harnesses extend). Compiling once and keeping the JVM
alive keeps thousands of differential cases fast.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

JAVA_DIR = Path(__file__).parent / "java"


def jar_dir() -> Path:
    """Where `make jars` put kafka-clients and slf4j-api."""
    configured = os.environ.get("KAFKA_SCRAM_JARS")
    path = Path(configured) if configured else Path.home() / ".cache" / "kafka-scram" / "jars"
    if not (path / "kafka-clients-4.3.0.jar").is_file():
        raise RuntimeError(
            f"kafka-clients-4.3.0.jar not found in {path}; run `make jars` (make test does)"
        )
    return path


def b64(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii") or "-"


def unb64(field: str) -> bytes:
    return b"" if field == "-" else base64.b64decode(field)


class JavaHarness:
    """A compiled harness class kept running for many requests.

    Args:
        class_name: A harness under ``tests/java/``.
        classpath: The jars it runs with; by default the kafka-clients jars of
            :func:`jar_dir` (``KafkaBroker.classpath`` runs a broker's own).
        jvm_flags: Extra flags for its JVM.
    """

    def __init__(
        self, class_name: str, classpath: str | None = None, jvm_flags: Sequence[str] = ()
    ) -> None:
        if classpath is None:
            classpath = os.pathsep.join(str(p) for p in sorted(jar_dir().glob("*.jar")))
        classpath_jars = classpath
        self._build = Path(tempfile.mkdtemp(prefix=f"{class_name}-"))
        source = JAVA_DIR / f"{class_name}.java"
        subprocess.run(
            # -sourcepath: javac compiles what the harness builds on (LineProtocol.java).
            [
                "javac",
                "-nowarn",
                "-cp",
                classpath_jars,
                "-sourcepath",
                str(JAVA_DIR),
                "-d",
                str(self._build),
                str(source),
            ],
            check=True,
            capture_output=True,
        )
        self._proc = subprocess.Popen(
            [
                "java",
                "-Xshare:auto",
                *jvm_flags,
                "-cp",
                f"{self._build}{os.pathsep}{classpath_jars}",
                class_name,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="ascii",
            bufsize=1,
        )

    def call(self, *fields: str) -> list[str]:
        """Send one request line and return the fields of the response line."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(" ".join(fields) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"Java harness exited (code {self._proc.poll()})")
        return line.rstrip("\n").split(" ")

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        shutil.rmtree(self._build, ignore_errors=True)
