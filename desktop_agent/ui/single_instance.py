"""InstanceGuard: one app per data dir. A second launch asks the first to come to the front.

The first instance listens on a local socket named from the data dir's hash; a launch that
reaches it sends "raise" and exits. On Linux and macOS the socket is the Unix socket Qt's
QLocalServer makes for that name (`QDir.tempPath()/<name>`), spoken here with the standard
library's `_socket` and a QSocketNotifier on Qt's loop: QtNetwork (~7 ms to import) and
hashlib's OpenSSL (~3 ms) are not on the way to the window's first paint, and a launch of
this version and an instance of an older one (QLocalServer, QLocalSocket) still find each
other. On Windows the name is a named pipe, and QLocalServer and QLocalSocket speak it.
"""

from __future__ import annotations

import _socket  # socket.py's own base; socket.py adds enums whose making is ~3 ms of a start
import errno
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCryptographicHash, QDir, QObject, QSocketNotifier, Signal, Slot

if TYPE_CHECKING:
    from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

#: how long a second launch waits for the first instance to take its message
INSTANCE_TIMEOUT_MS = 500
RAISE = b"raise"
#: what a connection may send before it is no longer read
MESSAGE_MAX_BYTES = 64


class InstanceGuard(QObject):
    """One app per data dir: a local socket named from the data dir's hash (module docstring).

    Signals:
        raise_requested: another launch on the same data dir asked for the window.

    Attributes:
        name: the local socket's name (QLocalServer's), the same in every version.
        path: where the Unix socket is (QLocalServer's full server name for `name`).
        qt_sockets: spoken with QtNetwork's QLocalServer and QLocalSocket (Windows), not the
            standard library's socket.
    """

    raise_requested = Signal()

    def __init__(
        self, data_dir: Path, parent: QObject | None = None, *, qt_sockets: bool | None = None
    ) -> None:
        super().__init__(parent)
        owner = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
        key = f"{owner}:{data_dir.resolve()}".encode()
        digest = QCryptographicHash.hash(key, QCryptographicHash.Algorithm.Sha256)
        self.name = f"desktop-agent-{bytes(digest.toHex().data()).decode()[:16]}"
        self.path = f"{QDir.cleanPath(QDir.tempPath())}/{self.name}"
        self.qt_sockets = sys.platform == "win32" if qt_sockets is None else qt_sockets
        self._listener: _UnixListener | _QtListener | None = None

    def signal_running(self) -> bool:
        """True when another instance took our "raise" message."""
        if self.qt_sockets:
            return _qt_signal(self.name)
        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        connection.settimeout(INSTANCE_TIMEOUT_MS / 1000)
        try:
            connection.connect(self.path)
            connection.sendall(RAISE + b"\n")
        except OSError:  # no socket file, nobody listening on it, or no answer in time
            return False
        finally:
            connection.close()
        return True

    def listen(self) -> bool:
        """Listen for later launches; False (logged) when the socket cannot be made."""
        listener = _QtListener(self) if self.qt_sockets else _UnixListener(self)
        if not listener.listen():
            return False
        self._listener = listener
        return True

    def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()


