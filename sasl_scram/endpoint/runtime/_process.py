"""One ``kafka-scram serve`` endpoint process: the store, the endpoint, the ready
lines, the bootstrap user, and the stop on SIGTERM or SIGINT. :func:`run`
runs it once, ``_workers.py`` once per worker."""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
import shutil
import signal
import socket
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import install_hint
from sasl_scram.endpoint._config import BOOTSTRAP_FILE_KEY
from sasl_scram.endpoint._config import EVENT_LOOP_KEY
from sasl_scram.endpoint._config import STORE_PATH_KEY
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._metrics import WorkerShare
from sasl_scram.endpoint.runtime._bootstrap import BootstrapFiles
from sasl_scram.endpoint.runtime._bootstrap import ensure_bootstrap_user
from sasl_scram.endpoint.runtime._bootstrap import private_folder
from sasl_scram.endpoint.runtime._bootstrap import warn_if_others_write

if TYPE_CHECKING:
    from sasl_scram.endpoint.runtime._server import ScramEndpoint
    from sasl_scram.store import AclStore
    from sasl_scram.store import CredentialStore

__all__ = [
    "LOG_FORMAT",
    "WorkerRole",
    "announce_ready",
    "cannot_listen",
    "how_to_connect",
    "open_credential_store",
    "run_loop",
    "serve",
]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


@dataclasses.dataclass(frozen=True)
class WorkerRole:
    """What a worker gets from its parent."""

    index: int
    #: Where it writes ``b"<index>\n"`` once it listens.
    ready_fd: int
    #: Its part of the shared metrics block, when ``scram.metrics.listener`` is set.
    metrics: WorkerShare | None


def run_loop(main: Coroutine[Any, Any, int], choice: str) -> int:
    """Run on uvloop when available (``auto``) or asked for, else asyncio's loop.

    ``choice`` is ``scram.event.loop`` as its table entry parsed it (which
    already refused ``uvloop`` when it is not installed).
    """
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":  # found by the parser, yet broken
                raise ScramConfigError(f"{EVENT_LOOP_KEY}: uvloop cannot be imported") from None
            # auto: a client-only install serves too, slower; one line says why and the fix.
            logging.getLogger("sasl_scram.endpoint").warning(
                "Event loop: asyncio's, as uvloop is not installed (logins cost 20-50%% more "
                "CPU; docs/performance.md); %s",
                install_hint("server"),
            )
        else:
            # Typed as int where uvloop is installed; Any in a build environment without it.
            status: int = uvloop.run(main)
            return status
    return asyncio.run(main)


def runnable_command() -> str:
    """How to run this very ``kafka-scram`` from the current directory, as typed in a
    shell: the bare name only when PATH finds this executable (``make run`` starts
    ``.venv/bin/kafka-scram``, which is not on PATH)."""
    exe = sys.argv[0]
    if Path(exe).name != "kafka-scram" or not os.path.isfile(exe):
        return "kafka-scram"
    found = shutil.which("kafka-scram")
    if found and os.path.samefile(found, exe):
        return "kafka-scram"
    return exe if "/" in exe and not os.path.isabs(exe) else os.path.abspath(exe)


def how_to_connect(files: BootstrapFiles, bootstrap: str) -> str:
    state = "created" if files.created else "already exists"
    return (
        f"\nBootstrap super user {files.user!r} {state}; its credentials are in "
        f"{files.client_properties} (mode 0600).\n"
        "Connect with kcat (librdkafka 2.6.1 or newer):\n"
        f"  kcat -F {files.kcat_config} -L\n"
        "Connect with confluent-kafka:\n"
        "  from confluent_kafka.admin import AdminClient\n"
        "  from sasl_scram.integrations.confluent import client_config\n"
        f"  admin = AdminClient(client_config({str(files.client_properties)!r}))\n"
        "  print(admin.list_topics(timeout=10).brokers)\n"
        "Add a user:\n"
        f"  {runnable_command()} configs --bootstrap-server {bootstrap} --command-config "
        f"{files.client_properties} --alter --add-config 'SCRAM-SHA-512=[password=-]' "
        "--entity-type users --entity-name alice\n"
    )


def cannot_listen(config: EndpointConfig, exc: OSError) -> ScramConfigError:
    """A port in use or an address not on this host: a configuration problem."""
    listeners = ",".join(str(entry) for entry in config.listeners)
    cause = f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")
    # A pinned advertised.listeners must move with the port, or clients go to the old one.
    both = bool(config.properties.get("advertised.listeners", "").strip())
    keys = "'listeners' and 'advertised.listeners'" if both else "'listeners'"
    flags = "--override listeners=..." + (" --override advertised.listeners=..." if both else "")
    if exc.errno == errno.EADDRNOTAVAIL:
        hosts = ", ".join(_foreign_hosts(config)) or "a host there"
        fix = (
            f"{hosts} is not an address of this host: listen on one it has in 'listeners' "
            f"(0.0.0.0: all of them, 127.0.0.1: this machine only) ({flags})"
        )
    elif exc.errno == errno.EACCES:
        fix = f"a port below 1024 needs privileges: choose one above 1023 in {keys} ({flags})"
    elif isinstance(exc, socket.gaierror):
        hosts = ", ".join(sorted({entry.host for entry in config.listeners}))
        fix = (
            f"{hosts} cannot be resolved to an address: give an address or a name this "
            f"machine resolves in 'listeners' ({flags})"
        )
    elif exc.errno == errno.EADDRINUSE:
        fix = f"stop the process using the port or choose another in {keys} ({flags})"
    else:
        fix = f"check the addresses in {keys} ({flags})"
    return ScramConfigError(f"cannot listen on {listeners}: {cause}; {fix}")


