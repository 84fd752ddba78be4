"""``kafka-scram serve`` on every core: ``scram.workers`` processes behind one parent.

The parent checks the configuration (already done by ``serve``), reserves
each listener's port, creates the bootstrap user and the decoy secret once,
then forks the workers. Each worker is a whole endpoint (its own event loop,
its own store connection or ZooKeeper session, its own change feed) that
listens on the same ports with ``SO_REUSEPORT``, so the kernel spreads new
connections over the workers' accept queues, as nginx and Envoy do. The
parent restarts a worker that dies (logging it), serves the summed
``/metrics`` (``WorkerBlocks``), and on SIGTERM or Ctrl-C stops every worker,
each closing its connections as a single process does.

The parent keeps each port bound (never listening) for its whole life: a
connection never reaches it, and a restarted worker always gets the port
back, even one that was 0 in ``listeners``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import select
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from sasl_scram._errors import ScramError
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._metrics import WorkerBlocks
from sasl_scram.endpoint._metrics import WorkersMetrics
from sasl_scram.endpoint._metrics import serve_metrics
from sasl_scram.endpoint.runtime._accept import listener_options
from sasl_scram.endpoint.runtime._bootstrap import BootstrapFiles
from sasl_scram.endpoint.runtime._bootstrap import ensure_bootstrap_user
from sasl_scram.endpoint.runtime._process import LOG_FORMAT
from sasl_scram.endpoint.runtime._process import WorkerRole
from sasl_scram.endpoint.runtime._process import announce_ready
from sasl_scram.endpoint.runtime._process import cannot_listen
from sasl_scram.endpoint.runtime._process import how_to_connect
from sasl_scram.endpoint.runtime._process import open_credential_store
from sasl_scram.endpoint.runtime._process import run_loop
from sasl_scram.endpoint.runtime._process import serve
from sasl_scram.store import DecoySecretSource
from sasl_scram.store import StoreUnavailable

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

__all__ = ["Supervisor", "reserve_ports"]

log = logging.getLogger("sasl_scram.endpoint")

#: A worker still running this long after SIGTERM is killed (its own grace is 5 s).
STOP_TIMEOUT = 15.0
#: Restart delays of a worker that keeps dying: doubling from the first to the
#: largest, so a worker that crashes at every start is not forked in a loop.
FIRST_DELAY, MAX_DELAY = 0.5, 30.0
#: A worker that served this long before it died is restarted at once, and its
#: count of deaths starts again; one that dies sooner counts as failing to start.
STABLE_AFTER = 10.0


def reserve_ports(config: EndpointConfig) -> tuple[EndpointConfig, list[socket.socket]]:
    """Bind (not listen) each listener's addresses with ``SO_REUSEPORT``; the
    configuration with every port 0 replaced by the port the kernel chose."""

    sockets: list[socket.socket] = []
    listeners = []
    try:
        for listener in config.listeners:
            port = listener.port
            for family, kind, proto, _, address in socket.getaddrinfo(
                listener.host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            ):
                sockaddr = (address[0], port, *address[2:])
                if port:
                    _check_unshared(family, kind, proto, sockaddr)
                sock = socket.socket(family, kind, proto)
                sockets.append(sock)
                listener_options(sock, family)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                sock.bind(sockaddr)
                port = sock.getsockname()[1]
            listeners.append(dataclasses.replace(listener, port=port))
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise cannot_listen(config, exc) from None
    return dataclasses.replace(config, listeners=tuple(listeners)), sockets


def _check_unshared(family: int, kind: int, proto: int, sockaddr: tuple[Any, ...]) -> None:
    """Raise if anything listens on ``sockaddr``. The reservation sets
    ``SO_REUSEPORT``, which the kernel lets share a port with any other socket
    of this user that set it too (another serve's workers): a bind without it
    is refused when the port is taken, as a single process's bind is."""
    with socket.socket(family, kind, proto) as probe:
        listener_options(probe, family)
        probe.bind(sockaddr)


def _exit_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(ValueError):
            return f"was killed by signal {number} ({signal.Signals(number).name})"
        return f"was killed by signal {number}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


class Supervisor:
    """The parent of ``config.workers`` worker processes (see the module's docstring)."""

    def __init__(self, config: EndpointConfig, stdout: TextIO, stderr: TextIO) -> None:
        self.config = config
        self.stdout = stdout
        self.stderr = stderr
        self.pids: dict[int, int] = {}  # pid -> worker index
        self.ready: set[int] = set()
        self.failures: dict[int, int] = {}  # index -> quick deaths in a row
        self.ready_at: dict[int, float] = {}  # index -> when it last said it was ready
        self.restart_at: dict[int, float] = {}
        self.clock = time.monotonic
        self.announced = False
        self.failed = False
        self.blocks: WorkerBlocks | None = None
        self._metrics: WSGIServer | None = None
        self._sockets: list[socket.socket] = []
        self._fds: list[int] = []
        self._ready_buffer = b""
        #: The first error of a worker that could not start, before all were ready.
        self.start_error: str | None = None

    def run(self) -> int:
        self.parent_pid = os.getpid()
        self.config, self._sockets = reserve_ports(self.config)
        try:
            files = self._prepare_store()
            self._start_metrics()
            self._signals, signal_write = self._pipe()
            self._ready_read, self._ready_write = self._pipe()
            os.set_blocking(self._ready_write, True)
            previous = signal.set_wakeup_fd(signal_write)
            handlers = {s: signal.signal(s, _noop) for s in _SIGNALS}
            try:
                log.info("Starting %d workers", self.config.workers)
                for index in range(self.config.workers):
                    self._fork(index)
                stopped = self._supervise(files)
            finally:
                signal.set_wakeup_fd(previous)
                for sig, handler in handlers.items():
                    signal.signal(sig, handler)
            if self.start_error is not None:
                raise ScramError(self.start_error)
            return 1 if self.failed or not stopped else 0
        finally:
            for sock in self._sockets:
                sock.close()
            for fd in self._fds:
                os.close(fd)
            if self._metrics is not None:
                self._metrics.shutdown()
                self._metrics.server_close()

    def _pipe(self) -> tuple[int, int]:
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        self._fds += [read, write]
        return read, write

    # -- before the workers -------------------------------------------------------
    def _prepare_store(self) -> BootstrapFiles | None:
        """The decoy secret and the bootstrap user, once, before any worker reads them."""
        config = self.config
        store = open_credential_store(config)
        try:
            if isinstance(store, DecoySecretSource):
                # Created here, so the workers all read the same one.
                with contextlib.suppress(StoreUnavailable):
                    store.decoy_secret()
            if not config.bootstrap_user:
                return None
            return ensure_bootstrap_user(
                store,
                config.bootstrap_user,
                config.bootstrap_file,
                config.mechanisms,
                "{}:{}".format(*self._advertised(config.listeners[0].name)),
            )
        finally:
            # Its threads end here, before the first fork. The one thread that
            # does run across forks is the metrics listener's (when
            # scram.metrics.listener is set): a worker closes that server's socket
            # and never calls into it, so no lock it held at the fork is waited on.
            store.close()

    def _advertised(self, name: str) -> tuple[str, int]:
        listener = next(entry for entry in self.config.listeners if entry.name == name)
        advertised = self.config.advertised[name]
        return advertised.host, advertised.port or listener.port

    def _start_metrics(self) -> None:
        address = self.config.metrics_listener
        if address is None:
            return
        self.blocks = WorkerBlocks(
            [entry.name for entry in self.config.listeners],
            [m.mechanism_name for m in self.config.mechanisms],
            self.config.workers,
            self.config.metrics_max_users,
        )
        self._metrics, _ = serve_metrics(WorkersMetrics(self.blocks), *address)

    # -- the workers ----------------------------------------------------------------
    def _fork(self, index: int) -> None:
        for stream in (sys.stdout, sys.stderr, self.stdout, self.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = self._worker(index)
            finally:
                os._exit(code)
        self.pids[pid] = index
        log.info("Worker %d started (pid %d)", index, pid)

    def _worker(self, index: int) -> int:
        """In the child: the parent's signal handling and files undone, then ``serve``."""
        signal.set_wakeup_fd(-1)
        for sig in _SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        if not _stop_with_parent(self.parent_pid):
            return 1
        for sock in self._sockets:
            sock.close()
        if self._metrics is not None:
            self._metrics.socket.close()
        for fd in self._fds:
            if fd != self._ready_write:
                os.close(fd)
        # Which worker said it: the same log format with the worker's number.
        worker_format = LOG_FORMAT.replace("%(name)s", f"[worker {index}] %(name)s")
        for handler in logging.getLogger().handlers:
            handler.setFormatter(logging.Formatter(worker_format))
        role = WorkerRole(
            index, self._ready_write, self.blocks.share(index) if self.blocks else None
        )
        try:
            return run_loop(serve(self.config, self.stdout, role), self.config.event_loop)
        except ScramError as exc:
            # To the parent, which prints the first one: N workers failing
            # alike are one error line, as a single process gives.
            message = str(exc).replace("\n", " ").encode()[:_MAX_ERROR]
            os.write(self._ready_write, b"!%d %s\n" % (index, message))
        except BaseException:
            log.exception("Worker %d failed", index)
        return 1

    def _supervise(self, files: BootstrapFiles | None) -> bool:
        """Until SIGTERM or SIGINT (True) or a worker failing at start (False)."""
        while True:
            now = self.clock()
            timeout = max(0.0, min(self.restart_at.values()) - now) if self.restart_at else None
            readable, _, _ = select.select([self._signals, self._ready_read], [], [], timeout)
            stop = False
            if self._signals in readable:
                received = os.read(self._signals, 512)
                stop = any(sig in received for sig in (signal.SIGTERM, signal.SIGINT))
            if self._ready_read in readable:
                self._read_ready(files)
            self._reap(files)
            if stop or (self.failed and not self.announced):
                self._stop_all()
                return stop
            for index, when in list(self.restart_at.items()):
                if when <= self.clock():
                    del self.restart_at[index]
                    self._fork(index)

    def _read_ready(self, files: BootstrapFiles | None) -> None:
        # All that is there: a worker's error line is read before its death is handled.
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._ready_read, 65536):
                self._ready_buffer += chunk
        *lines, self._ready_buffer = self._ready_buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"!"):  # "!<index> <error>": it could not start
                who, _, error = line[1:].decode(errors="replace").partition(" ")
                if self.announced:
                    log.error("Worker %s: %s", who, error)
                elif self.start_error is None:
                    self.start_error = error
                continue
            self.ready.add(int(line))
            self.ready_at[int(line)] = self.clock()
        if not self.announced and len(self.ready) == self.config.workers:
            self.announced = True
            names = [entry.name for entry in self.config.listeners]
            announce_ready(self.config, {n: self._advertised(n) for n in names}, self.stdout)
            log.info("%d workers serving", self.config.workers)
            if files is not None:
                bootstrap = "{}:{}".format(*self._advertised(names[0]))
                print(how_to_connect(files, bootstrap), file=self.stdout, flush=True)

    def _reap(self, files: BootstrapFiles | None) -> None:
        # What a worker wrote before it exited is read before its death is handled.
        self._read_ready(files)
        while self.pids:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            index = self.pids.pop(pid, None)
            if index is not None:
                self._died(index, pid, status)

    def _died(self, index: int, pid: int, status: int) -> None:
        if self.blocks is not None:
            self.blocks.clear_gauges(index)
        how = _exit_reason(status)
        self.ready.discard(index)
        if not self.announced:
            log.error("Worker %d (pid %d) %s before it was ready; stopping", index, pid, how)
            self.failed = True
            return
        now = self.clock()
        served = now - self.ready_at.pop(index, now)
        failures = 0 if served >= STABLE_AFTER else self.failures.get(index, 0) + 1
        self.failures[index] = failures
        delay = min(MAX_DELAY, FIRST_DELAY * 2 ** (failures - 1)) if failures else 0.0
        log.warning("Worker %d (pid %d) %s; restarting it in %.1f s", index, pid, how, delay)
        self.restart_at[index] = now + delay

    def _stop_all(self) -> None:
        """SIGTERM to every worker; SIGKILL to one still running after STOP_TIMEOUT."""
        log.info("Stopping %d workers", len(self.pids))
        self.restart_at.clear()
        self.announced = True  # a worker dying now is stopping, not failing
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while self.pids:
            for pid, status in _wait_some(deadline):
                index = self.pids.pop(pid, None)
                # Killed by the SIGTERM sent above: a worker that had not yet set its
                # handlers (just restarted), so it was serving nothing to close.
                asked = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
                if index is not None and status and not asked:
                    log.warning("Worker %d (pid %d) %s", index, pid, _exit_reason(status))
                    self.failed = True
            if time.monotonic() >= deadline:
                for pid in list(self.pids):
                    log.warning("Worker %d (pid %d) did not stop; killing it", self.pids[pid], pid)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    del self.pids[pid]
                self.failed = True
        log.info("All workers stopped")


def _wait_some(deadline: float) -> list[tuple[int, int]]:
    """The children that ended, waiting up to 0.1 s (or the deadline) for one."""
    ended: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            if ended:
                return ended
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
            if time.monotonic() >= deadline:
                return ended
            continue
        ended.append((pid, status))


_SIGNALS = (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT)
#: A worker's error line fits one atomic pipe write (PIPE_BUF is 4096 on Linux).
_MAX_ERROR = 3000
#: prctl(2)'s option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _stop_with_parent(parent: int) -> bool:
    """Have the kernel send SIGTERM when the parent dies (Linux), so a killed
    parent leaves no worker serving on its ports; False if it already died."""
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() == parent


def _noop(signum: int, frame: object) -> None:
    """A Python-level handler, so the signal reaches the wakeup pipe."""
