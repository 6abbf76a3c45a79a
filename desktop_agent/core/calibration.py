"""Calibration's plain data: where its rings are, and what a calibration found.

The window that paints the rings (ui/calibration.py) and the engine side that asks the model
(host/calibration.py, planner/calibration.py) both read these; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from desktop_agent.core.models import ScreenMapping

#: where the targets sit, as fractions of the screen: corners and centre, none symmetric, so
#: pixels, 0–1000 and a resized image give clearly different answers
TARGET_SPOTS: tuple[tuple[str, float, float], ...] = (
    ("A", 0.12, 0.16),
    ("B", 0.86, 0.22),
    ("C", 0.50, 0.50),
    ("D", 0.22, 0.84),
    ("E", 0.78, 0.78),
)
TARGET_RADIUS = 28


@dataclass(frozen=True, slots=True)
class Target:
    """A ring with a letter, its centre in pixels (of the screen, or of the screenshot)."""

    label: str
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class CalibrationResult:
    """What a calibration found, as the window and the CLI show it.

    Attributes:
        lines: the report, one line each.
        suggested: the coordinate space to save as `model_coordinates`; None when the
            profile's own fits best (or nothing was answered): nothing to change.
    """

    lines: tuple[str, ...]
    suggested: str | None


def targets_for(width: int, height: int) -> tuple[Target, ...]:
    """The targets for a screen (or image) of width × height pixels."""
    return tuple(
        Target(label, round(fx * (width - 1)), round(fy * (height - 1)))
        for label, fx, fy in TARGET_SPOTS
    )


def to_image_targets(targets: Sequence[Target], mapping: ScreenMapping) -> tuple[Target, ...]:
    """Targets placed in screen pixels → where they are in the screenshot."""
    return tuple(Target(t.label, *mapping.to_image(t.x, t.y)) for t in targets)
