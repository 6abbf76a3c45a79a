"""Take README's pictures of a first run: the main window with the model finder over it.

    .venv/bin/python scripts/first_run_screenshots.py [--out docs/images]

Renders offscreen (QT_QPA_PLATFORM=offscreen, no display needed) the real MainWindow, its
model line saying that no server answers, and the real ModelServersDialog over it, once
with the servers a look found (Ollama and LM Studio on their usual ports) and once with
none. The dialog is shown with views of what a look returns (core/model_servers.py), so
the picture shows the usual ports, not a test's random ones. It writes:

- first-run-servers-found.png  the finder listing the servers and their models
- first-run-no-server.png      the finder with the ways to get a server
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def found() -> object:
    from desktop_agent.core.model_servers import Discovery, FoundModel, FoundServer

    ollama = FoundServer(
        "ollama",
        "Ollama",
        "http://127.0.0.1:11434/v1",
        (
            FoundModel(
                "qwen2.5vl:7b",
                True,
                "ollama",
                "Ollama lists: completion, vision",
                "qwen2.5-vl-ollama",
            ),
            FoundModel("gemma3:4b", True, "ollama", "Ollama lists: completion, vision", "gemma3"),
            FoundModel(
                "llama3.2:3b", False, "ollama", "Ollama lists: completion, tools", "generic"
            ),
        ),
    )
    lmstudio = FoundServer(
        "lmstudio",
        "LM Studio",
        "http://127.0.0.1:1234/v1",
        (
            FoundModel(
                "ui-tars-1.5-7b",
                True,
                "lmstudio",
                "LM Studio lists it as type 'vlm'",
                "ui-tars-1.5",
            ),
            FoundModel(
                "qwen3-8b", False, "lmstudio", "LM Studio lists it as type 'llm'", "generic"
            ),
        ),
    )
    return Discovery((ollama, lmstudio), (11434, 1234, 8080, 8000, 1337))


def picture(window: object, dialog: object) -> object:
    """The window with the dialog over its middle, as the user sees them."""
    from PySide6.QtGui import QColor, QPainter, QPen

    shot = window.grab()  # type: ignore[attr-defined]
    over = dialog.grab()  # type: ignore[attr-defined]
    painter = QPainter(shot)
    x = (shot.width() - over.width()) // 2
    y = (shot.height() - over.height()) // 2
    painter.fillRect(x + 6, y + 6, over.width(), over.height(), QColor(0, 0, 0, 60))
    painter.drawPixmap(x, y, over)
    painter.setPen(QPen(QColor("#888888")))
    painter.drawRect(x, y, over.width() - 1, over.height() - 1)
    painter.end()
    return shot


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))
    out = Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    from desktop_agent.core.builtin_tools import builtin_registry
    from desktop_agent.core.model_servers import Discovery
    from desktop_agent.ui.main_window import MainWindow
    from desktop_agent.ui.model_servers import ModelServersDialog

    app = QApplication.instance() or QApplication(["desktop-agent"])
    window = MainWindow()
    window.resize(1100, 720)
    window.panel.set_model("qwen2.5vl", "http://localhost:11434/v1")
    window.panel.set_server_absent("localhost:11434", "")
    window.panel.set_tools(builtin_registry().specs())
    window.panel.set_ready(True)
    window.set_status("Ready.")
    window.show()
    for name, discovery in (
        ("first-run-servers-found.png", found()),
        ("first-run-no-server.png", Discovery((), (11434, 1234, 8080, 8000, 1337))),
    ):
        dialog = ModelServersDialog(window, platform="linux")
        dialog.resize(700, 560 if name.endswith("no-server.png") else 380)
        dialog.show_found(discovery, ("http://127.0.0.1:11434/v1", "qwen2.5vl:7b"))  # type: ignore[arg-type]
        dialog.show()
        app.processEvents()
        target = out / name
        picture(window, dialog).save(str(target))  # type: ignore[attr-defined]
        print(f"wrote {target}")
        dialog.close()
        dialog.deleteLater()
        app.processEvents()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
