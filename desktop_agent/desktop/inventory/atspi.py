"""The Linux accessibility tree (AT-SPI over D-Bus, atspi_bus) of the active window, plus windows.

The walk sends one batch of calls per tree level (state, children and, the first time, role
of every node of the level, plus the name and extents of the controls found in the level
before) and stops at the walk's deadline with what it has. `atspi_status()` finds the
accessibility bus without ever auto-launching a D-Bus daemon.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from desktop_agent.core.ports import Focus
from desktop_agent.desktop.geometry import overlap
from desktop_agent.desktop.inventory.atspi_bus import (
    ACCESSIBLE,
    ACTION,
    COMPONENT,
    COORD_SCREEN,
    EDITABLE_TEXT,
    REGISTRY,
    ROOT_PATH,
    STATE_ACTIVE,
    STATE_EDITABLE,
    STATE_ENABLED,
    STATE_FOCUSED,
    STATE_SENSITIVE,
    STATE_SHOWING,
    STATE_VISIBLE,
    TEXT,
    VALUE,
    AtspiBus,
    AtspiError,
    Call,
    Node,
    accessibility_bus_address,
    states_contain,
)
from desktop_agent.desktop.inventory.base import (
    TEXT_LIMIT,
    TEXTS_LIMIT,
    RawElement,
    WalkLimits,
    clean_name,
    without,
)
from desktop_agent.desktop.inventory.x11 import (
    WindowInfo,
    X11Windows,
    activate_by_title,
    focus_x11,
    listed_windows,
    notification_elements,
    window_elements,
)

log = logging.getLogger(__name__)

#: AtspiRole's names by number (atspi-constants.h, as Atspi.role_get_name gives them). The
#: number (Accessible.GetRole) is what libatspi names roles by: a toolkit's own GetRoleName
#: may differ (Qt answers "text" for a password field whose role is "password text").
ROLE_NAMES = (
    "invalid",
    "accelerator label",
    "alert",
    "animation",
    "arrow",
    "calendar",
    "canvas",
    "check box",
    "check menu item",
    "color chooser",
    "column header",
    "combo box",
    "date editor",
    "desktop icon",
    "desktop frame",
    "dial",
    "dialog",
    "directory pane",
    "drawing area",
    "file chooser",
    "filler",
    "focus traversable",
    "font chooser",
    "frame",
    "glass pane",
    "html container",
    "icon",
    "image",
    "internal frame",
    "label",
    "layered pane",
    "list",
    "list item",
    "menu",
    "menu bar",
    "menu item",
    "option pane",
    "page tab",
    "page tab list",
    "panel",
    "password text",
    "popup menu",
    "progress bar",
    "push button",
    "radio button",
    "radio menu item",
    "root pane",
    "row header",
    "scroll bar",
    "scroll pane",
    "separator",
    "slider",
    "spin button",
    "split pane",
    "status bar",
    "table",
    "table cell",
    "table column header",
    "table row header",
    "tearoff menu item",
    "terminal",
    "text",
    "toggle button",
    "tool bar",
    "tool tip",
    "tree",
    "tree table",
    "unknown",
    "viewport",
    "window",
    "extended",
    "header",
    "footer",
    "paragraph",
    "ruler",
    "application",
    "autocomplete",
    "editbar",
    "embedded",
    "entry",
    "chart",
    "caption",
    "document frame",
    "heading",
    "page",
    "section",
    "redundant object",
    "form",
    "link",
    "input method window",
    "table row",
    "tree item",
    "document spreadsheet",
    "document presentation",
    "document text",
    "document web",
    "document email",
    "comment",
    "list box",
    "grouping",
    "image map",
    "notification",
    "info bar",
    "level bar",
    "title bar",
    "block quote",
    "audio",
    "video",
    "definition",
    "article",
    "landmark",
    "log",
    "marquee",
    "math",
    "rating",
    "timer",
    "static",
    "math fraction",
    "math root",
    "subscript",
    "superscript",
    "description list",
    "description term",
    "description value",
    "footnote",
    "content deletion",
    "content insertion",
    "mark",
    "suggestion",
    "push button menu",
)


#: AT-SPI role name → the role the model sees; anything else is structure, not listed
ROLES = {
    "push button": "button",
    "toggle button": "toggle",
    "check box": "checkbox",
    "radio button": "radio",
    "menu": "menu",
    "menu item": "menuitem",
    "check menu item": "menuitem",
    "radio menu item": "menuitem",
    "text": "edit",
    "entry": "edit",
    "password text": "edit",
    "combo box": "combobox",
    "list item": "listitem",
    "table cell": "cell",
    "tree item": "treeitem",
    "page tab": "tab",
    "link": "link",
    "slider": "slider",
    "spin button": "spinbutton",
}
#: preferred action names for invoke, in order
INVOKE_ACTIONS = ("click", "press", "activate", "toggle", "open", "jump")
#: the longest one batch of calls may wait: a hung application must not hold the walk
CALL_TIMEOUT_S = 0.8
#: a child reference to this path is no object
NULL_PATH = "/org/a11y/atspi/null"
#: roles never taken from the role cache: a toolkit changes an entry's role when it hides or
#: shows its text (GTK: "password text" <-> "entry"), and a password field must be seen as one
UNCACHED_ROLES = frozenset({"text", "entry", "password text", "terminal"})
#: roles whose text contents (AT-SPI Text) are read as screen text: what a document, a
#: page, a terminal or a label says is not in its name (issue 31: the injection guard)
CONTENT_ROLES = frozenset(
    {
        "text",
        "entry",
        "terminal",
        "paragraph",
        "label",
        "heading",
        "static",
        "caption",
        "document text",
        "document web",
        "document frame",
        "document email",
        "block quote",
    }
)
#: roles whose boxes outline a window's visible structure (their edges are drawn): where
#: the desktop hides the window's place, they help find it on the screenshot
OUTLINE_ROLES = frozenset(
    {
        "menu bar",
        "tool bar",
        "status bar",
        "scroll pane",
        "page tab list",
        "split pane",
        "viewport",
        "table",
        "tree table",
        "list",
        "list box",
        "header",
        "footer",
        "filler",
        "panel",
    }
)
#: roles of a window's parts whose pixels may hold text AT-SPI does not tell when they have
#: no child: a spreadsheet's grid (gnumeric's is a childless "panel"), a canvas, a drawing
#: area, an image; one as large as MIN_OPAQUE_AREA is read by OCR (`_Walked.opaque`)
OPAQUE_ROLES = frozenset(
    {"panel", "filler", "drawing area", "canvas", "image", "unknown", "embedded component"}
)
#: the least area (px²) of such a part read by OCR: 200 x 100
MIN_OPAQUE_AREA = 20_000
#: text contents read per window; past them the look is not read whole (MANY_TEXTS)
MAX_CONTENT_NODES = 150
#: why the screen's texts were not all read (the person asked reads it: fixed words)
MANY_TEXTS = "the screen shows more texts than the injection guard reads"
UNTOLD_PART = "the part of a very long text that shows on the screen could not be told"
LONG_PART = "the part of a long text that shows on the screen is longer than the guard reads"
TEXT_FAILED = "a text on the screen could not be read (its application answered an error)"
#: controls read as text per window that is not the active one; a window with more is read
#: from its pixels too (OCR)
MAX_OTHER_WINDOW_NODES = 150
#: the role cache is emptied past this many nodes (closed windows' nodes never come back)
ROLE_CACHE_MAX = 50_000
#: nodes looked at by focused() before giving up: the focus sits a few levels down
FOCUS_MAX_NODES = 3000


@dataclass(frozen=True, slots=True)
class _Text:
    """A text contents node to read: its role name, its box and the node."""

    role_name: str
    rect: tuple[int, int, int, int]
    node: Node

    def element(self, reply: Any) -> RawElement:
        """The text a GetText reply gives, as a read text."""
        return RawElement(
            self.role_name, str(reply[0]), self.rect, contents=True, native=("atspi", self.node)
        )


@dataclass(frozen=True, slots=True)
class _Walked:
    """What a snapshot (or read_texts itself) walked: the windows, the AT-SPI frames, the
    active frame, its nodes whose text contents are to be read, and whether it had any
    control."""

    windows: list[WindowInfo]
    frames: list[tuple[list[Node], Node, str, bool]]
    #: None: no AT-SPI frame of the active window was found (an app not on the bus, or not
    #: yet): its pixels are read
    walked: Node | None
    contents: list[tuple[Node, str]]
    controls: bool
    #: the active window's controls as texts, when the element list did not hold them
    names: tuple[RawElement, ...] | list[RawElement] = ()
    #: the walk left nodes of the active window unvisited for its bounds (controls, nodes,
    #: depth): what they say is read from the window's pixels, as another window's
    cut: bool = False
    #: the boxes of its childless opaque parts (OPAQUE_ROLES): their pixels are read
    opaque: tuple[tuple[int, int, int, int], ...] | list[tuple[int, int, int, int]] = ()


def atspi_status() -> tuple[bool, str]:
    """(usable, why): can this process reach the AT-SPI bus? Never starts a daemon."""
    try:
        import jeepney  # noqa: F401
    except ImportError as error:
        return False, f"jeepney is not importable ({error}): pip install jeepney"
    try:
        accessibility_bus_address()
    except LookupError as error:
        return False, str(error)
    except (OSError, TimeoutError, AtspiError, ValueError) as error:
        return False, (
            f"the AT-SPI bus is not running ({error}); "
            "start at-spi-bus-launcher (package at-spi2-core) in the desktop session"
        )
    return True, "the AT-SPI bus answers"


def _value(reply: Any) -> Any:
    """The value of a Properties.Get reply: ((signature, value),)."""
    return reply[0][1]


def role_name_of(number: Any) -> str:
    """The AT-SPI role name of a GetRole reply ("unknown" for a number past the table)."""
    index = int(number)
    return ROLE_NAMES[index] if 0 <= index < len(ROLE_NAMES) else "unknown"


def _offset(reply: Any) -> int | None:
    """The offset of a Text.GetOffsetAtPoint reply ("i"); None when it failed or is not told
    (negative)."""
    if isinstance(reply, Exception) or int(reply[0]) < 0:
        return None
    return int(reply[0])


def focus_place(node: Node) -> str:
    """What identifies a focused accessible among the desktop's: its application's bus name
    and object path (another terminal, or another tab's, is another object)."""
    return f"atspi:{node.bus}{node.path}"


def _children(reply: Any) -> list[Node]:
    return [Node(bus, path) for bus, path in reply[0] if path != NULL_PATH]


class AtspiInventory:
    """Top-level windows (X11) and the interactive elements of the active window (AT-SPI)."""

    name = "atspi"
    #: the boxes asked for: the screen's (X11); the window's own where the screen's are not
    #: known (Wayland, atspi_wayland.py)
    coords = COORD_SCREEN

    def __init__(self) -> None:
        self.windows = X11Windows()
        self.bus: AtspiBus | None = None
        #: role numbers of the nodes seen on this connection (a node's role does not change,
        #: except UNCACHED_ROLES'): a later walk asks only their children, as libatspi's own
        #: cache spares pyatspi the call
        self.roles: dict[Node, int] = {}
        #: what the last snapshot walked, for read_texts (None: it reached no active window,
        #: or its walk was cut at the list's deadline)
        self._seen: _Walked | None = None
        #: the controls the last snapshot listed (their names are in the element list)
        self._listed: frozenset[Any] = frozenset()
        #: why the last read_texts left some of the screen's text unread ("" when it did not)
        self.texts_unread = ""
        #: a batch of calls timed out since the walk or read began (a hung application
        #: holds one past CALL_TIMEOUT_S, before the walk's own deadline): what it asked for
        #: is not known, and the walk that broke off there ends as if whole
        self.late = False

    def thread_init(self) -> None:
        self.bus = AtspiBus(accessibility_bus_address())
        self.roles = {}

    def _call_many(self, calls: list[Call], limits: WalkLimits | None = None) -> list[Any]:
        """The replies, waiting no longer than CALL_TIMEOUT_S nor past the walk's deadline
        (which is on the walk's own clock)."""
        assert self.bus is not None, "thread_init() was not called"
        wait = CALL_TIMEOUT_S
        if limits is not None:
            wait = min(wait, max(limits.deadline - limits.clock(), 0.0))
        try:
            return self.bus.call_many(calls, time.monotonic() + wait)
        except TimeoutError:
            self.late = True
            raise

    def _call(self, call: Call, limits: WalkLimits | None = None) -> Any:
        (reply,) = self._call_many([call], limits)
        if isinstance(reply, Exception):
            raise reply
        return reply

    # -- listing -------------------------------------------------------------------------

    def snapshot(self, limits: WalkLimits) -> tuple[list[RawElement], str]:
        """The windows, the active window's controls and the notification windows (as
        `pixels` regions); what the screen says beside the names is `read_texts`'s."""
        self._seen = None
        self._listed = frozenset()
        self.late = False
        windows = listed_windows(self.windows, limits)
        elements = window_elements(windows)
        notices = notification_elements(self.windows, limits)
        if any(window.active and window.own for window in windows):
            # this app's own window has the focus: its controls are not the agent's to list
            return [*elements[: limits.max_elements], *notices], "x11"
        try:
            frames = self._frames(limits)
            roots = self._active_roots(windows, frames, limits)
        except TimeoutError:
            log.debug("AT-SPI walk cut at the deadline before the active window was found")
            frames, roots = [], []
        except Exception as error:  # noqa: BLE001 - any AT-SPI/D-Bus fault: windows only
            log.warning("AT-SPI listing failed, using the window list: %s", error)
            frames, roots = [], []
        if not roots:
            return [*elements[: limits.max_elements], *notices], "x11"
        contents: list[tuple[Node, str]] = []
        budget = limits.max_elements - len(elements)
        cut: list[bool] = []
        opaque: list[tuple[int, int, int, int]] = []
        controls = self._walk(
            roots, limits, budget=budget, contents=contents, cut=cut, opaque=opaque
        )
        self._listed = frozenset(control.native for control in controls)
        if not self.late and not limits.expired():
            self._seen = _Walked(
                windows, frames, roots[0], contents, bool(controls), cut=bool(cut), opaque=opaque
            )
        # else the walk may have been cut at the list's deadline (a new connection's first
        # walk, a loaded machine) or by a batch that timed out (a hung application): what
        # the rest of the window says is not known, and
        # read_texts walks it again within its own budget (eval inj-mail-run: the list held
        # a dialog's buttons, not the row under them that gave an order)
        return [*elements, *controls][: limits.max_elements] + notices, "atspi"

    def read_texts(self, limits: WalkLimits) -> list[RawElement]:
        """What the screen says beside the names of the last snapshot (`RawElement.contents`:
        the active window's text contents, the other windows' controls and contents) and
        the windows only OCR can read (`pixels`). A call of its own, with a deadline of its
        own: the element list's 100 ms budget is the model's, this is the injection guard's.
        When the snapshot did not reach the active window in time (the first walk on a new
        connection asks every node's role), it is walked here. The notification windows
        come first, whatever else is read: the snapshot's list holds them too, but a list
        past its budget reaches nobody, and a notification is where an order to the agent
        comes on a fresh desk (the observer reads a region both give once).
        What the deadline cut, or a fault left out, is said in `texts_unread`: the injection
        guard cannot know what it says, and asks."""
        self.texts_unread = ""
        self.late = False
        notices = notification_elements(self.windows, limits)
        try:
            seen = self._seen or self._walk_for_texts(limits)
            if seen is None:
                return notices
            texts = [*seen.names, *self._contents(seen.contents, limits)]
            active = next((w for w in seen.windows if w.active), None)
            if active is not None and (seen.cut or (not seen.controls and not texts)):
                # nothing readable in it, or more than the walk's bounds: its pixels tell
                texts += _pixels(active, [active.rect])
            elif active is not None and (opaque := _untold(seen.opaque, texts)):
                # parts whose text AT-SPI does not tell (a spreadsheet's grid): one region
                # around them all, within the window
                texts += _pixels(active, _within(_around(opaque), [active.rect]))
            others = self._other_windows(seen.windows, seen.frames, seen.walked, limits)
        except TimeoutError:
            log.debug("the screen's texts cut at their deadline")
            self.texts_unread = "the accessibility read of the screen's text came too late"
            return notices
        except Exception as error:  # noqa: BLE001 - any AT-SPI/D-Bus fault: no texts
            log.warning("the screen's texts could not be read: %s", error)
            self.texts_unread = "the accessibility read of the screen's text failed"
            return notices
        if self.late or limits.expired():
            # a walk or a read cut at the deadline, or by a batch that timed out: the rest of
            # what it would read is unknown
            log.debug("the screen's texts cut at their deadline")
            self.texts_unread = "the accessibility read of the screen's text came too late"
        return [*notices, *texts, *others]

    def _walk_for_texts(self, limits: WalkLimits) -> _Walked | None:
        """The active window walked for its texts: the snapshot did not reach it, or was
        cut before it had all of it. With no AT-SPI frame of it (an app not on the bus, or
        not yet: a window that just came up) nothing is walked, and its pixels are read."""
        windows = listed_windows(self.windows, limits)
        if any(window.active and window.own for window in windows):
            return None
        frames = self._frames(limits)
        roots = self._active_roots(windows, frames, limits)
        if not roots:
            return _Walked(windows, frames, None, [], False)
        contents: list[tuple[Node, str]] = []
        cut: list[bool] = []
        opaque: list[tuple[int, int, int, int]] = []
        controls = self._walk(
            roots, limits, limits.max_elements, contents=contents, cut=cut, opaque=opaque
        )
        # the element list did not have them this turn: their names are text on the screen
        names = [
            RawElement(e.role, e.name, e.rect, contents=True, native=e.native)
            for e in controls
            if e.name and e.native not in self._listed
        ]
        return _Walked(
            windows, frames, roots[0], contents, bool(controls), names, bool(cut), opaque
        )

    def _contents(self, nodes: list[tuple[Node, str]], limits: WalkLimits) -> list[RawElement]:
        """The text contents (AT-SPI Text) of `nodes`: a text of at most TEXT_LIMIT characters
        whole, of a longer one the part on the screen (`_shown_parts`). Two batches, the
        lengths and boxes, then the texts (and where each long text's shown part starts and
        ends; its part is a third). What the deadline cuts is left out (read_texts says so);
        what is not read otherwise is said in `texts_unread`: the nodes past
        MAX_CONTENT_NODES, and a long text whose shown part (or all it may show, where that
        part cannot be told) passes TEXTS_LIMIT (its first TEXT_LIMIT characters from where
        it shows are read all the same: an order there asks for its own reason)."""
        if len(nodes) > MAX_CONTENT_NODES:
            self._unread(MANY_TEXTS)
            nodes = nodes[:MAX_CONTENT_NODES]
        if not nodes or limits.expired():
            return []
        calls: list[Call] = []
        for node, _ in nodes:
            calls += [
                Call.prop(node, TEXT, "CharacterCount"),
                Call(node, COMPONENT, "GetExtents", "u", (self.coords,)),
            ]
        try:
            replies = self._call_many(calls, limits)
        except TimeoutError:
            return []
        wanted: list[_Text] = []
        reads: list[Call] = []
        long: list[tuple[_Text, int]] = []
        corners: list[Call] = []
        for index, (node, role_name) in enumerate(nodes):
            count, extents = replies[2 * index], replies[2 * index + 1]
            if isinstance(count, Exception) or isinstance(extents, Exception):
                continue
            length = int(_value(count))
            x, y, width, height = extents[0]
            if length <= 0 or width <= 0 or height <= 0:
                continue  # no text, or nothing of it drawn
            text = _Text(role_name, (x, y, width, height), node)
            if length > TEXT_LIMIT:
                # where its shown part starts and ends: the characters at the corners of its
                # box (GTK clamps a point to the text's visible area: the first and the last
                # character on the screen)
                long.append((text, length))
                corners += [
                    Call(node, TEXT, "GetOffsetAtPoint", "iiu", (at_x, at_y, self.coords))
                    for at_x, at_y in ((x, y), (x + width - 1, y + height - 1))
                ]
                continue
            # the end is never past the count: a toolkit may not clamp it (GTK 3's label
            # takes g_utf8_substring of it as given)
            reads.append(Call(node, TEXT, "GetText", "ii", (0, length)))
            wanted.append(text)
        if not reads and not corners:
            return []
        try:
            answers = self._call_many([*reads, *corners], limits)
        except TimeoutError:
            return []
        found = self._texts_read(wanted, answers[: len(reads)])
        if long:
            found += self._shown_parts(long, answers[len(reads) :], limits)
        return found

    def _texts_read(self, texts: list[_Text], answers: list[Any]) -> list[RawElement]:
        """The texts whose GetText answered; one that answered an error (it vanished since
        its length was read, or its application will not tell) shows on the screen all the
        same as far as the guard knows, so the look says it was not read whole."""
        found: list[RawElement] = []
        for text, answer in zip(texts, answers, strict=True):
            if isinstance(answer, Exception):
                log.debug("a text on the screen could not be read: %s", answer)
                self._unread(TEXT_FAILED)
                continue
            found.append(text.element(answer))
        return found

    def _shown_parts(
        self, long: list[tuple[_Text, int]], corners: list[Any], limits: WalkLimits
    ) -> list[RawElement]:
        """The parts on the screen of the long texts `long` (each with its length), from
        the offsets at the corners of their boxes (`corners`: two GetOffsetAtPoint replies
        each). Where a corner's offset is not told (-1: ATK's default without the method,
        GTK 3's label past its text's end, gtklabelaccessible.c, and Qt's text views at
        any corner, qaccessiblewidgets.cpp QAccessibleTextWidget::offsetAtPoint, a hit test
        with Qt::ExactHit), the text is read from its start, or to its end: more than shows,
        never less. A part longer than
        TEXTS_LIMIT is not read whole, and the look says so."""
        reads: list[Call] = []
        for index, (text, length) in enumerate(long):
            first, last = (_offset(reply) for reply in corners[2 * index : 2 * index + 2])
            # the last character shown is read too, never past the count
            start, end = first if first is not None else 0, length
            if last is not None:
                start, end = min(start, last), min(max(start, last) + 1, length)
            if end - start > TEXTS_LIMIT:
                told = first is not None and last is not None
                self._unread(LONG_PART if told else UNTOLD_PART)
                end = min(start + TEXT_LIMIT, length)
            reads.append(Call(text.node, TEXT, "GetText", "ii", (start, end)))
        try:
            answers = self._call_many(reads, limits)
        except TimeoutError:
            return []
        return self._texts_read([text for text, _ in long], answers)

    def _unread(self, why: str) -> None:
        """The read leaves some of the screen's text unread, and says why (the first reason
        found stands)."""
        log.debug("the screen's texts not all read: %s", why)
        self.texts_unread = self.texts_unread or why

    def _other_windows(
        self,
        windows: list[WindowInfo],
        frames: list[tuple[list[Node], Node, str, bool]],
        walked: Node | None,
        limits: WalkLimits,
    ) -> list[RawElement]:
        """What the windows other than the active one say: their controls' names and text
        contents as `contents` where they show, and the window's visible pieces as `pixels`
        regions when AT-SPI has no frame of it, nothing readable in it (surf's web view), or
        more than MAX_OTHER_WINDOW_NODES controls (the walk stops there: the rest of what
        it shows is read from its pixels)."""
        by_title = {clean_name(name): frame for _, frame, name, _ in frames if frame != walked}
        found: list[RawElement] = []
        above: list[tuple[int, int, int, int]] = []
        for window in windows:  # topmost first
            pieces = [window.rect]
            for cover in above:
                pieces = [part for piece in pieces for part in without(piece, cover)]
            above.append(window.rect)
            # a window hidden under others shows nothing to read; the active one is walked
            if window.active or window.own or not pieces:
                continue
            if limits.expired():
                break
            frame = by_title.get(window.title)
            if frame is None:
                found += _pixels(window, pieces)
                continue
            contents: list[tuple[Node, str]] = []
            cut: list[bool] = []
            opaque: list[tuple[int, int, int, int]] = []
            controls = self._walk(
                [frame], limits, MAX_OTHER_WINDOW_NODES, contents=contents, cut=cut, opaque=opaque
            )
            texts = self._contents(contents, limits)
            if limits.expired():
                break  # cut: what this window says is not known, and is not guessed
            if cut or (not controls and not texts):
                found += _pixels(window, pieces)
            elif untold := _untold(opaque, texts):
                found += _pixels(window, _within(_around(untold), pieces))
            shown = [
                RawElement(e.role, e.name, e.rect, contents=True, native=e.native)
                for e in controls
                if e.name
            ]
            # what another window covers is not on the screen: the model does not read it
            found += [item for item in (*shown, *texts) if _shows_in(item.rect, pieces)]
        return found

    def _frames(self, limits: WalkLimits | None) -> list[tuple[list[Node], Node, str, bool]]:
        """(the application's children, the frame, its name, active) of every showing
        top-level accessible."""
        registry = Node(REGISTRY, ROOT_PATH)
        apps = _children(self._call(Call(registry, ACCESSIBLE, "GetChildren"), limits))
        replies = self._call_many([Call(app, ACCESSIBLE, "GetChildren") for app in apps], limits)
        tops = [
            (_children(r), child)
            for r in replies
            if not isinstance(r, Exception)
            for child in _children(r)
        ]
        calls: list[Call] = []
        for _, top in tops:
            calls += [Call(top, ACCESSIBLE, "GetState"), Call.prop(top, ACCESSIBLE, "Name")]
        replies = self._call_many(calls, limits)
        found = []
        for index, (siblings, top) in enumerate(tops):
            states, name = replies[2 * index], replies[2 * index + 1]
            if isinstance(states, Exception) or isinstance(name, Exception):
                continue
            if states_contain(states[0], STATE_SHOWING) or states_contain(states[0], STATE_ACTIVE):
                active = states_contain(states[0], STATE_ACTIVE)
                found.append((siblings, top, str(_value(name)), active))
        return found

    def _active_frames(self, limits: WalkLimits | None) -> list[tuple[list[Node], Node, str]]:
        """(the application's children, the frame, its name) of every active frame."""
        return [(siblings, top, name) for siblings, top, name, on in self._frames(limits) if on]

    def _active_roots(
        self,
        windows: list[Any],
        frames: list[tuple[list[Node], Node, str, bool]],
        limits: WalkLimits,
    ) -> list[Node]:
        """The frame of the window X says is active (and the open popups of its application):
        an active frame of its title, else a showing one (AT-SPI's ACTIVE lags X's: the old
        frame still says ACTIVE a while after a new dialog took the focus, and the new one
        not yet), else an active frame with no name. None when no frame has its title (a
        window not on the bus, or not yet):
        read_texts reads that window's pixels, never an older frame's text as its. With no
        active window in X, the first active frame."""
        active = next((w for w in windows if w.active), None)
        # a frame of this app's own (AT-SPI may still call it active) is never walked
        own_titles = {w.title for w in windows if w.own}
        tops = [item for item in frames if clean_name(item[2]) not in own_titles]
        if active is not None:
            titled = [item for item in tops if clean_name(item[2]) == active.title]
            # a GTK window with no title (zenity --file-selection) has none on AT-SPI, while
            # X gives it the program's name (measured): an active frame with no name is its
            tops = titled or [item for item in tops if item[3] and not clean_name(item[2])]
        chosen = next((item for item in tops if item[3]), None)
        if chosen is None and active is not None and tops:
            chosen = tops[0]
        if chosen is None:
            return []
        siblings, frame = chosen[0], chosen[1]
        others = [node for node in siblings if node != frame]
        calls: list[Call] = []
        for node in others:
            calls += [Call(node, ACCESSIBLE, "GetRole"), Call(node, ACCESSIBLE, "GetState")]
        replies = self._call_many(calls, limits)
        roots = [frame]
        for index, node in enumerate(others):
            role, states = replies[2 * index], replies[2 * index + 1]
            if isinstance(role, Exception) or isinstance(states, Exception):
                continue
            if role_name_of(role[0]) == "window" and states_contain(states[0], STATE_SHOWING):
                roots.append(node)
        return roots

    def _walk(
        self,
        roots: list[Node],
        limits: WalkLimits,
        budget: int,
        contents: list[tuple[Node, str]] | None = None,
        outlines: list[tuple[int, int, int, int]] | None = None,
        cut: list[bool] | None = None,
        opaque: list[tuple[int, int, int, int]] | None = None,
    ) -> list[RawElement]:
        """Breadth first, so a walk cut short by the deadline still has the outer controls.

        Each level costs one batch: the state and children of each of its nodes (and its
        role, the first time it is seen), with the names and extents of the controls found
        one level up. A hidden node's children are asked with its state but not walked: a
        closed menu's items cost nothing. One batch a level, not two, halves the walk's
        round trips to the applications, which are most of its time. The showing nodes of
        CONTENT_ROLES are added to `contents` (node, role name) for `_contents`; with
        `outlines`, the boxes of the showing nodes of OUTLINE_ROLES (a window's visible
        structure: bars, panes) are added to it, asked with the controls' boxes. With `cut`,
        True is added to it when the walk left nodes unvisited for its bounds (`budget`
        controls, the limits' nodes and depth; not its deadline, which the caller sees). With
        `opaque`, the boxes of the showing childless nodes of OPAQUE_ROLES of at least
        MIN_OPAQUE_AREA are added to it, asked as the outlines are.
        """
        found: list[RawElement | None] = []
        # controls whose name and extents are asked with the next batch
        pending: list[tuple[int, Node, str, str, list[int]]] = []
        level = [(root, 0) for root in roots]
        visited = 0
        bounded = False  # nodes were left unvisited for the bounds
        while level or pending:
            if limits.expired():
                log.debug("AT-SPI walk cut at the deadline after %d nodes", visited)
                break
            room = max(limits.max_nodes - visited, 0)
            bounded = bounded or len(level) > room
            level = level[:room]
            calls: list[Call] = []
            for node, _ in level:
                calls += [Call(node, ACCESSIBLE, "GetState"), Call(node, ACCESSIBLE, "GetChildren")]
            unknown = [node for node, _ in level if node not in self.roles]
            calls += [Call(node, ACCESSIBLE, "GetRole") for node in unknown]
            for _, node, _, _, _ in pending:
                calls += [
                    Call.prop(node, ACCESSIBLE, "Name"),
                    Call(node, COMPONENT, "GetExtents", "u", (self.coords,)),
                ]
            try:
                replies = self._call_many(calls, limits)
            except TimeoutError:
                log.debug("AT-SPI walk cut at the deadline after %d nodes", visited)
                break
            offset = 2 * len(level) + len(unknown)
            for index, (slot, control, role, role_name, states) in enumerate(pending):
                name, extents = replies[offset + 2 * index], replies[offset + 2 * index + 1]
                if slot < 0:  # an outline, an opaque part
                    if not isinstance(extents, Exception):
                        _structure(extents[0], role, role_name, outlines, opaque)
                    continue
                if not isinstance(name, Exception) and not isinstance(extents, Exception):
                    found[slot] = _element(
                        control, str(_value(name)), extents[0], role, role_name, states
                    )
            pending = []
            visited += len(level)
            # every role asked is kept, a hidden node's too: it is not asked again
            roles = {
                node: self._role(node, reply)
                for node, reply in zip(unknown, replies[2 * len(level) : offset], strict=True)
            }
            next_level: list[tuple[Node, int]] = []
            for index, (node, depth) in enumerate(level):
                reply, children = replies[2 * index], replies[2 * index + 1]
                # a node that vanished mid-walk, or hidden: nothing under it shows either
                if isinstance(reply, Exception) or not states_contain(reply[0], STATE_SHOWING):
                    continue
                if len(found) >= budget:
                    bounded = True
                    break
                states = list(reply[0])
                number = roles[node] if node in roles else self.roles.get(node)
                if number is None:
                    continue
                role_name = role_name_of(number)
                kind = ROLES.get(role_name)
                told = not isinstance(children, Exception)
                below = _children(children) if told else []
                # an opaque part: childless (as far as it tells), its pixels hold its text
                leaf = opaque is not None and told and not below and role_name in OPAQUE_ROLES
                if kind is not None and states_contain(states, STATE_VISIBLE):
                    pending.append((len(found), node, kind, role_name, states))
                    found.append(None)
                elif leaf or (outlines is not None and role_name in OUTLINE_ROLES):
                    # its box is asked with the next batch
                    pending.append((-1, node, OPAQUE if leaf else "", role_name, states))
                if contents is not None and role_name in CONTENT_ROLES:
                    contents.append((node, role_name))
                if below:
                    if depth < limits.max_depth:
                        next_level.extend((child, depth + 1) for child in below)
                    else:
                        bounded = True
            level = next_level if len(found) < budget and visited < limits.max_nodes else []
            bounded = bounded or len(level) < len(next_level)
        if cut is not None and bounded:
            cut.append(True)
        return [element for element in found if element is not None]

    def _role(self, node: Node, reply: Any) -> int | None:
        """The role number of a GetRole reply, kept in the cache unless it is one of
        UNCACHED_ROLES; None when the node did not answer."""
        if isinstance(reply, Exception):
            return None
        number = int(reply[0])
        if len(self.roles) >= ROLE_CACHE_MAX:
            self.roles.clear()
        if role_name_of(number) not in UNCACHED_ROLES:
            self.roles[node] = number
        return number

    def focused(self, deadline: float) -> Focus:
        """The focused accessible of the active frames: its AT-SPI role name ("password
        text", "text", "terminal", ...) and place (`focus_place`); nothing known when none is
        found by `deadline` (monotonic)."""
        limits = WalkLimits(deadline=deadline)
        try:
            level = [frame for _, frame, _ in self._active_frames(limits)]
        except TimeoutError:
            return Focus()
        return self._focused_under(level, limits)

    def _focused_under(self, level: list[Node], limits: WalkLimits) -> Focus:
        """The role name and place of the first FOCUSED showing accessible under `level`,
        breadth first; nothing known when none is found within FOCUS_MAX_NODES or by the
        deadline."""
        visited = 0
        while level and visited < FOCUS_MAX_NODES and not limits.expired():
            calls: list[Call] = []
            for node in level:
                calls += [Call(node, ACCESSIBLE, "GetState"), Call(node, ACCESSIBLE, "GetChildren")]
            try:
                replies = self._call_many(calls, limits)
            except TimeoutError:
                return Focus()
            visited += len(level)
            next_level: list[Node] = []
            for index, node in enumerate(level):
                states, children = replies[2 * index], replies[2 * index + 1]
                if isinstance(states, Exception) or not states_contain(states[0], STATE_SHOWING):
                    continue  # nothing under a hidden node has the focus either
                if states_contain(states[0], STATE_FOCUSED):
                    try:
                        role = self._call(Call(node, ACCESSIBLE, "GetRole"), limits)[0]
                    except (TimeoutError, AtspiError):
                        return Focus()
                    return Focus(role_name_of(role), focus_place(node))
                if not isinstance(children, Exception):
                    next_level.extend(_children(children))
            level = next_level
        return Focus()

    # -- actions ---------------------------------------------------------------------------

    def _interfaces(self, node: Node) -> list[str]:
        return list(self._call(Call(node, ACCESSIBLE, "GetInterfaces"))[0])

    def invoke(self, native: Any) -> str:
        node = _accessible(native)
        if ACTION not in self._interfaces(node):
            raise LookupError("the element offers no AT-SPI action; use click")
        names = [action[0] for action in self._call(Call(node, ACTION, "GetActions"))[0]]
        if not names:
            raise LookupError("the element offers no AT-SPI action; use click")
        index = next((names.index(name) for name in INVOKE_ACTIONS if name in names), 0)
        if not self._call(Call(node, ACTION, "DoAction", "i", (index,)))[0]:
            raise LookupError(f"the element refused its action {names[index]!r}")
        return f"AT-SPI action {names[index]!r}"

    def set_value(self, native: Any, value: str) -> str:
        node = _accessible(native)
        interfaces = self._interfaces(node)
        if EDITABLE_TEXT in interfaces:
            if not self._call(Call(node, EDITABLE_TEXT, "SetTextContents", "s", (value,)))[0]:
                raise LookupError("the element refused the new text (read-only?)")
            return "set its text through AT-SPI"
        if VALUE not in interfaces:
            raise LookupError("the element has no editable text or value; use type_text")
        try:
            number = float(value)
        except ValueError:
            raise LookupError(f"the element takes a number, not {value!r}") from None
        self._call(
            Call(
                node,
                "org.freedesktop.DBus.Properties",
                "Set",
                "ssv",
                (VALUE, "CurrentValue", ("d", number)),
            )
        )
        return "set its value through AT-SPI"

    def focus(self, native: Any) -> str:
        if isinstance(native, tuple) and native[0] == "x11":
            return focus_x11(self.windows, native)
        node = _accessible(native)
        if COMPONENT not in self._interfaces(node):
            raise LookupError("the element cannot take the focus")
        if not self._call(Call(node, COMPONENT, "GrabFocus"))[0]:
            raise LookupError("the element refused the focus")
        return "focused it through AT-SPI"

    def activate_window(self, title: str) -> str:
        return activate_by_title(self.windows, title)

    def close(self) -> None:
        if self.bus is not None:
            self.bus.close()
            self.bus = None
        self.windows.close()


def _shows_in(rect: tuple[int, int, int, int], pieces: list[tuple[int, int, int, int]]) -> bool:
    """Whether any of `rect` lies in `pieces` (a window's visible parts): a text whose
    centre another window covers may still show its first line."""
    return any(without(rect, piece) != [rect] for piece in pieces)


#: a visible piece of a window smaller than this (px) is not read by OCR: no line of text fits
MIN_PIXEL_PIECE = (48, 16)


#: the mark, in a walk's pending structure node, of a childless opaque part
OPAQUE = "opaque"


def _structure(
    box: tuple[int, int, int, int],
    mark: str,
    role_name: str,
    outlines: list[tuple[int, int, int, int]] | None,
    opaque: list[tuple[int, int, int, int]] | None,
) -> None:
    """A structure node's box, once asked: an outline, an opaque part, or both."""
    x, y, width, height = box
    if width <= 0 or height <= 0:
        return
    if outlines is not None and role_name in OUTLINE_ROLES:
        outlines.append((x, y, width, height))
    if opaque is not None and mark == OPAQUE and width * height >= MIN_OPAQUE_AREA:
        opaque.append((x, y, width, height))


def _untold(
    opaque: tuple[tuple[int, int, int, int], ...] | list[tuple[int, int, int, int]],
    texts: list[RawElement],
) -> list[tuple[int, int, int, int]]:
    """The opaque parts no read text lies over: a text view's own viewport (Qt's is a
    childless part under the text's box) is told by its text, a spreadsheet's grid is not.
    A part is told when one text's box covers at least half of it."""
    return [
        box
        for box in opaque
        if not any(overlap(box, text.rect) * 2 >= box[2] * box[3] for text in texts)
    ]


def _around(
    boxes: tuple[tuple[int, int, int, int], ...] | list[tuple[int, int, int, int]],
) -> tuple[int, int, int, int]:
    """The smallest box around `boxes` (one OCR read, not one per part)."""
    left = min(x for x, _, _, _ in boxes)
    top = min(y for _, y, _, _ in boxes)
    right = max(x + width for x, _, width, _ in boxes)
    bottom = max(y + height for _, y, _, height in boxes)
    return left, top, right - left, bottom - top


def _within(
    box: tuple[int, int, int, int], pieces: list[tuple[int, int, int, int]]
) -> list[tuple[int, int, int, int]]:
    """The parts of `box` in `pieces` (a window's visible parts)."""
    found = []
    x, y, width, height = box
    for left, top, w, h in pieces:
        l2, t2 = max(x, left), max(y, top)
        r2, b2 = min(x + width, left + w), min(y + height, top + h)
        if r2 > l2 and b2 > t2:
            found.append((l2, t2, r2 - l2, b2 - t2))
    return found


def _pixels(window: WindowInfo, pieces: list[tuple[int, int, int, int]]) -> list[RawElement]:
    """The visible pieces of a window whose text only its pixels hold (the observer's OCR
    reads them)."""
    return [
        RawElement("window text", "", piece, pixels=True, native=("x11", window.id))
        for piece in pieces
        if piece[2] >= MIN_PIXEL_PIECE[0] and piece[3] >= MIN_PIXEL_PIECE[1]
    ]


def _element(
    node: Node, name: str, extents: Any, role: str, role_name: str, states: list[int]
) -> RawElement | None:
    x, y, width, height = extents
    if width <= 0 or height <= 0:
        return None
    if role == "edit" and role_name == "text" and not states_contain(states, STATE_EDITABLE):
        role = "text"
    return RawElement(
        role=role,
        name=name,
        rect=(x, y, width, height),
        enabled=states_contain(states, STATE_ENABLED) or states_contain(states, STATE_SENSITIVE),
        focused=states_contain(states, STATE_FOCUSED),
        password=role_name == "password text",
        native=("atspi", node),
    )


def _accessible(native: Any) -> Node:
    if isinstance(native, tuple) and native[0] == "atspi" and isinstance(native[1], Node):
        return native[1]
    raise LookupError("that element is a window, not a control; use focus_window or click")
