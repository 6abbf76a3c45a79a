"""The history store: runs, steps, grants and artifact files on SQLite (the only peewee user).

`SqliteRunRepository` is imported on first use: `store.private_files` (file modes, used by the
log and the settings) must not pull peewee into every process that only writes a file.
"""

from __future__ import annotations

# not typing's: `stop-all` imports store.liveness through here and never needs typing
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from desktop_agent.store.process import ProcessIdentity
    from desktop_agent.store.repository import SqliteRunRepository

__all__ = ["ProcessIdentity", "SqliteRunRepository"]


def __getattr__(name: str) -> Any:
    if name == "SqliteRunRepository":
        from desktop_agent.store.repository import SqliteRunRepository

        return SqliteRunRepository
    if name == "ProcessIdentity":
        from desktop_agent.store.process import ProcessIdentity

        return ProcessIdentity
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
