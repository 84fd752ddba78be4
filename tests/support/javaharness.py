"""Run a small Java program against Kafka's own classes, one JVM per test session.

Harnesses under ``tests/java/`` speak a line protocol on stdin/stdout: one
request line in, one response line out, fields separated by single spaces and
binary or free-text fields base64-encoded (``LineProtocol.java``, which the
Kafka harnesses extend). Compiling once and keeping the JVM
alive keeps thousands of differential cases fast.
"""

from __future__ import annotations

import atexit
import base64
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

JAVA_DIR = Path(__file__).parent.parent / "java"


def jar_dir() -> Path:
    """Where `make jars` put kafka-clients and slf4j-api."""
    configured = os.environ.get("KAFKA_SCRAM_JARS")
    path = Path(configured) if configured else Path.home() / ".cache" / "kafka-scram" / "jars"
    if not (path / "kafka-clients-4.3.0.jar").is_file():
        raise RuntimeError(
            f"kafka-clients-4.3.0.jar not found in {path}; run `make jars` (make test does)"
        )
    return path


#: Where Debian and the Temurin packages install JDKs.
JVM_DIR = Path("/usr/lib/jvm")


def jdk_feature(home: Path) -> int | None:
    """The feature release (17, 25, ...) of the JDK at ``home``, from its ``release`` file."""
    try:
        text = (home / "release").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "JAVA_VERSION":
            return int(value.strip('"').split(".")[0])
    return None


def newest_jdk(minimum: int) -> tuple[Path, int] | None:
    """The newest JDK of release ``minimum`` or later under :data:`JVM_DIR` (with a
    ``java`` to run), and its release; ``None`` when there is none."""
    found: list[tuple[int, Path]] = []
    for home in sorted(JVM_DIR.glob("*")) if JVM_DIR.is_dir() else []:
        feature = jdk_feature(home)
        if feature is not None and feature >= minimum and (home / "bin" / "java").is_file():
            found.append((feature, home))
    if not found:
        return None
    feature, home = max(found)
    return home, feature


def b64(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii") or "-"


def unb64(field: str) -> bytes:
    return b"" if field == "-" else base64.b64decode(field)


def _compile(class_name: str, classpath: str) -> Path:
    """The harness's classes, compiled once per session for each classpath."""
    key = (class_name, classpath)
    build = _BUILDS.get(key)
    if build is None:
        build = Path(tempfile.mkdtemp(prefix=f"{class_name}-"))
        atexit.register(shutil.rmtree, build, ignore_errors=True)
        subprocess.run(
            # -sourcepath: javac compiles what the harness builds on (LineProtocol.java).
            [
                "javac",
                "-nowarn",
                "-cp",
                classpath,
                "-sourcepath",
                str(JAVA_DIR),
                "-d",
                str(build),
                str(JAVA_DIR / f"{class_name}.java"),
            ],
            check=True,
            capture_output=True,
        )
        _BUILDS[key] = build
    return build


_BUILDS: dict[tuple[str, str], Path] = {}


class JavaHarness:
    """A compiled harness class kept running for many requests.

    Args:
        class_name: A harness under ``tests/java/``.
        classpath: The jars it runs with; by default the kafka-clients jars of
            :func:`jar_dir` (``KafkaBroker.classpath`` runs a broker's own).
        jvm_flags: Extra flags for its JVM.
        java_home: The JDK whose ``java`` runs it; the one on ``PATH`` by default. The
            harness is compiled by the ``javac`` on ``PATH`` (release 17), which any
            newer JDK runs.
        compile_classpath: The classpath to compile against, when another than
            ``classpath`` gives the same classes (one compilation serves several
            Kafka versions).
    """

    def __init__(
        self,
        class_name: str,
        classpath: str | None = None,
        jvm_flags: Sequence[str] = (),
        *,
        java_home: Path | None = None,
        compile_classpath: str | None = None,
    ) -> None:
        if classpath is None:
            classpath = os.pathsep.join(str(p) for p in sorted(jar_dir().glob("*.jar")))
        build = _compile(class_name, compile_classpath or classpath)
        java = str(java_home / "bin" / "java") if java_home is not None else "java"
        self._proc = subprocess.Popen(
            [
                java,
                "-Xshare:auto",
                *jvm_flags,
                "-cp",
                f"{build}{os.pathsep}{classpath}",
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

    def __enter__(self) -> JavaHarness:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
