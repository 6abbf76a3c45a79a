"""One plain sentence per tool call, from its validated arguments and what it acts on.

A sentence is a `Phrase`: an English template with named fields, each field either a
`Phrase` of its own or text from outside already quoted (`said`). Rendering translates every
template through the function it is given (Qt's `QCoreApplication.translate` in the app,
the identity elsewhere) and fills the fields in afterwards, so text from the screen or the
model is never read as a template, markup or an instruction, in any language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.refs import REDACTED, ElementRef
from desktop_agent.core.statuses import StepKind
from desktop_agent.core.text import quote

#: the translation context of every template here (the .ts files' <context>)
CONTEXT = "Sentence"
#: the longest text from outside a sentence shows whole; the rest is counted
SAID_LIMIT = 60
#: text a sentence cannot be made for (a stored row from another version): the JSON, quoted
_GENERIC = "Use the tool {tool} with {args}"

Translate = Callable[[str], str]


def _same(template: str) -> str:
    return template


@dataclass(frozen=True, slots=True)
class Phrase:
    """An English template and its fields; `str()` is the English sentence."""

    template: str
    fields: tuple[tuple[str, Phrase | str], ...] = ()

    def render(self, translate: Translate = _same) -> str:
        """The sentence in the language `translate` speaks; the fields' text as it is."""
        values = {
            name: value.render(translate) if isinstance(value, Phrase) else value
            for name, value in self.fields
        }
        # format_map fills the fields once: a "{x}" inside a value is shown, never expanded
        try:
            return translate(self.template).format_map(values)
        except (KeyError, IndexError, ValueError):
            # a translation that names a field wrongly: the English rather than no sentence
            return self.template.format_map(values)

    def __str__(self) -> str:
        return self.render()

    @property
    def generic(self) -> bool:
        """No sentence could be made for the call: this one only names the tool and quotes
        its arguments (a face may rather show them its own way)."""
        return self.template == _GENERIC


def _phrase(template: str, **fields: Phrase | str) -> Phrase:
    return Phrase(template, tuple(fields.items()))


def said(text: str, limit: int = SAID_LIMIT) -> Phrase:
    """Text from outside between quotation marks, escaped by `quote` (control, bidi and
    blank-looking characters visible, newlines as \\n) and with the marks themselves escaped,
    so it cannot close our quotation and go on as our words; cut after `limit` characters
    with how many more there are."""
    shown = _escape_marks(quote(text[:limit]))
    more = len(text) - limit
    if more <= 0:
        return _phrase("“{text}”", text=shown)
    if more == 1:
        return _phrase("“{text}…” (1 more character)", text=shown)
    return _phrase("“{text}…” ({count} more characters)", text=shown, count=f"{more:,}")


def _escape_marks(text: str) -> str:
    return text.replace("“", "\\u201c").replace("”", "\\u201d")


#: the inventory's roles (desktop/inventory: AT-SPI's and UI Automation's, mapped) in words
_ROLE_NOUNS = {
    "button": "button",
    "toggle": "toggle button",
    "checkbox": "check box",
    "radio": "option button",
    "menu": "menu",
    "menuitem": "menu item",
    "edit": "text field",
    "password": "password field",
    "password text": "password field",
    "terminal": "terminal",
    "combobox": "drop-down list",
    "listitem": "list item",
    "cell": "cell",
    "treeitem": "tree item",
    "tab": "tab",
    "link": "link",
    "slider": "slider",
    "spinbutton": "number field",
    "window": "window",
}


def _noun(ref: ElementRef) -> Phrase:
    if ref.password:
        return _phrase("password field")
    noun = _ROLE_NOUNS.get(ref.role)
    if noun is not None:
        return _phrase(noun)
    # a role no table names (a new inventory's): the OS's own word, quoted as its text
    return _phrase("element of kind {role}", role=said(ref.role))


def target(ref: ElementRef | None, args: Mapping[str, Any]) -> Phrase:
    """What a call acts on: the element the gate resolved, its window, else the point."""
    if ref is None:
        element = args.get("element")
        if isinstance(element, int):
            # an id of the list the model was shown, with nothing known of it
            return _phrase("the element {id} of the list", id=str(element))
        return _point(args.get("x"), args.get("y"))
    if ref.how == "window":
        return _phrase("the window {window}", window=said(ref.window or ref.name))
    noun = _noun(ref)
    if ref.name and ref.window:
        return _phrase(
            "the {noun} {name} in {window}", noun=noun, name=said(ref.name), window=said(ref.window)
        )
    if ref.name:
        return _phrase("the {noun} {name}", noun=noun, name=said(ref.name))
    if ref.window:
        return _phrase("the {noun} of {window}", noun=noun, window=said(ref.window))
    return _phrase("the {noun}", noun=noun)