class _UnixListener(QObject):
    """The guard's Unix socket, read on Qt's loop (QSocketNotifier), never blocking it."""

    def __init__(self, guard: InstanceGuard) -> None:
        super().__init__(guard)
        self._guard = guard
        self._server: _socket.socket | None = None
        self._notifier: QSocketNotifier | None = None
        self._inode = 0
        #: each open connection: its socket and what it has sent so far
        self._connections: dict[QSocketNotifier, tuple[_socket.socket, bytearray]] = {}

    def listen(self) -> bool:
        path = self._guard.path
        try:
            server = self._bind(path)
        except OSError as error:
            log.warning("single-instance socket %s: %s", path, error.strerror or error)
            return False
        server.listen(50)
        server.setblocking(False)
        self._server = server
        self._inode = os.stat(path).st_ino
        self._notifier = QSocketNotifier(server.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self.on_connection)
        return True

    @staticmethod
    def _bind(path: str) -> _socket.socket:
        server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            try:
                server.bind(path)
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
                # a socket file left by a crashed instance: nobody answered on it before
                os.unlink(path)
                server.bind(path)
            os.chmod(path, 0o700)  # its user's alone, as QLocalServer's UserAccessOption
        except OSError:
            server.close()
            raise
        return server

    @Slot()
    def on_connection(self) -> None:
        server = self._server
        while server is not None:
            try:
                # socket.py's accept() is `fd, addr = self._accept()` plus its wrapper object
                descriptor, _ = server._accept()  # type: ignore[attr-defined]
            except OSError:  # none waiting (EAGAIN), or one gone before it was taken
                return
            connection = _socket.socket(fileno=descriptor)
            connection.setblocking(False)
            notifier = QSocketNotifier(descriptor, QSocketNotifier.Type.Read, self)
            self._connections[notifier] = (connection, bytearray())
            notifier.activated.connect(self.on_readable)

    @Slot()
    def on_readable(self) -> None:
        notifier = self.sender()
        if not isinstance(notifier, QSocketNotifier) or notifier not in self._connections:
            return
        connection, received = self._connections[notifier]
        try:
            chunk = connection.recv(MESSAGE_MAX_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        received += chunk
        if RAISE in received:
            log.info("another launch on this data dir asked for the window")
            self._guard.raise_requested.emit()
            received.clear()
        if not chunk or len(received) >= MESSAGE_MAX_BYTES:
            self._drop(notifier)

    def _drop(self, notifier: QSocketNotifier) -> None:
        connection, _ = self._connections.pop(notifier)
        notifier.setEnabled(False)
        notifier.activated.disconnect(self.on_readable)
        notifier.deleteLater()
        connection.close()

    def close(self) -> None:
        for notifier in list(self._connections):
            self._drop(notifier)
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.activated.disconnect(self.on_connection)
            self._notifier.deleteLater()
            self._notifier = None
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        path = self._guard.path
        try:
            if os.stat(path).st_ino == self._inode:  # ours, not a later instance's
                os.unlink(path)
        except OSError:
            pass


def _qt_signal(name: str) -> bool:
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(INSTANCE_TIMEOUT_MS):
        return False
    socket.write(RAISE + b"\n")
    sent = socket.waitForBytesWritten(INSTANCE_TIMEOUT_MS)
    socket.disconnectFromServer()
    return sent


class _QtListener(QObject):
    """The guard's QLocalServer (a named pipe on Windows)."""

    def __init__(self, guard: InstanceGuard) -> None:
        super().__init__(guard)
        self._guard = guard
        self._server: QLocalServer | None = None
        self._sockets: set[QLocalSocket] = set()

    def listen(self) -> bool:
        from PySide6.QtNetwork import QLocalServer

        name = self._guard.name
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(name):
            # a socket file left by a crashed instance: nobody answered on it before
            QLocalServer.removeServer(name)
            if not server.listen(name):
                log.warning("single-instance socket %s: %s", name, server.errorString())
                return False
        server.newConnection.connect(self.on_new_connection)
        self._server = server
        return True

    @Slot()
    def on_new_connection(self) -> None:
        server = self._server
        while server is not None and server.hasPendingConnections():
            socket = server.nextPendingConnection()
            self._sockets.add(socket)
            socket.readyRead.connect(self.on_ready_read)
            socket.disconnected.connect(self.on_socket_disconnected)

    @Slot()
    def on_ready_read(self) -> None:
        from PySide6.QtNetwork import QLocalSocket

        socket = self.sender()
        if isinstance(socket, QLocalSocket) and RAISE in bytes(socket.readAll().data()):
            log.info("another launch on this data dir asked for the window")
            self._guard.raise_requested.emit()

    @Slot()
    def on_socket_disconnected(self) -> None:
        from PySide6.QtNetwork import QLocalSocket

        socket = self.sender()
        if isinstance(socket, QLocalSocket):
            self._sockets.discard(socket)

    def close(self) -> None:
        server, self._server = self._server, None
        for socket in self._sockets:
            socket.readyRead.disconnect(self.on_ready_read)
            socket.disconnected.disconnect(self.on_socket_disconnected)
            socket.abort()
        self._sockets.clear()
        if server is not None:
            server.close()
