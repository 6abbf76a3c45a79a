"""The approval dialog from "asked" to its first paint with the screenshot shown.

    python benchmarks/approval_dialog.py [--repeat 30] [--language en|zh_CN]

A 1280x720 screenshot (a JPEG file in a temporary data dir) is in the window's image
loader already (as it is once the timeline showed the turn). Each repetition builds the
dialog for a type_text call into a field with a known box (the close-up and its outline
since issue 35), opens it and forces its first paint; the median and the p95 are printed.
The same script runs on older commits (it passes `element` only where the request has it).

Runs offscreen unless QT_QPA_PLATFORM or DISPLAY says otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSize  # noqa: E402
from PySide6.QtGui import QColor, QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_agent.core.models import ApprovalRequest, Risk  # noqa: E402
from desktop_agent.ui.approval import ApprovalDialog  # noqa: E402
from desktop_agent.ui.timeline import ImageLoader  # noqa: E402


def request(screenshot: str) -> ApprovalRequest:
    fields = {f.name for f in dataclasses.fields(ApprovalRequest)}
    extra: dict[str, object] = {}
    if "element" in fields:
        from desktop_agent.core.models import ElementRef

        extra["element"] = ElementRef("focus", "edit", "Name", "Sign up", (600, 340, 120, 24))
    return ApprovalRequest(
        "a1", "run1", 3, "type_text", {"text": "Hello from Desktop Agent!"}, "type the greeting",
        Risk.INPUT, True, 30.0, screenshot=screenshot, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--language", default="en", help="the translators installed (zh_CN)")
    options = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    if options.language != "en":
        from desktop_agent.ui.i18n import install

        translators = install(app, options.language)  # noqa: F841 - kept for the app's life
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        (data_dir / "runs" / "run1").mkdir(parents=True)
        image = QImage(QSize(1280, 720), QImage.Format.Format_RGB32)
        image.fill(QColor("#3a6ea5"))
        image.save(str(data_dir / "runs/run1/0003.jpg"), "JPEG", 80)
        loader = ImageLoader(data_dir)
        key = loader.request("runs/run1/0003.jpg")
        while loader.cached("runs/run1/0003.jpg") is None and not loader.missing(key):
            app.processEvents()
        times: list[float] = []
        for _ in range(options.repeat + 3):
            start = time.perf_counter()
            dialog = ApprovalDialog(None, request("runs/run1/0003.jpg"), data_dir, loader=loader)
            dialog.open()
            dialog.repaint()  # the first paint, with the screenshot (it was cached)
            app.processEvents()
            times.append((time.perf_counter() - start) * 1000)
            dialog.dismiss()
            dialog.deleteLater()
            app.processEvents()
        times = sorted(times[3:])  # the first builds warm Qt's caches
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"approval dialog open → first paint: median {statistics.median(times):.1f} ms, "
              f"p95 {p95:.1f} ms ({options.repeat} runs)")  # fmt: skip
        loader.shutdown()


if __name__ == "__main__":
    main()
