"""The headless GNOME desk: a native Wayland GTK window lives on it, with no X server at all."""

from __future__ import annotations

import os

from desktop_agent.eval.wayland_desk import WaylandSession
from tests.support.wayland import AtspiRig


def test_a_native_wayland_editor_opens_on_the_headless_desk(
    wayland_session: WaylandSession, atspi_rig: AtspiRig, tmp_path: os.PathLike[str]
) -> None:
    env = wayland_session.child_env()
    assert "DISPLAY" not in env and env["GDK_BACKEND"] == "wayland"
    editor = wayland_session.spawn(["l3afpad"])
    try:
        application = atspi_rig.wait_for("application", "l3afpad")
        frame = atspi_rig.wait_for("frame", "Untitled", application)
        # GTK found no X server to fall back on (mutter runs with --no-x11): the window is a
        # Wayland surface of this desk's compositor
        assert editor.poll() is None and frame.name == "(Untitled)"
        assert os.path.exists(os.path.join(wayland_session.runtime_dir, wayland_session.display))
    finally:
        wayland_session.stop(editor)
