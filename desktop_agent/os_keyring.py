"""The OS keyring that keeps the API key: keyring's backend, chosen among this platform's own.

keyring chooses its backend (keyring/core.py `_detect_backend`) by importing every backend it
knows — the `keyring.backends` entry points of every installed package (backend.py
`_load_plugins`) — and asking each its priority. Its macOS backend looks its frameworks up as
it is imported (keyring/backends/macOS/api.py: `ctypes.CDLL(find_library('Security'))`, then
CoreServices and Foundation), which on Linux runs `ldconfig -p` and, where installed, gcc and
ld for each of the three: ~60 ms of CPU here and 0.9 s of wall under strace, on the way to the
app's first model check and its local API. The choice here is keyring's — the backend that
PYTHON_KEYRING_BACKEND or keyringrc.cfg names (keyring's `load_env`, `load_config`), else the
viable backend of highest priority — made among the backends keyring ships for this platform
only. Two differences: another package's backend is used only when named in one of those two
ways; and where two of the platform's backends are viable, the one of highest priority is used
rather than keyring's chain of both (the chain reads from it first and writes to it: the key
this app saved is there).
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = ["choose_backend", "os_keyring", "platform_backends"]

log = logging.getLogger(__name__)

#: keyring's own backends by platform, as "module:class"
_MACOS = ("keyring.backends.macOS:Keyring",)
_WINDOWS = ("keyring.backends.Windows:WinVaultKeyring",)
#: Linux and the BSDs: the freedesktop services over D-Bus
_FREEDESKTOP = (
    "keyring.backends.SecretService:Keyring",
    "keyring.backends.kwallet:DBusKeyring",
    "keyring.backends.kwallet:DBusKeyringKWallet4",
    "keyring.backends.libsecret:Keyring",
)

_choosing = threading.Lock()


def platform_backends(platform: str = sys.platform) -> tuple[str, ...]:
    """keyring's backends that can work on `platform` (sys.platform's values)."""
    if platform == "darwin":
        return _MACOS
    if platform == "win32":
        return _WINDOWS
    return _FREEDESKTOP


def os_keyring() -> KeyringBackend:
    """The process's keyring backend: the one set with `keyring.set_keyring` (a test's
    in-memory one), else the one `choose_backend` gives, set as the process's the first time.

    Blocking (imports, maybe D-Bus): call it off the GUI thread and off an event loop."""
    from keyring import core

    with _choosing:
        # keyring/core.py: get_keyring() detects a backend while this is None
        if getattr(core, "_keyring_backend", None) is None:
            core.set_keyring(choose_backend())
        return core.get_keyring()


def choose_backend(platform: str = sys.platform) -> KeyringBackend:
    """The backend keyring would choose (the module docstring), importing only the backends
    of `platform`; keyring's `fail.Keyring` (every call raises NoKeyringError) when none is
    viable."""
    from keyring import core
    from keyring.backend import by_priority
    from keyring.backends import fail

    named = core.load_env() or core.load_config()
    if named is not None:
        return named
    viable: list[KeyringBackend] = []
    for where in platform_backends(platform):
        module_name, _, class_name = where.partition(":")
        try:
            backend_class = getattr(importlib.import_module(module_name), class_name)
        except Exception as error:  # noqa: BLE001 - keyring's _load_plugins logs and goes on too
            log.debug("keyring backend %s not loaded: %s", where, error)
            continue
        if backend_class.viable:  # its priority is known (it raises where it cannot work)
            viable.append(backend_class())
    nothing: KeyringBackend = fail.Keyring()  # type: ignore[no-untyped-call]
    return max(viable, key=by_priority, default=nothing)
