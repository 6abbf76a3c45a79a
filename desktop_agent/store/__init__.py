"""The history store: runs, steps, grants and artifact files on SQLite (the only peewee user)."""

from desktop_agent.store.process import ProcessIdentity
from desktop_agent.store.repository import SqliteRunRepository

__all__ = ["ProcessIdentity", "SqliteRunRepository"]
