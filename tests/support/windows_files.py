"""Renaming onto, and removing, a file another process is reading — as Windows does it.

CPython's open() on Windows goes through the CRT's _wopen, which asks CreateFileW for
FILE_SHARE_READ | FILE_SHARE_WRITE and never FILE_SHARE_DELETE (CPython Modules/_io/fileio.c,
`_wopen`; the CRT's sharing mode _SH_DENYNO). While such a handle is open, MoveFileExW onto
the file (os.replace) and DeleteFileW (os.unlink) fail with ERROR_ACCESS_DENIED:
PermissionError with winerror 5 (learn.microsoft.com, CreateFileW "dwShareMode", and
MoveFileExW). POSIX lets both through.

`WindowsSharing.reader(path, reads=n)` stands for another process reading `path` with
Python's open(): it holds the file open until `n` replaces or removals of it have failed
(its read ends), then lets go.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _typeshed import StrOrBytesPath

ERROR_ACCESS_DENIED = 5


class WindowsSharing:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._held: dict[Path, int] = {}
        self.refused: list[tuple[str, Path]] = []
        replace, unlink = os.replace, os.unlink

        # os.replace's and os.unlink's own signatures (typeshed stdlib/os/__init__.pyi)
        def windows_replace(
            src: StrOrBytesPath,
            dst: StrOrBytesPath,
            *,
            src_dir_fd: int | None = None,
            dst_dir_fd: int | None = None,
        ) -> None:
            self._check("replace", Path(os.fsdecode(dst)))
            replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

        def windows_unlink(path: StrOrBytesPath, *, dir_fd: int | None = None) -> None:
            self._check("unlink", Path(os.fsdecode(path)))
            unlink(path, dir_fd=dir_fd)

        monkeypatch.setattr(os, "replace", windows_replace)
        monkeypatch.setattr(os, "unlink", windows_unlink)

    def reader(self, path: Path, *, reads: int) -> None:
        """Another process has `path` open, for the next `reads` attempts to move it."""
        self._held[Path(path).resolve()] = reads

    def _check(self, what: str, path: Path) -> None:
        key = path.resolve()
        left = self._held.get(key, 0)
        if left <= 0:
            return
        self._held[key] = left - 1
        self.refused.append((what, path))
        error = PermissionError(13, "Access is denied", str(path))
        error.winerror = ERROR_ACCESS_DENIED  # type: ignore[attr-defined]
        raise error
