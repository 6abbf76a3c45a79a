"""ctypes' Windows loaders over a fake's DLLs, last errors included, as CPython does them.

- `ctypes.WinDLL(name, use_last_error=True)`: each call of its functions swaps the thread's
  system last error with ctypes' private copy right before the call and right after it
  (CPython Modules/_ctypes/callproc.c, `_call_function_pointer`: `if (flags &
  FUNCFLAG_USE_LASTERROR) { int temp = space[1]; space[1] = GetLastError(); SetLastError(temp);
  }` on both sides), and `ctypes.get_last_error()` answers the private copy of the calling
  thread (Doc/library/ctypes.rst, "use_last_error").
- `ctypes.windll.NAME`: the same functions, nothing swapped; GetLastError is one more call.
- `errors.clobbered = True`: the interpreter's own work after a call returns changes the
  thread's system error, as a successful TlsGetValue does ("calls SetLastError to clear a
  thread's last error when it succeeds", learn.microsoft.com, "TlsGetValue function"): what
  a later separate GetLastError call reads is then 0, the private copy is not touched.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import pytest

_PROTOTYPE = ("restype", "argtypes", "errcheck")


class ThreadErrors:
    """Each thread's system last error (what GetLastError answers) and ctypes' copy."""

    def __init__(self) -> None:
        self.system: dict[int, int] = {}
        self.saved: dict[int, int] = {}
        self.clobbered = False

    @staticmethod
    def me() -> int:
        return threading.get_ident()

    def set(self, code: int) -> None:
        """What a failing function of the fake does: SetLastError(code)."""
        self.system[self.me()] = code

    def get(self) -> int:
        """GetLastError."""
        return self.system.get(self.me(), 0)

    def swap(self) -> None:
        me = self.me()
        self.system[me], self.saved[me] = self.saved.get(me, 0), self.system.get(me, 0)

    def get_last_error(self) -> int:
        """ctypes.get_last_error."""
        return self.saved.get(self.me(), 0)


class _Function:
    def __init__(self, function: Any, errors: ThreadErrors, swapping: bool) -> None:
        object.__setattr__(self, "_function", function)
        object.__setattr__(self, "_errors", errors)
        object.__setattr__(self, "_swapping", swapping)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._function, name, value)  # a prototype set on the function itself

    def __getattr__(self, name: str) -> Any:
        return getattr(self._function, name)

    def __call__(self, *args: Any) -> Any:
        if self._swapping:
            self._errors.swap()
        try:
            return self._function(*args)
        finally:
            if self._swapping:
                self._errors.swap()
            if self._errors.clobbered:
                self._errors.system[self._errors.me()] = 0


class _Dll:
    def __init__(self, dll: Any, errors: ThreadErrors, swapping: bool) -> None:
        self._dll, self._errors, self._swapping = dll, errors, swapping
        self._functions: dict[str, _Function] = {}

    def __getattr__(self, name: str) -> _Function:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._functions:
            function = getattr(self._dll, name)
            self._functions[name] = _Function(function, self._errors, self._swapping)
        return self._functions[name]


def install(monkeypatch: pytest.MonkeyPatch, fake: Any, errors: ThreadErrors) -> None:
    """ctypes.windll and ctypes.WinDLL / get_last_error over `fake`'s DLL attributes."""
    loaded: dict[tuple[str, bool], _Dll] = {}

    def dll(name: str, swapping: bool) -> _Dll:
        key = (name.lower(), swapping)
        if key not in loaded:
            loaded[key] = _Dll(getattr(fake, name.lower()), errors, swapping)
        return loaded[key]

    class _WinDll:
        def __getattr__(self, name: str) -> _Dll:
            return dll(name, False)

    def win_dll(name: str, use_last_error: bool = False) -> _Dll:
        return dll(name, use_last_error)

    monkeypatch.setattr(ctypes, "windll", _WinDll(), raising=False)
    monkeypatch.setattr(ctypes, "WinDLL", win_dll, raising=False)
    monkeypatch.setattr(ctypes, "get_last_error", errors.get_last_error, raising=False)
