"""Session-wide guard: a leaked non-daemon thread fails the run; a hung exit is ended."""

from __future__ import annotations

from tests.support.threads import pytest_sessionfinish, pytest_unconfigure

__all__ = ["pytest_sessionfinish", "pytest_unconfigure"]