def _foreign_hosts(config: EndpointConfig) -> list[str]:
    """The listeners' hosts this machine has no address for (a bind says so)."""
    foreign = []
    for listener in config.listeners:
        try:
            infos = socket.getaddrinfo(listener.host or None, 0, type=socket.SOCK_STREAM)
        except OSError:
            continue
        for family, kind, proto, _, address in infos:
            with socket.socket(family, kind, proto) as probe:
                try:
                    probe.bind(address)
                except OSError as exc:
                    if exc.errno == errno.EADDRNOTAVAIL and listener.host not in foreign:
                        foreign.append(listener.host)
    return foreign


def open_credential_store(config: EndpointConfig, *, warn: bool = True) -> CredentialStore:
    """The store ``config`` names; ``warn``: say once (not in every worker) that
    others may write its folder."""
    from sasl_scram.store import open_store

    if config.store.scheme == "sqlite":
        # Stored and server keys let anyone impersonate the server: the state
        # directory is owner-only from its creation (the store creates the
        # database 0600 before SQLite opens it), as Kafka protects /config/users
        # with CREATOR_ALL ACLs.
        folder = config.store.path.parent
        created = private_folder(folder, STORE_PATH_KEY)
        if warn:
            warn_if_others_write(folder, created)
    return open_store(config.store)


def open_edge_acl_store(config: EndpointConfig) -> AclStore | None:
    """Where the edge's ACLs are kept, with ``authorizer.class.name``: beside the
    credentials (the same SQLite file, the same ZooKeeper chroot)."""
    if not config.authorizer:
        return None
    from sasl_scram.store import open_acl_store

    return open_acl_store(config.store)


def announce_ready(
    config: EndpointConfig, addresses: dict[str, tuple[str, int]], out: TextIO
) -> None:
    """The lines that say the endpoint listens (tests and scripts wait for them)."""
    for listener in config.listeners:
        host, port = addresses[listener.name]
        print(f"kafka-scram endpoint ready: {listener.name} {host}:{port}", file=out, flush=True)


async def _start(endpoint: ScramEndpoint, config: EndpointConfig) -> None:
    try:
        await endpoint.start()
    except OSError as exc:
        raise cannot_listen(config, exc) from None


async def _bootstrap(
    endpoint: ScramEndpoint, config: EndpointConfig, store: CredentialStore, stdout: TextIO
) -> None:
    user = config.bootstrap_user
    if user:
        host, port = endpoint.advertised_address(config.listeners[0].name)
        files = await asyncio.to_thread(
            ensure_bootstrap_user,
            store,
            user,
            config.bootstrap_file,
            config.mechanisms,
            f"{host}:{port}",
        )
        print(how_to_connect(files, f"{host}:{port}"), file=stdout, flush=True)


async def serve(config: EndpointConfig, stdout: TextIO, worker: WorkerRole | None = None) -> int:
    """One endpoint process until SIGTERM or SIGINT; a worker (``scram.workers``
    above 1) leaves the ready lines and the bootstrap user to its parent."""
    from sasl_scram.endpoint._extension import load_extensions
    from sasl_scram.endpoint.runtime._server import ScramEndpoint

    if config.bootstrap_user and worker is None:
        # Before the store opens and "ready" is said: the user's files must have
        # a place (the workers' parent checks it before it forks).
        private_folder(config.bootstrap_file.parent, BOOTSTRAP_FILE_KEY)
    store = open_credential_store(config, warn=worker is None)
    acl_store = open_edge_acl_store(config)
    extensions = load_extensions(config.properties, config.settings)
    endpoint = ScramEndpoint(
        config,
        store,
        extensions=extensions,
        worker_metrics=worker.metrics if worker is not None else None,
        reuse_port=worker is not None,
        acl_store=acl_store,
    )
    closed = False
    try:
        await _start(endpoint, config)
        # Handled before "ready" is said: a supervisor (or the workers' parent)
        # may stop the process the moment it hears it, and that stop must be
        # the graceful one, not the signal's default action.
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if worker is None:
            names = [listener.name for listener in config.listeners]
            announce_ready(config, {n: endpoint.advertised_address(n) for n in names}, stdout)
            await _bootstrap(endpoint, config, store, stdout)
        else:
            os.write(worker.ready_fd, b"%d\n" % worker.index)
        serving = asyncio.ensure_future(endpoint.serve_forever())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait((serving, stopping), return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if serving.done():
            # Ended before a signal: a failure found after start (a front door
            # whose cluster, once reached, refuses its login), one line, exit 1.
            serving.result()
        logging.getLogger("sasl_scram.endpoint").info("Shutting down")
        serving.cancel()
        await endpoint.close()
        closed = True
    finally:
        if not closed:
            await endpoint.close(grace_seconds=0)
        store.close()
        if acl_store is not None:
            acl_store.close()
    return 0