def _point(x: Any, y: Any) -> Phrase:
    if isinstance(x, int) and isinstance(y, int):
        return _phrase("the point ({x}, {y}) of the screenshot", x=str(x), y=str(y))
    return _phrase("where the pointer is")


def _aimed(sentence: Phrase, ref: ElementRef | None, args: Mapping[str, Any]) -> Phrase:
    """A call by coordinates that names its target but whose point no element was found
    under: the model's words for it, marked as the model's."""
    aim = args.get("target")
    if ref is None and isinstance(aim, str) and aim:
        return _phrase(
            "{action} (the model says it aims at {target})", action=sentence, target=said(aim)
        )
    return sentence


def _holding(sentence: Phrase, args: Mapping[str, Any]) -> Phrase:
    keys = args.get("hold")
    if isinstance(keys, list) and keys:
        return _phrase("{action} while holding {keys}", action=sentence, keys=_keys(keys))
    return sentence


def _key(name: str) -> str:
    named = {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "win": "Win", "esc": "Esc",
             "pageup": "Page Up", "pagedown": "Page Down", "backspace": "Backspace",
             "printscreen": "Print Screen", "capslock": "Caps Lock", "apps": "Menu"}  # fmt: skip
    if name in named:
        return named[name]
    if len(name) == 1:
        return name.upper()
    return name.capitalize() if name.isalpha() else name.upper()


def _keys(keys: list[Any]) -> str:
    # validated key names (core/keys.py); a stored row's odd one is shown escaped
    return "+".join(_escape_marks(quote(_key(str(key)))) for key in keys)


def _seconds(value: Any) -> Phrase:
    seconds = float(value)
    shown = f"{seconds:g}"
    if seconds == 1:
        return _phrase("{count} second", count=shown)
    return _phrase("{count} seconds", count=shown)


def _window_of(ref: ElementRef | None) -> str:
    if ref is None:
        return ""
    return ref.window or (ref.name if ref.how == "window" else "")


# ── one function per tool ────────────────────────────────────────────────────

_CLICK_VERBS = {
    ("left", 1): "Click {target}",
    ("left", 2): "Double-click {target}",
    ("left", 3): "Triple-click {target}",
    ("right", 1): "Right-click {target}",
    ("right", 2): "Double-click with the right button on {target}",
    ("right", 3): "Triple-click with the right button on {target}",
    ("middle", 1): "Middle-click {target}",
    ("middle", 2): "Double-click with the middle button on {target}",
    ("middle", 3): "Triple-click with the middle button on {target}",
}


