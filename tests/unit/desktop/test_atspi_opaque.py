"""Parts of a window whose pixels hold text AT-SPI does not tell — a spreadsheet's grid
(gnumeric's is a childless "panel"), a canvas, an image — are read by OCR: the model reads
their text on the screenshot, and the guard read only the labels beside them and passed the
look as read. A part a read text lies over (Qt's text view's viewport) is told by that text."""

from __future__ import annotations

from typing import Any

from desktop_agent.desktop.inventory.atspi import MIN_OPAQUE_AREA
from desktop_agent.desktop.inventory.atspi_bus import STATE_SHOWING, STATE_VISIBLE, AtspiError, Call
from desktop_agent.desktop.inventory.x11 import WindowInfo
from tests.unit.desktop.test_atspi_texts import (
    Accessible,
    FakeAtspiBus,
    inventory,
    limits,
    on_wayland,
)

SHEET = WindowInfo(3, "budget.csv - Gnumeric", "Gnumeric", (240, 122, 1440, 830), active=True)
#: gnumeric's grid on AT-SPI: a "panel" with no child and no text
GRID = (295, 333, 1371, 564)
SHOWN = (STATE_SHOWING, STATE_VISIBLE)


def sheet(*parts: Accessible, window: WindowInfo = SHEET, active: bool = True) -> Accessible:
    from desktop_agent.desktop.inventory.atspi_bus import STATE_ACTIVE

    states = (*SHOWN, *((STATE_ACTIVE,) if active else ()))
    status = Accessible("label", rect=(240, 914, 200, 20), text="Sum = 0")
    return Accessible("frame", window.title, window.rect, states=states, children=[status, *parts])


def read(*apps: tuple[WindowInfo, Accessible]) -> tuple[list[tuple[object, ...]], str]:
    clock = [0.0]
    backend = inventory(
        [w for w, _ in apps], [(f":1.{3 + i}", [a]) for i, (_, a) in enumerate(apps)], clock
    )
    backend.snapshot(limits(clock, 1.0))
    texts = backend.read_texts(limits(clock, 1.0))
    return [(t.role, t.name, t.rect, t.pixels, t.native) for t in texts], backend.texts_unread


def test_a_spreadsheets_grid_is_read_from_its_pixels() -> None:
    texts, unread = read((SHEET, sheet(Accessible("panel", rect=GRID))))

    assert ("label", "Sum = 0", (240, 914, 200, 20), False, texts[0][4]) in texts
    assert [t for t in texts if t[3]] == [("window text", "", GRID, True, ("x11", 3))]
    assert unread == ""


def test_a_part_under_a_read_texts_box_is_told_by_its_text() -> None:
    # Qt's QPlainTextEdit: its viewport is a childless part inside the text's own box
    view = Accessible("text", rect=(640, 307, 640, 480), text="line 0\nline 1")
    viewport = Accessible("filler", rect=(641, 308, 624, 478))
    texts, _ = read((SHEET, sheet(view, viewport)))

    assert [t for t in texts if t[3]] == []


def test_small_or_parent_parts_are_not_read_and_several_are_read_as_one() -> None:
    small = Accessible("panel", rect=(300, 200, 100, MIN_OPAQUE_AREA // 100 - 1))
    parent = Accessible(
        "panel", rect=GRID, children=[Accessible("push button", "OK", (300, 340, 80, 24))]
    )
    texts, _ = read((SHEET, sheet(small, parent)))
    assert [t for t in texts if t[3]] == []

    image = Accessible("image", rect=(1500, 150, 400, 100))  # partly past the window's right
    texts, _ = read((SHEET, sheet(Accessible("drawing area", rect=(300, 400, 300, 200)), image)))
    # one read around both, within the window (240 + 1440 = 1680)
    assert [t[2] for t in texts if t[3]] == [(300, 150, 1380, 450)]


def test_another_windows_grid_is_read_where_it_shows() -> None:
    editor = WindowInfo(2, "notes.txt", "L3afpad", (240, 122, 700, 830), active=True)
    notes = Accessible(
        "frame",
        "notes.txt",
        editor.rect,
        states=(*SHOWN, 0),
        children=[Accessible("text", rect=(242, 170, 696, 780), text="Meeting notes")],
    )
    inactive = WindowInfo(3, SHEET.title, "Gnumeric", SHEET.rect, active=False)
    texts, _ = read(
        (editor, notes),
        (inactive, sheet(Accessible("panel", rect=GRID), window=inactive, active=False)),
    )

    # the grid's part right of the editor (the editor ends at x = 940)
    assert [t[2] for t in texts if t[3]] == [(940, 333, 726, 564)]


def test_on_wayland_a_grid_is_read_relative_to_its_window() -> None:
    # as on X11; its box is the window's own px, placed by the observer with the window's
    clock = [0.0]
    save = Accessible("push button", "Save", (250, 170, 40, 30))  # the list gives a control
    backend = on_wayland([(":1.3", [sheet(save, Accessible("panel", rect=GRID))])], clock)
    backend.snapshot(limits(clock, 1.0))

    texts = backend.read_texts(limits(clock, 1.0))

    regions = [t for t in texts if t.pixels]
    assert [(t.rect, t.relative is not None) for t in regions] == [(GRID, True)]
    assert all(t.relative == regions[0].relative for t in texts)


class ChildlessAnswersError(FakeAtspiBus):
    """FakeAtspiBus where one node's GetChildren answers a D-Bus error (it went away between
    its state and its children: atspi_bus.call_many gives the error reply as AtspiError)."""

    def __init__(self, broken: Accessible, *args: Any) -> None:
        super().__init__(*args)
        self.broken = broken

    def _answer(self, call: Call) -> Any:
        node = self.nodes.get((call.node.bus, call.node.path))
        if node is self.broken and call.method == "GetChildren":
            return AtspiError("org.freedesktop.DBus.Error.UnknownObject", "no such path")
        return super()._answer(call)


def test_a_part_whose_children_cannot_be_read_is_no_opaque_part_and_breaks_no_walk() -> None:
    # on Wayland the outlines are asked too: a panel is both an outline and, when childless,
    # an opaque part; one whose children are not known is neither read nor walked under
    clock = [0.0]
    panel = Accessible("panel", rect=GRID)
    save = Accessible("push button", "Save", (250, 170, 40, 30))
    backend = on_wayland([], clock)
    backend.bus = ChildlessAnswersError(panel, [(":1.3", [sheet(save, panel)])], clock)  # type: ignore[assignment]

    elements, _ = backend.snapshot(limits(clock, 1.0))
    texts = backend.read_texts(limits(clock, 1.0))

    assert [(e.role, e.name) for e in elements] == [("button", "Save")]
    assert [t for t in texts if t.pixels] == []
