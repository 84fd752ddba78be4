"""A real ``kafka-scram serve`` process on a free loopback port, its configuration
and its log in a folder: how the endpoint tests and the fault tests run one.

It runs this checkout's code (``tests/support/cli_process.py``) as its own process, so
that its memory can be measured, its log read as it is written, and it can be
stopped with SIGTERM as an operator would.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from tests.support.cli_process import EXE
from tests.support.cli_process import child_env
from tests.support.zookeeper_server import free_port

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

    def wait_for_log(self, text: str, timeout: float = 10, *, after: int = 0) -> str:
        """The first log line containing ``text`` (the log is written as events happen),
        among the lines past the first ``after`` (``len(log_lines())`` taken before the
        event: a long-lived server's log may hold an earlier match, e.g. a client port
        the kernel has since given to another connection)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log_lines()[after:]:
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


def start_serve(
    config: Path, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """``kafka-scram serve --config CONFIG ARGS...`` on a configuration of the test's own,
    returned once its first line says it is ready; stdout and stderr are pipes."""
    proc = subprocess.Popen(
        [EXE, "serve", "--config", str(config), *args],
        cwd=cwd,
        env=dict(env) if env is not None else child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert READY in proc.stdout.readline(), proc.communicate()
    return proc


def read_banner(proc: subprocess.Popen[str]) -> str:
    """stdout to the end of the bootstrap user's how-to (its last line adds a user)."""
    assert proc.stdout is not None
    lines: list[str] = []
    while not lines or "--entity-name alice" not in lines[-1]:
        line = proc.stdout.readline()
        assert line, "".join(lines) + (proc.stderr.read() if proc.stderr else "")
        lines.append(line)
    return "".join(lines)


def stop_serve(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, as Ctrl-C stops it; its stderr (the log). Its exit status is 0 once it
    has printed its banner (its signal handlers are set after that)."""
    proc.send_signal(signal.SIGTERM)
    return proc.communicate(timeout=15)[1]


def client_properties(bootstrap: str, jaas_line: str) -> dict[str, str]:
    """A SCRAM-SHA-512 login over SASL_PLAINTEXT, as client.properties keys."""
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": jaas_line,
    }


def logs_in(bootstrap: str, jaas_line: str) -> bool:
    """Whether a login with ``jaas_line`` succeeds now (our own client, one attempt)."""
    from sasl_scram.admin import KafkaConnection
    from sasl_scram.config import ClientConfig

    config = ClientConfig.from_properties(client_properties(bootstrap, jaas_line))
    try:
        KafkaConnection.from_config(config, bootstrap, timeout=10).close()
    except Exception:
        return False
    return True


def wait_for_login(bootstrap: str, jaas_line: str, accepted: bool, timeout: float = 15) -> None:
    """Until the login is ``accepted`` or refused: a serve process follows its store by
    polling, so a change made through the store reaches it a moment later."""
    deadline = time.monotonic() + timeout
    while logs_in(bootstrap, jaas_line) != accepted:
        assert time.monotonic() < deadline, f"the login never became {accepted}"
        time.sleep(0.1)
