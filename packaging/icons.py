"""Draw the app icon's PNG sizes (hicolor theme layout) and a Windows .ico from its SVG (Qt).

QT_QPA_PLATFORM=offscreen python packaging/icons.py SVG OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

#: the hicolor sizes desktops look up (the SVG serves every other size)
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def main(svg: str, out: str) -> int:
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QGuiApplication, QIcon

    app = QGuiApplication([sys.argv[0]])
    icon = QIcon(svg)
    if icon.isNull() or not Path(svg).is_file():
        sys.stderr.write(f"icons.py: cannot read {svg} (is the Qt SVG plugin there?)\n")
        return 2
    root = Path(out)
    images = {}
    for size in SIZES:
        image = icon.pixmap(QSize(size, size)).toImage()
        if image.width() != size:
            image = image.scaled(size, size)
        target = root / "hicolor" / f"{size}x{size}" / "apps" / "desktop-agent.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target), "PNG"):
            sys.stderr.write(f"icons.py: cannot write {target}\n")
            return 2
        images[size] = target
    try:
        from PIL import Image
    except ImportError:
        pass
    else:
        largest = Image.open(images[256])
        largest.save(root / "desktop-agent.ico", sizes=[(s, s) for s in ICO_SIZES])
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
