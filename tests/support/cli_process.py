"""Run the real ``kafka-scram`` entry point (and Python scripts) in a subprocess.

The child gets ``PYTHONPATH`` set to this checkout, so it runs this tree's code
even when the virtualenv holds an editable install of another one.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).parent / "kafka-scram")


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: this checkout first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def kafka_scram(
    *args: str,
    stdin: str | bytes = "",
    cwd: Path | None = None,
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``kafka-scram ARGS...`` with ``stdin`` piped in; output captured as text.
    ``env`` adds to (or replaces in) :func:`child_env`."""
    done = subprocess.run(
        [EXE, *args],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=timeout,
        cwd=cwd,
        env=child_env(**(env or {})),
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


def assert_one_error(
    result: subprocess.CompletedProcess[str], command: str, status: int = 1
) -> str:
    """The run failed with ``status`` and one ``kafka-scram <command>: error: ...`` line."""
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith(f"kafka-scram {command}: error: "), result.stderr
    return errors[0]


#: read(2)'s number on x86_64 and on arm64, as /proc/<pid>/syscall shows it.
_READ_SYSCALLS = {"0", "63"}


def _wait_reading(pid: int, timeout: float = 10.0) -> None:
    """Wait until ``pid`` sleeps in read(2), on the prompt's terminal.

    The prompt is written before getpass reads: a Ctrl-C typed in between
    raises its SIGINT while Python runs C code with no signal check before
    the read, and the KeyboardInterrupt then waits for the read to return,
    for ever. A user types long after the prompt; a test must wait too.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            syscall = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            return  # gone, or not ours to read: typing will tell
        if syscall and syscall[0] in _READ_SYSCALLS:
            return
        time.sleep(0.01)
    raise AssertionError(f"the prompt's process {pid} never read its terminal")


def pty_run(argv: list[str], answers: list[str]) -> tuple[int, str]:
    """Run ``argv`` on a new pseudo-terminal (its controlling terminal); answer each prompt.

    An answer is typed followed by Enter; a control character alone (Ctrl-C
    ``"\\x03"``, Ctrl-D ``"\\x04"``) is typed as it is, as a user presses it.
    """
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its stdin, stdout, stderr and /dev/tty
        os.chdir(ROOT)
        # A suite started in the background by a shell without job control
        # inherits SIGINT ignored, and Python keeps it so: Ctrl-C would do nothing.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(argv[0], argv, child_env())  # noqa: S606 - our entry point, no shell
    output = b""
    pending = list(answers)
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], 30)
            assert ready, output
            try:
                chunk = os.read(fd, 1024)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
            if pending and output.endswith(b": "):  # a prompt, waiting
                answer = pending.pop(0)
                _wait_reading(pid)
                os.write(fd, answer.encode() + (b"" if answer in ("\x03", "\x04") else b"\n"))
    except BaseException:  # e.g. no prompt came: a failed test must not hang
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)  # the child closed the terminal: it is exiting
    return os.waitstatus_to_exitcode(status), output.decode()
