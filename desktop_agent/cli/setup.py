"""What every sub-command does first: the data dir made and checked, the log file opened.

Light on purpose (no pydantic, no asyncio): `stop-all` starts through here.
"""

from __future__ import annotations

import os
from pathlib import Path


def prepare_data_dir(value: str | None) -> Path:
    from desktop_agent.core.errors import ConfigError
    from desktop_agent.store.data_dir import ForeignDataDir, make_data_dir, resolve_data_dir

    data_dir = resolve_data_dir(value)
    try:
        make_data_dir(data_dir)
        probe = data_dir / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except ForeignDataDir as error:
        raise ConfigError(str(error)) from None
    except OSError as error:
        from desktop_agent.cli.words import tr

        said = tr("data dir {dir} cannot be written: {why}", dir=data_dir, why=error.strerror)
        raise ConfigError(said) from None
    return data_dir


def log_to_file(data_dir: Path) -> None:
    """Notices go to <data dir>/desktop-agent.log (rotated, 0600), never to stderr (DESIGN §5)."""
    from desktop_agent.logs import log_to_file

    log_to_file(data_dir)
