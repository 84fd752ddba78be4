"""A real ``kafka-scram serve`` process on a free loopback port, its configuration
and its log in a folder: how the endpoint tests and the fault tests run one.

It runs this checkout's code (``tests/cli_process.py``) as its own process, so
that its memory can be measured, its log read as it is written, and it can be
stopped with SIGTERM as an operator would.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

from tests.cli_process import EXE, child_env
from tests.zookeeper_server import free_port

READY = "kafka-scram endpoint ready"


class ServeProcess:
    """``kafka-scram serve`` on 127.0.0.1:<free port> with ``properties`` (``listeners`` is
    added), its log in ``<base_dir>/<name>.log``; started by :meth:`start` or by entering
    a ``with`` block, and stopped on leaving it.

    Args:
        base_dir: Where the configuration file and the log go (created if missing).
        properties: The ``server.properties`` keys besides ``listeners``.
        name: The process's name in messages and file names; ``serve-<port>`` by default.
        umask: The child's umask, for tests of the files it creates.
        exe: The ``kafka-scram`` command to run; this checkout's by default.
        env: The child's environment; this checkout first on PYTHONPATH by default.
        args: More ``serve`` arguments, such as ``--log-level DEBUG``.
    """

    def __init__(
        self,
        base_dir: Path,
        properties: Mapping[str, str],
        name: str | None = None,
        *,
        umask: int | None = None,
        exe: str = EXE,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> None:
        self.base_dir = base_dir
        self.exe = exe
        self.env = dict(child_env() if env is None else env)
        self.args = tuple(args)
        self.properties = dict(properties)
        self.port = free_port()
        self.name = name or f"serve-{self.port}"
        self.umask = umask
        self.proc: subprocess.Popen[str] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.base_dir / f"{self.name}.log"

    def start(self, timeout: float = 60.0) -> None:
        """Start the process; returns once it says it is ready (within ``timeout``)."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        config = self.base_dir / f"{self.name}.properties"
        props = {"listeners": f"SASL_PLAINTEXT://{self.bootstrap}", **self.properties}
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(
                [self.exe, "serve", "--config", str(config), *self.args],
                stdout=subprocess.PIPE,
                stderr=log,
                stdin=subprocess.DEVNULL,
                text=True,
                env=self.env,
                start_new_session=True,
                umask=-1 if self.umask is None else self.umask,
            )
        # The first line says it listens; read it on a thread so that a child that
        # hangs before saying anything cannot hang the test.
        stdout = self.proc.stdout
        assert stdout is not None
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not first or READY not in first[0]:
            self.stop()
            raise AssertionError(f"{self.name} did not start: {self.log_text()[-2000:]}")

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_lines(self) -> list[str]:
        return self.log_text().splitlines()

    def wait_for_log(self, text: str, timeout: float = 10) -> str:
        """The first log line containing ``text`` (the log is written as events happen)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log_lines():
                if text in line:
                    return line
            time.sleep(0.02)
        raise AssertionError(f"{text!r} not logged: {self.log_text()[-2000:]}")

    def rss(self) -> int:
        """The process's resident set size in bytes."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 15 s. A no-op when not running."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self) -> Self:
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