def _click(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    verb = _CLICK_VERBS[(args.get("button", "left"), int(args.get("clicks", 1)))]
    return _holding(_aimed(_phrase(verb, target=target(ref, args)), ref, args), args)


def _move_mouse(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    sentence = _phrase("Move the pointer to {target}", target=target(ref, args))
    return _holding(_aimed(sentence, ref, args), args)


def _drag(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    end = _point(int(args["to_x"]), int(args["to_y"]))
    sentence = _phrase("Drag from {start} to {end}", start=target(ref, args), end=end)
    via = args.get("via")
    if isinstance(via, list) and via:
        template = "{action}, passing 1 point on the way"
        if len(via) != 1:
            template = "{action}, passing {count} points on the way"
        sentence = _phrase(template, action=sentence, count=str(len(via)))
    return _holding(_aimed(sentence, ref, args), args)


def _scroll(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    amount = int(args["amount"])
    notches = abs(amount)
    if amount > 0:
        template = "Scroll up 1 notch" if notches == 1 else "Scroll up {count} notches"
    elif amount < 0:
        template = "Scroll down 1 notch" if notches == 1 else "Scroll down {count} notches"
    else:
        template = "Scroll by 0 notches"
    sentence = _phrase(template, count=str(notches))
    if ref is not None or isinstance(args.get("x"), int):
        sentence = _phrase("{action} over {target}", action=sentence, target=target(ref, args))
    else:
        sentence = _phrase("{action} where the pointer is", action=sentence)
    return _holding(sentence, args)


def _type_text(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    text = str(args["text"])
    if text == REDACTED:
        what: Phrase = _phrase("text kept hidden (•••)")
    else:
        what = said(text)
    if ref is None:
        sentence = _phrase("Type {text} where the keyboard focus is", text=what)
    else:
        sentence = _phrase("Type {text} into {target}", text=what, target=target(ref, args))
    if args.get("enter"):
        sentence = _phrase("{action}, then press Enter", action=sentence)
    return sentence


def _in_window(template: str, ref: ElementRef | None, **fields: Phrase | str) -> Phrase:
    window = _window_of(ref)
    if window:
        return _phrase(template + " in {window}", window=said(window), **fields)
    return _phrase(template, **fields)


def _hotkey(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _in_window("Press {keys}", ref, keys=_keys(list(args["keys"])))


def _hold_key(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _in_window(
        "Hold {keys} down for {seconds}",
        ref,
        keys=_keys(list(args["keys"])),
        seconds=_seconds(args["seconds"]),
    )


def _mouse_down(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Press and hold the left mouse button on {target}", target=target(ref, args))


def _mouse_up(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Let go of the left mouse button on {target}", target=target(ref, args))


def _launch_app(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Start the program {command}", command=said(str(args["command"])))


def _wait(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Wait {seconds}", seconds=_seconds(args["seconds"]))


def _focus_window(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    title = args.get("title")
    if isinstance(title, str):
        return _phrase("Bring the window {title} to the front", title=said(title))
    return _phrase("Bring {target} to the front", target=target(ref, args))


def _invoke(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Press {target}", target=target(ref, args))


def _set_value(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    value = str(args["value"])
    if not value:
        return _phrase("Empty {target}", target=target(ref, args))
    shown: Phrase = _phrase("text kept hidden (•••)") if value == REDACTED else said(value)
    return _phrase("Set {target} to {value}", target=target(ref, args), value=shown)


def _screen_snapshot(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Take a screenshot")


def _cursor_position(args: Mapping[str, Any], ref: ElementRef | None) -> Phrase:
    return _phrase("Find out where the mouse pointer is")


_Sentence = Callable[[Mapping[str, Any], ElementRef | None], Phrase]

#: every built-in tool's sentence (core/builtin_tools.py; a test fails when one is missing)
SENTENCES: Mapping[str, _Sentence] = {
    "screen_snapshot": _screen_snapshot,
    "click": _click,
    "move_mouse": _move_mouse,
    "drag": _drag,
    "scroll": _scroll,
    "type_text": _type_text,
    "hotkey": _hotkey,
    "hold_key": _hold_key,
    "mouse_down": _mouse_down,
    "mouse_up": _mouse_up,
    "cursor_position": _cursor_position,
    "launch_app": _launch_app,
    "wait": _wait,
    "focus_window": _focus_window,
    "invoke": _invoke,
    "set_value": _set_value,
}


_ARGS = {spec.name: spec.args_model for spec in BUILTIN_TOOLS}


def sentence(tool: str, args: Mapping[str, Any], element: ElementRef | None = None) -> Phrase:
    """The call `tool(args)` in one sentence; `element`: what the gate resolved it acts on
    (the step's `element`). Arguments that do not fit the tool (a stored row of another
    version, a skipped row stored without them) give the generic sentence with the arguments
    as JSON, never an error and never a guess ("where the pointer is" for no point at all)."""
    import json

    make, model = SENTENCES.get(tool), _ARGS.get(tool)
    if make is not None and model is not None:
        try:
            # the defaults filled in as they run (a click is a left single click)
            return make(model.model_validate(dict(args)).model_dump(), element)
        except (KeyError, TypeError, ValueError, ValidationError):
            pass
    shown = json.dumps(dict(args), ensure_ascii=False, sort_keys=True, default=str)
    return _phrase(_GENERIC, tool=said(tool), args=said(shown, limit=200))


class ActionRow(Protocol):
    """What `of_step` reads of a stored step (core/models.py `StepView`, which this module
    does not import: models.py's approvals word themselves here)."""

    @property
    def kind(self) -> StepKind: ...
    @property
    def tool(self) -> str | None: ...
    @property
    def args(self) -> dict[str, Any]: ...
    @property
    def element(self) -> ElementRef | None: ...


def of_step(step: ActionRow) -> Phrase | None:
    """An action row's sentence (its stored arguments and element); None for the rows of
    other kinds (observe, decide, ground), which are no call."""
    if step.kind is not StepKind.ACTION or not step.tool:
        return None
    return sentence(step.tool, step.args, step.element)
