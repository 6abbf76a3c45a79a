"""Artifact files of a run (screenshots, thumbnails): runs/<run id>/<name> under the data dir."""

from __future__ import annotations

from pathlib import Path

from desktop_agent.core.errors import StoreError
from desktop_agent.store.private_files import make_private_dir, write_private

RUNS_DIR = "runs"


def _check_part(what: str, value: str) -> None:
    if (
        not value
        or value in (".", "..")
        or "/" in value
        or "\\" in value
        or "\0" in value
        or value != value.strip()
    ):
        raise StoreError(f"invalid artifact {what} {value!r}: one plain file name part is needed")


def relative_path(run_id: str, name: str) -> str:
    """runs/<run id>/<name>, with forward slashes on every OS; StoreError for a bad part."""
    _check_part("run id", run_id)
    _check_part("name", name)
    return f"{RUNS_DIR}/{run_id}/{name}"


def write_file(path: Path, data: bytes) -> None:
    """Write one artifact, making its run's folder on the first one.

    No temporary name and rename: the loop stores a path in a step row only after
    the file is written, so nobody is pointed at half a file, and the rename would
    cost as much as the write. Screenshots show the user's screen: the file is 0600,
    `runs/` and the run's folder 0700.
    """
    try:
        write_private(path, data)
    except FileNotFoundError:
        make_private_dir(path.parent.parent)
        make_private_dir(path.parent)
        write_private(path, data)
