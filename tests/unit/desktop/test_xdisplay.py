"""The test desktop helper refuses clearly when its programs are missing (CI must not skip)."""

from __future__ import annotations

import shutil

import pytest

from tests.support import xdisplay


def test_a_missing_xvfb_is_an_error_that_names_it_and_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_which = shutil.which
    # the desk code lives in desktop_agent.eval.desk (tests/support/xdisplay re-exports it)
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "Xvfb" else real_which(name))

    with pytest.raises(xdisplay.XSessionError) as raised:
        xdisplay.start_xsession()

    assert str(raised.value) == (
        "cannot start the test desktop: Xvfb not found; run scripts/bootstrap "
        "(it installs xvfb openbox xdotool dbus at-spi2-core)"
    )


def test_wait_until_returns_the_value_or_says_what_it_waited_for() -> None:
    assert xdisplay.wait_until(lambda: 42, timeout=0.1) == 42
    with pytest.raises(TimeoutError, match="waiting for the moon"):
        xdisplay.wait_until(lambda: None, timeout=0.05, what="the moon")
