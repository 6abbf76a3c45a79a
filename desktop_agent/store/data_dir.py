"""Where the data dir is and how it is made: light (no pydantic), for `stop-all`'s fast start."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_NAME = "desktop-agent"
HOME_ENV = "DESKTOP_AGENT_HOME"


def resolve_data_dir(
    cli_value: str | Path | None = None, env: Mapping[str, str] = os.environ
) -> Path:
    """--data-dir, else DESKTOP_AGENT_HOME, else the platform's user data dir (not created)."""
    if cli_value:
        return Path(cli_value).expanduser()
    home = env.get(HOME_ENV)
    if home:
        return Path(home).expanduser()
    import platformdirs

    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def make_data_dir(path: Path) -> Path:
    """Create the data dir 0700 (missing parents with the usual modes), or make an existing
    one private as a new one is (private_files.tighten_data_dir says how far). OSError when
    it cannot be made."""
    from desktop_agent.store.private_files import make_private_dir, tighten_data_dir

    path = Path(path)
    existed = path.is_dir()
    make_private_dir(path)
    if existed:
        tighten_data_dir(path)
    return path
