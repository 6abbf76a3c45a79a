"""One app per data dir (ui/single_instance.py): a second launch raises the first and exits.

The guard speaks the Unix socket QLocalServer makes for its name with the standard library on
Linux and macOS, and QtNetwork's QLocalServer / QLocalSocket on Windows; both run here, against
each other too (an instance of an older version listens with QLocalServer)."""

from __future__ import annotations

import _socket
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from desktop_agent.ui.single_instance import InstanceGuard

pytestmark = pytest.mark.posix  # the Unix socket; Windows takes the QtNetwork path

BOTH = pytest.mark.parametrize(
    ("server_qt", "client_qt"),
    [(False, False), (True, True), (True, False), (False, True)],
    ids=["unix", "qt", "unix launch, qt instance", "qt launch, unix instance"],
)


@pytest.fixture
def guards() -> Any:
    made: list[InstanceGuard] = []
    yield made
    for guard in made:
        guard.close()


@BOTH
def test_a_second_launch_on_the_same_data_dir_raises_the_first(
    qtbot: Any,
    qapp: QApplication,
    tmp_path: Path,
    guards: list[InstanceGuard],
    server_qt: bool,
    client_qt: bool,
) -> None:
    first = InstanceGuard(tmp_path / "a", qt_sockets=server_qt)
    guards.append(first)
    assert first.signal_running() is False
    assert first.listen()

    with qtbot.waitSignal(first.raise_requested, timeout=3000):
        assert InstanceGuard(tmp_path / "a", qt_sockets=client_qt).signal_running() is True
    assert InstanceGuard(tmp_path / "b", qt_sockets=client_qt).signal_running() is False
    first.close()
    assert InstanceGuard(tmp_path / "a", qt_sockets=client_qt).signal_running() is False


def test_the_socket_keeps_the_name_of_earlier_versions_and_is_its_users_alone(
    qapp: QApplication, tmp_path: Path, guards: list[InstanceGuard]
) -> None:
    from PySide6.QtNetwork import QLocalServer

    guard = InstanceGuard(tmp_path)
    guards.append(guard)
    digest = hashlib.sha256(f"{os.getuid()}:{tmp_path.resolve()}".encode()).hexdigest()[:16]
    assert guard.name == f"desktop-agent-{digest}"

    qt_server = QLocalServer()
    assert qt_server.listen(guard.name)
    try:
        assert guard.path == qt_server.fullServerName()
    finally:
        qt_server.close()

    assert guard.listen()
    assert stat.S_IMODE(os.stat(guard.path).st_mode) == 0o700


def test_a_socket_file_a_crashed_instance_left_is_taken_over(
    qtbot: Any, qapp: QApplication, tmp_path: Path, guards: list[InstanceGuard]
) -> None:
    guard = InstanceGuard(tmp_path)
    guards.append(guard)
    crashed = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    crashed.bind(guard.path)  # bound, never listening, then gone: the file stays
    crashed.close()
    assert os.path.exists(guard.path)

    assert guard.signal_running() is False
    assert guard.listen()
    with qtbot.waitSignal(guard.raise_requested, timeout=3000):
        assert InstanceGuard(tmp_path).signal_running() is True


def test_a_connection_that_says_nothing_does_not_hold_up_the_next_launch(
    qtbot: Any, qapp: QApplication, tmp_path: Path, guards: list[InstanceGuard]
) -> None:
    guard = InstanceGuard(tmp_path)
    guards.append(guard)
    assert guard.listen()
    silent = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    silent.connect(guard.path)
    try:
        qtbot.wait(50)  # the GUI loop takes the silent connection and goes on
        with qtbot.waitSignal(guard.raise_requested, timeout=3000):
            assert InstanceGuard(tmp_path).signal_running() is True
    finally:
        silent.close()


def test_closing_leaves_the_socket_of_a_later_instance_alone(
    qapp: QApplication, tmp_path: Path, guards: list[InstanceGuard]
) -> None:
    first = InstanceGuard(tmp_path)
    assert first.listen()
    os.unlink(first.path)  # as a later launch that found no answer would take the name over
    later = InstanceGuard(tmp_path)
    guards.append(later)
    assert later.listen()

    first.close()

    assert os.path.exists(later.path)
