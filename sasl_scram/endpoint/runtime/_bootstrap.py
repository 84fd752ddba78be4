"""The bootstrap super user of a fresh endpoint.

On first start (the user has no credential yet) it is created with a random
password, and ready-to-use client files are written with mode 0600: Kafka
client properties and a kcat configuration. The password is never printed.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import jaas
from sasl_scram._errors import ScramConfigError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config import format_properties
from sasl_scram.config import read_properties
from sasl_scram.endpoint._config import BOOTSTRAP_FILE_KEY
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import ScramAdmin
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import private_folders

__all__ = ["BootstrapFiles", "ensure_bootstrap_user", "private_folder", "warn_if_others_write"]

log = logging.getLogger("sasl_scram.endpoint")


@dataclass(frozen=True)
class BootstrapFiles:
    user: str
    created: bool
    client_properties: Path
    kcat_config: Path


def private_folder(folder: Path, key: str) -> list[Path]:
    """Create ``folder`` and its missing parents (each owner-only); a folder that
    cannot be made is a configuration error naming ``key``, the key that put a
    file there.

    Returns:
        The folders created, outermost first.

    Raises:
        ScramConfigError: ``folder`` cannot be created.
    """
    try:
        return private_folders(folder)
    except OSError as exc:
        raise ScramConfigError(
            f"{key}: cannot create the folder {folder}: {exc.strerror or exc}; "
            "choose a path in a folder this user may write"
        ) from None


def _mode(path: Path) -> int | None:
    """``path``'s mode bits; ``None`` when it cannot be read (gone, no access)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None


def warn_if_others_write(folder: Path, created: list[Path]) -> None:
    """A WARNING for ``folder``, or a parent of it just created, that others may
    write: they could rename it away and put a folder of theirs in its place."""
    for path in dict.fromkeys([*created, folder]):
        mode = _mode(path)
        if mode is not None and mode & 0o002:
            log.warning(
                "%s is writable by others (mode %o): another user could replace the "
                "credential store's folder; run chmod o-w on it",
                path, mode,
            )  # fmt: skip


def _stage(path: Path, text: str, encoding: str = "utf-8") -> Path:
    """``text`` durably in ``path``'s temporary sibling, for :func:`_place`; nothing
    is left behind if it cannot be written."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding=encoding) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _place(staged: list[tuple[Path, Path]]) -> None:
    """Rename each staged file to its place, then sync the folder: the renames
    are durable before anyone is told the files are there."""
    for tmp, path in staged:
        tmp.replace(path)
    folder = os.open(staged[0][1].parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def _write_private(path: Path, text: str, encoding: str = "utf-8") -> None:
    private_folders(path.parent)
    _place([(_stage(path, text, encoding), path)])


def _warn_if_shared(path: Path) -> None:
    """A WARNING naming a password file that group or others may read."""
    mode = _mode(path)
    if mode is not None and mode & 0o077:
        log.warning(
            "%s is readable or writable by group or others (mode %o): it holds a "
            "password; run chmod 600 on it",
            path,
            mode & 0o777,
        )


_BOOTSTRAP_LINE = re.compile(r"^[ \t\f]*bootstrap\.servers[ \t\f]*[=:\s].*$", re.MULTILINE)


def _follow_address(path: Path, bootstrap: str) -> None:
    """Point a file written at an earlier start to where the endpoint now listens.

    The files keep the password of that start; only ``bootstrap.servers``
    changes, so that a client reading them after a port change (``--override
    listeners=...``) goes to the port that serves.
    """
    try:
        current = read_properties(path).get("bootstrap.servers")
    except ScramConfigError:
        return  # no file (removed by its owner): nothing to follow
    if current is None or current == bootstrap:
        return
    # Byte for byte: ISO-8859-1 maps every byte to one character and back.
    text = path.read_text(encoding="latin-1")
    text = _BOOTSTRAP_LINE.sub(f"bootstrap.servers={bootstrap}", text, count=1)
    _write_private(path, text, encoding="latin-1")
    log.info("%s: bootstrap.servers changed from %s to %s", path, current, bootstrap)


def ensure_bootstrap_user(
    store: ScramAdmin,
    user: str,
    properties_path: Path,
    mechanisms: tuple[ScramMechanism, ...],
    bootstrap: str,
) -> BootstrapFiles:
    """Create ``user`` with a random password unless it already has a credential.

    The files that hold the password are written (as temporary files) before
    the user is created, so that a password is never in the store alone.

    Raises:
        ScramConfigError: the files' folder cannot be created.
    """
    kcat_path = properties_path.with_name(properties_path.stem + "-kcat.conf")
    private_folder(properties_path.parent, BOOTSTRAP_FILE_KEY)
    if _has_user(store, user):
        for path in (properties_path, kcat_path):
            _warn_if_shared(path)
            _follow_address(path, bootstrap)
        return BootstrapFiles(user, False, properties_path, kcat_path)
    password = secrets.token_urlsafe(24)
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text, encoding in _file_texts(
            properties_path, kcat_path, user, password, mechanisms, bootstrap
        ):
            staged.append((_stage(path, text, encoding), path))
        _create_user(store, user, password, mechanisms)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    _place(staged)
    return BootstrapFiles(user, True, properties_path, kcat_path)


def _has_user(store: ScramAdmin, user: str) -> bool:
    described = store.describe([user])
    return bool(described.results) and described.results[0].error == ErrorCode.NONE


def _create_user(
    store: ScramAdmin, user: str, password: str, mechanisms: tuple[ScramMechanism, ...]
) -> None:
    """Create ``user``; raise unless it exists afterwards. A write whose outcome
    is unknown (the ZooKeeper connection dropped mid-request) may have been
    applied: then the user exists with this password, and its files must stay."""
    results = store.alter(
        [], [ScramUpsertion.from_password(user, mech, password, 8192) for mech in mechanisms]
    )
    failed = [r for r in results if r.error != ErrorCode.NONE]
    if failed and not _has_user(store, user):
        raise RuntimeError(f"could not create bootstrap user {user!r}: {failed[0].message}")


def _file_texts(
    properties_path: Path,
    kcat_path: Path,
    user: str,
    password: str,
    mechanisms: tuple[ScramMechanism, ...],
    bootstrap: str,
) -> list[tuple[Path, str, str]]:
    """The client properties and kcat's configuration: each file, its text, its encoding."""
    mechanism = mechanisms[-1].mechanism_name
    properties = (
        properties_path,
        format_properties(
            {
                "bootstrap.servers": bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": jaas.scram_login_line(user, password),
            }
        ),
        "ascii",
    )
    kcat = (
        kcat_path,
        f"bootstrap.servers={bootstrap}\n"
        "security.protocol=SASL_PLAINTEXT\n"
        f"sasl.mechanisms={mechanism}\n"
        f"sasl.username={user}\n"
        f"sasl.password={password}\n",
        "utf-8",
    )
    return [properties, kcat]
