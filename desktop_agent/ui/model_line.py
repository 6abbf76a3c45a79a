"""The task panel's model line: the settings' model, its server, and whether it can see."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from desktop_agent.core.errors import ModelNotListed, ModelUnreachable, StopRequested
from desktop_agent.ui.run_on_show import server_address
from desktop_agent.ui.text import one_line

if TYPE_CHECKING:
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.task_panel import TaskPanel

log = logging.getLogger(__name__)


async def check_model_line(
    client: EngineClient, panel: TaskPanel, asked_at: int | None = None
) -> ModelUnreachable | None:
    """Resolve (without a chat request) whether the settings' model can see, and say so on
    `panel`'s model line; the ModelUnreachable met (its `found`: what does answer here), else
    None. A stop after `asked_at` (the host's `stops`) gives it up: the line says it was
    stopped, and it is not asked again until the user asks (Settings… saved, a run started).
    An answer about settings the user has changed since is not shown."""
    host = client.host
    settings = host.settings
    if not host.checks_model:
        panel.set_vision("unknown", QCoreApplication.translate("TaskPanel", "model checks are off"))
        return None
    panel.set_vision("checking")
    try:
        verdict = await client.ask(host.vision_verdict, settings, asked_at=asked_at)
    except StopRequested:
        if host.settings is settings:
            panel.set_vision("unknown", QCoreApplication.translate("TaskPanel", "stopped"))
        return None
    except ModelUnreachable as error:
        if host.settings is settings:
            panel.set_server_absent(server_address(settings.base_url), one_line(error))
        return error
    except ModelNotListed as error:
        if host.settings is settings:
            address = server_address(settings.base_url)
            panel.set_model_missing(settings.model, address, one_line(error))
        return None
    except Exception as error:  # noqa: BLE001 - shown, never fatal
        log.info("vision check failed: %s", error)
        panel.set_vision("unknown", one_line(error))
        return None
    if host.settings is settings:
        panel.set_vision("yes" if verdict.can_see else "no", verdict.detail)
    return None
