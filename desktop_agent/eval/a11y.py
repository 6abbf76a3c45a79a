"""Read the text of a window's elements through AT-SPI, for the eval's element checker.

Run on the task's desk as `python -m desktop_agent.eval.a11y TITLE_PART ROLE` (the desk's D-Bus
in the environment, so parallel desks never share this process's environment); it prints one
JSON list of the texts (Text.GetText, else Value.CurrentValue, else the name) of the elements
of that role in the frames whose name contains TITLE_PART.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from desktop_agent.desktop.inventory.atspi import role_name_of
from desktop_agent.desktop.inventory.atspi_bus import (
    ACCESSIBLE,
    REGISTRY,
    ROOT_PATH,
    TEXT,
    VALUE,
    AtspiBus,
    Call,
    Node,
    accessibility_bus_address,
)

NULL_PATH = "/org/a11y/atspi/null"
MAX_NODES = 3000
CALL_S = 2.0


def _ask(bus: AtspiBus, call: Call) -> Any:
    (reply,) = bus.call_many([call], time.monotonic() + CALL_S)
    if isinstance(reply, Exception):
        raise reply
    return reply


def _children(bus: AtspiBus, node: Node) -> list[Node]:
    try:
        reply = _ask(bus, Call(node, ACCESSIBLE, "GetChildren"))
    except Exception:  # noqa: BLE001 - a node that vanished has no children to read
        return []
    return [Node(name, path) for name, path in reply[0] if path != NULL_PATH]


def _text_of(bus: AtspiBus, node: Node) -> str:
    interfaces = _ask(bus, Call(node, ACCESSIBLE, "GetInterfaces"))[0]
    if TEXT in interfaces:
        count = _ask(bus, Call.prop(node, TEXT, "CharacterCount"))[0][1]
        return str(_ask(bus, Call(node, TEXT, "GetText", "ii", (0, int(count))))[0])
    if VALUE in interfaces:
        return str(_ask(bus, Call.prop(node, VALUE, "CurrentValue"))[0][1])
    return str(_ask(bus, Call.prop(node, ACCESSIBLE, "Name"))[0][1])


def _name(bus: AtspiBus, node: Node) -> str:
    return str(_ask(bus, Call.prop(node, ACCESSIBLE, "Name"))[0][1])


def texts(title_part: str, role: str) -> list[str]:
    """The texts of the `role` elements of every frame whose name contains `title_part`."""
    bus = AtspiBus(accessibility_bus_address())
    try:
        frames = [
            top
            for app in _children(bus, Node(REGISTRY, ROOT_PATH))
            for top in _children(bus, app)
            if title_part.lower()
            in str(_ask(bus, Call.prop(top, ACCESSIBLE, "Name"))[0][1]).lower()
        ]
        found: list[str] = []
        todo, seen = list(frames), 0
        while todo and seen < MAX_NODES:
            node = todo.pop(0)
            seen += 1
            try:
                if role_name_of(_ask(bus, Call(node, ACCESSIBLE, "GetRole"))[0]) == role:
                    found.append(_text_of(bus, node))
            except Exception:  # noqa: BLE001, S112 - a node that vanished mid-walk is skipped
                continue
            todo.extend(_children(bus, node))
        return found
    finally:
        bus.close()


def main(argv: Sequence[str] | None = None) -> int:
    title_part, role = (sys.argv[1:] if argv is None else list(argv))[:2]
    sys.stdout.write(json.dumps(texts(title_part, role)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
