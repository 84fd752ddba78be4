"""Owner-only folders, parents included, whatever the umask."""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["private_folders"]


def private_folders(folder: str | os.PathLike[str]) -> list[Path]:
    """Create ``folder`` and each missing parent with mode 0700.

    ``os.makedirs`` and ``Path.mkdir(parents=True)`` give the parents the umask's
    mode (0775 under umask 002): another user could then rename the state folder
    away and put one of theirs in its place.

    Returns:
        The folders created, outermost first (none when ``folder`` existed).

    Raises:
        OSError: a folder cannot be created, or ``folder`` is not a folder.
    """
    missing: list[Path] = []
    current = Path(os.path.abspath(folder))
    while not os.path.lexists(current):
        missing.append(current)
        current = current.parent
    created: list[Path] = []
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # made meanwhile by another process: not ours to change
        # Exactly 0700: the umask only ever removes bits.
        os.chmod(path, 0o700)
        created.append(path)
    if not os.path.isdir(folder):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(folder))
    return created
