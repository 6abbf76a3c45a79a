"""What a call acted on (`ElementRef`) and the mark of a hidden text (`REDACTED`).

Below both the views (core/models.py, which re-exports them: every layer may go on importing
them from there) and a call's plain sentence (core/sentences.py), which words the views: so
the sentence needs nothing of models.py, and models.py's approval may word itself with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: what stands for a hidden text in stored arguments, reasons, raw output and summaries
REDACTED = "•••"


@dataclass(frozen=True, slots=True)
class ElementRef:
    """What an action acted on, said so that it can be found again on another screen.

    `how`: "element" (an element of the list), "point" (the smallest element under the
    clicked point), "focus" (the focused control a text or key went to), "window" (only
    the window is known). `box` and `window_box` are in screenshot px, as they were then;
    `window` is the window's label ("" when no window was known).
    """

    how: Literal["element", "point", "focus", "window"]
    role: str
    name: str
    window: str
    box: tuple[int, int, int, int]
    window_box: tuple[int, int, int, int] | None = None
    password: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "how": self.how,
            "role": self.role,
            "name": self.name,
            "window": self.window,
            "box": list(self.box),
            "window_box": list(self.window_box) if self.window_box else None,
            "password": self.password,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ElementRef:
        """The inverse of to_json; KeyError, TypeError or ValueError when it does not fit."""
        how = data["how"]
        if how not in ("element", "point", "focus", "window"):
            raise ValueError(f"unknown element reference kind {how!r}")
        window_box = data.get("window_box")
        return cls(
            how=how,
            role=str(data["role"]),
            name=str(data["name"]),
            window=str(data["window"]),
            box=_box(data["box"]),
            window_box=_box(window_box) if window_box is not None else None,
            password=bool(data.get("password", False)),
        )


def _box(value: Any) -> tuple[int, int, int, int]:
    if not isinstance(value, list | tuple) or len(value) != 4:
        raise ValueError(f"a box is 4 whole numbers, not {value!r}")
    left, top, width, height = (int(v) for v in value)
    return left, top, width, height
