"""``kafka-scram serve --config server.properties [--override key=value]...``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sasl_scram._errors import ScramConfigError
from sasl_scram.cli._main import CommandUsageError
from sasl_scram.cli._texts import add_core_command
from sasl_scram.config import Properties, read_properties
from sasl_scram.endpoint import (
    EVENT_LOOP_KEY,
    BootstrapFiles,
    EndpointConfig,
    ensure_bootstrap_user,
)

if TYPE_CHECKING:
    from sasl_scram.endpoint import ScramEndpoint

__all__ = ["register"]


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = add_core_command(subparsers, "serve", _run)
    parser.add_argument(
        "--config", required=True, metavar="FILE", help="the server.properties file to read"
    )
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a property over the file's value (repeatable)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=LOG_LEVELS,
        help="logging level (default INFO); DEBUG also prints tracebacks",
    )


def load_properties(path: str, overrides: list[str]) -> Properties:
    props = read_properties(path)
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            # The argument is not echoed: it may be a secret typed without its key.
            raise CommandUsageError("--override expects KEY=VALUE")
        props.set(key.strip(), value, "--override")
    return props


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    # Every key is parsed once, here, before the loop is chosen: a bad value
    # is reported with its file and line, whichever key it is.
    config = EndpointConfig.from_properties(load_properties(args.config, args.override))
    return _run_loop(serve(config, stdout), config.event_loop)


def _run_loop(main: Coroutine[Any, Any, int], choice: str) -> int:
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
        else:
            return uvloop.run(main)
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


async def _start(endpoint: ScramEndpoint, config: EndpointConfig) -> None:
    try:
        await endpoint.start()
    except OSError as exc:
        # A port in use or an address not on this host: a configuration problem.
        listeners = ",".join(str(entry) for entry in config.listeners)
        cause = f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")
        # A pinned advertised.listeners must move with the port, or clients go to the old one.
        both = bool(config.properties.get("advertised.listeners", "").strip())
        keys = "'listeners' and 'advertised.listeners'" if both else "'listeners'"
        flags = "--override listeners=..." + (
            " --override advertised.listeners=..." if both else ""
        )
        raise ScramConfigError(
            f"cannot listen on {listeners}: {cause}; stop the process using "
            f"the port or choose another in {keys} ({flags})"
        ) from None


async def serve(config: EndpointConfig, stdout: TextIO) -> int:
    from sasl_scram.endpoint import ScramEndpoint, load_extensions
    from sasl_scram.store import open_store

    db: Path | None = None
    if config.store_location.startswith("sqlite:"):
        db = Path(config.store_location[len("sqlite:") :])
        # Stored and server keys let anyone impersonate the server: the state
        # directory is owner-only from its creation (the store creates the
        # database 0600 before SQLite opens it), as Kafka protects /config/users
        # with CREATOR_ALL ACLs.
        db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = open_store(config.store_location, **config.store_options())
    extensions = load_extensions(config.properties, config.settings)
    endpoint = ScramEndpoint(config, store, extensions=extensions)
    closed = False
    try:
        await _start(endpoint, config)
        for listener in config.listeners:
            host, port = endpoint.advertised_address(listener.name)
            print(
                f"kafka-scram endpoint ready: {listener.name} {host}:{port}",
                file=stdout,
                flush=True,
            )
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
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        serving = asyncio.ensure_future(endpoint.serve_forever())
        await stop.wait()
        logging.getLogger("sasl_scram.endpoint").info("Shutting down")
        serving.cancel()
        await endpoint.close()
        closed = True
    finally:
        if not closed:
            await endpoint.close(grace_seconds=0)
        store.close()
    return 0
