"""The default data dir without platformdirs (store/data_dir.py) is platformdirs' own answer."""

from __future__ import annotations

import subprocess
import sys

import platformdirs
import pytest

from desktop_agent.store.data_dir import APP_NAME, default_data_dir, platform_data_dir_plainly

linux = pytest.mark.skipif(sys.platform != "linux", reason="the plain answer is Linux's")

#: (XDG_DATA_HOME, HOME): None leaves the variable unset
ENVIRONMENTS = [
    (None, "/home/ann"),
    ("", "/home/ann"),
    ("/data/xdg", "/home/ann"),
    ("/data/xdg/", "/home/ann/"),
    ("/data//xdg/./deep", "/home/ann"),
    ("//net/share", "/home/ann"),
    ("///three", "/home/ann"),
    (None, "/"),
    (None, "//"),
    (None, "/home//ann/./x/"),
    ("/data/xdg", None),
    ("relative/xdg", "/home/ann"),
    ("   ", "/home/ann"),
    (None, "relative-home"),
    (None, ""),
]


@linux
@pytest.mark.parametrize(("xdg", "home"), ENVIRONMENTS)
def test_the_plain_answer_is_platformdirs_or_none(
    xdg: str | None, home: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("XDG_DATA_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    plain = platform_data_dir_plainly()
    try:
        theirs = str(platformdirs.user_data_path(APP_NAME, appauthor=False))
    except RuntimeError:  # no home to be found: platformdirs gives up, and so does the plain one
        theirs = None
    if plain is not None:
        assert plain == theirs
    assert default_data_dir() == theirs or theirs is None
    # the usual environments are answered without platformdirs
    usual = (xdg or "").startswith("/") or (not xdg and (home or "").startswith("/"))
    assert (plain is not None) == usual


@linux
def test_the_android_app_check_is_left_to_platformdirs() -> None:
    assert platform_data_dir_plainly({"HOME": "/h", "ANDROID_DATA": "/data"}) is None
    assert platform_data_dir_plainly({"HOME": "/h"}) == "/h/.local/share/desktop-agent"


@linux
def test_the_default_data_dir_imports_neither_platformdirs_nor_pathlib_on_linux() -> None:
    code = (
        "import sys; from desktop_agent.store.data_dir import default_data_dir; "
        "default_data_dir(); print(sorted(m for m in ('platformdirs', 'pathlib') "
        "if m in sys.modules))"
    )
    # -S: no site, whose editable-install hook imports pathlib itself
    out = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}; {code}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "[]"
