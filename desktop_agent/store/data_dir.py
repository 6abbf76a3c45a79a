"""Where the data dir is and how it is made: light (no pydantic; pathlib only when a Path is
asked for), for `stop-all`'s fast start and the entry's stop mark (desktop_agent/__main__.py)."""

from __future__ import annotations

import os
import posixpath
import sys
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

APP_NAME = "desktop-agent"
HOME_ENV = "DESKTOP_AGENT_HOME"


def resolve_data_dir(
    cli_value: str | Path | None = None, env: Mapping[str, str] = os.environ
) -> Path:
    """--data-dir, else DESKTOP_AGENT_HOME, else the platform's user data dir (not created)."""
    from pathlib import Path

    if cli_value:
        return Path(cli_value).expanduser()
    home = env.get(HOME_ENV)
    if home:
        return Path(home).expanduser()
    return Path(default_data_dir())


def default_data_dir() -> str:
    """The platform's user data dir for the app: `platformdirs.user_data_path(APP_NAME,
    appauthor=False)`, computed with the standard library where its answer is plain
    (`platform_data_dir_plainly`), else asked of platformdirs (which imports tempfile, shutil,
    bz2, lzma and random: ~9 ms of a stop-all's start under load)."""
    plain = platform_data_dir_plainly()
    if plain is not None:
        return plain
    import platformdirs

    return str(platformdirs.user_data_path(APP_NAME, appauthor=False))


def platform_data_dir_plainly(environ: Mapping[str, str] = os.environ) -> str | None:
    """platformdirs' user data dir of the app on Linux, where every platformdirs 4 gives the
    same answer; None anywhere else (the caller asks platformdirs).

    As platformdirs 4.14.9 reads it on Linux (`Unix`, chosen in `__init__.py:45-54` for a
    platform that is not Android, Windows, macOS or iOS): `_xdg.py:29-33` takes
    `$XDG_DATA_HOME` when it is an absolute path (`xdg_dir`, `_xdg.py:197-199`), else
    `unix.py:55-61` expands `~/.local/share` (`expand_user`, `_xdg.py:206-227`:
    `os.path.expanduser` when `$HOME` is absolute); `api.py:462-468` joins the app's name
    (appauthor=False and no version add nothing) and `api.py:146-148` makes it a Path.
    Older 4.x releases take any non-blank `$XDG_DATA_HOME` and any `$HOME`: the answers
    differ only for a relative or blank one, or without `$HOME`, which are left to
    platformdirs here. Root with `use_site_for_root` is not asked for. Not on macOS, whose
    `$XDG_DATA_HOME` counts only since a recent release, nor on Windows (its Known Folder
    API). tests/unit/store/test_data_dir.py compares the two."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
        return None
    if environ.get("ANDROID_DATA") is not None or environ.get("ANDROID_ROOT") is not None:
        return None  # platformdirs' Android app check: left to it
    xdg = environ.get("XDG_DATA_HOME", "")
    if xdg:
        if not posixpath.isabs(xdg):
            return None
        base = xdg
    else:
        home = environ.get("HOME", "")
        if not posixpath.isabs(home):
            return None
        base = posixpath.join(home.rstrip("/") or "/", ".local/share")
    return _as_pathlib_writes(posixpath.join(base, APP_NAME))


def _as_pathlib_writes(path: str) -> str:
    """`str(PurePosixPath(path))` without pathlib: empty and "." parts dropped, a root of
    exactly two slashes kept (POSIX leaves its meaning to the system)."""
    root = "//" if path.startswith("//") and not path.startswith("///") else "/"
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return root + "/".join(parts)


class ForeignDataDir(PermissionError):
    """A data dir (or settings file) another user owns or may write: refused, since its
    settings, routines and token would be theirs to choose (its message is one line)."""


def make_data_dir(path: Path) -> Path:
    """Create the data dir 0700 (missing parents with the usual modes), or make an existing
    one private as a new one is (private_files.tighten_data_dir says how far). OSError when
    it cannot be made; ForeignDataDir when it belongs to someone else (`refuse_foreign`)."""
    from pathlib import Path

    from desktop_agent.store.private_files import make_private_dir, tighten_data_dir

    path = Path(path)
    existed = path.is_dir()
    make_private_dir(path)
    if existed:
        refuse_foreign(path, "data dir", writable_checked=False)  # before anything is changed
        tighten_data_dir(path)
    refuse_foreign(path, "data dir")
    return path


def refuse_foreign(path: str | Path, what: str, *, writable_checked: bool = True) -> None:
    """ForeignDataDir when `path` is owned by another user than this process's effective
    one, or (`writable_checked`) when its group or others may write it; nothing on Windows
    (its folders are guarded by their ACL) or when `path` is missing.

    "Someone else" is any other uid, root's included: root running on a user's folder
    would read settings that user chose. Write access for a group or for everyone counts
    as well (a sticky /tmp is everyone's): they could plant the settings file."""
    if sys.platform == "win32":
        return
    import stat

    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    euid = os.geteuid()
    if info.st_uid != euid:
        raise ForeignDataDir(
            f"{what} {path} belongs to {_user(info.st_uid)}, not to {_user(euid)}: refused "
            "(its settings would be theirs); use a folder of your own (--data-dir or "
            f"{HOME_ENV})"
        )
    if writable_checked and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ForeignDataDir(
            f"{what} {path} can be written by others (mode {stat.S_IMODE(info.st_mode):o}): "
            f"refused (they could choose its settings); make it private (chmod go-w) or use "
            f"a folder of your own (--data-dir or {HOME_ENV})"
        )


def _user(uid: int) -> str:
    """'uid 1000 (ann)', the name when the system knows one."""
    import pwd

    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"
