"""Request bytes and estimated input tokens per turn for runs of 1 to 200 turns.

The screenshot is a synthetic 1920x1080 desktop, downscaled to 1280 wide and encoded
as JPEG q80, as the observer does. Each earlier turn is a realistic mix of clicks,
typing and failures. Prints one row per run length; the history part must level off.

    .venv/bin/python benchmarks/prompt_size.py
"""

from __future__ import annotations

import io
import json
import math
import random
import sys
from datetime import UTC, datetime
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS  # noqa: E402
from desktop_agent.core.models import (  # noqa: E402
    Element,
    Observation,
    StepKind,
    StepStatus,
    StepView,
)
from desktop_agent.core.ports import DecideRequest  # noqa: E402
from desktop_agent.core.tools import ToolSpec  # noqa: E402
from desktop_agent.planner.client import chat_body  # noqa: E402
from desktop_agent.planner.profiles import ModelSpace  # noqa: E402
from desktop_agent.planner.prompt import build_messages, decision_schema, history_text  # noqa: E402

TURNS = (1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def desktop_screenshot() -> tuple[bytes, int, int]:
    """A busy 1920x1080 desktop (windows, text, a photo-like area) as a 1280-wide JPEG."""
    rng = random.Random(7)
    image = Image.new("RGB", (1920, 1080), (32, 64, 110))
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        left, top = rng.randrange(0, 1400), rng.randrange(0, 700)
        width, height = rng.randrange(400, 900), rng.randrange(250, 600)
        draw.rectangle((left, top, left + width, top + height), fill=(240, 240, 240))
        draw.rectangle((left, top, left + width, top + 28), fill=(60, 60, 70))
        for row in range(top + 40, top + height - 16, 18):
            words = " ".join(
                "".join(
                    rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(2, 9))
                )
                for _ in range(rng.randrange(3, 12))
            )
            draw.text((left + 10, row), words, fill=(20, 20, 20))
    photo = Image.effect_noise((480, 320), 60).convert("RGB")
    image.paste(photo, (1300, 650))
    scaled = image.resize((1280, 720), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    scaled.save(out, format="JPEG", quality=80)
    return out.getvalue(), 1280, 720


def inventory() -> tuple[Element, ...]:
    roles = ["button", "edit", "menu item", "label", "list item", "tab"]
    return tuple(
        Element(
            i, roles[i % len(roles)], f"Element {i} name", (10 * i % 1200, 15 * i % 700, 80, 24)
        )
        for i in range(1, 41)
    )


def history(turns: int) -> list[StepView]:
    """The stored steps of `turns` finished turns, plus the observe row of the current one."""
    rng = random.Random(turns)
    rows: list[StepView] = []

    def add(index: int, kind: StepKind, status: StepStatus, **fields: object) -> None:
        rows.append(
            StepView(
                run_id="bench",
                seq=len(rows) + 1,
                index=index,
                kind=kind,
                status=status,
                started_at=T0,
                **fields,  # type: ignore[arg-type]
            )
        )

    for index in range(1, turns + 1):
        add(index, StepKind.OBSERVE, StepStatus.OK, tool="screen_snapshot")
        if index == turns:
            break
        roll = rng.random()
        if roll < 0.08:
            add(index, StepKind.DECIDE, StepStatus.FAILED, error="the answer is not JSON: 'I'")
            continue
        if roll < 0.5:
            tool, args = "click", {"x": rng.randrange(1280), "y": rng.randrange(720)}
            summary = f"clicked at {args['x']},{args['y']}"
        elif roll < 0.8:
            tool, args = "type_text", {"text": "some text typed into the editor " * 3}
            summary = f"typed {len(str(args['text']))} characters"
        else:
            tool, args = "hotkey", {"keys": ["ctrl", "s"]}
            summary = "pressed ctrl+s"
        add(index, StepKind.DECIDE, StepStatus.OK, tool=tool, args=args, reason="because")
        ok = rng.random() > 0.15
        add(
            index,
            StepKind.ACTION,
            StepStatus.OK if ok else StepStatus.FAILED,
            tool=tool,
            summary=summary if ok else "",
            error=None if ok else "the window did not respond",
        )
    return rows


def image_tokens(width: int, height: int) -> int:
    """Qwen2.5-VL: one token per 28x28 patch (the default model)."""
    return math.ceil(width / 28) * math.ceil(height / 28)


def main() -> None:
    image, width, height = desktop_screenshot()
    observation = Observation(image, "image/jpeg", width, height, elements=inventory())
    tools = tuple(spec for spec in BUILTIN_TOOLS if spec.offered)
    print(f"screenshot: 1920x1080 → {width}x{height} JPEG q80, {len(image) / 1024:.0f} KiB")
    print(f"image tokens (Qwen2.5-VL, 28 px patches): {image_tokens(width, height)}")
    print()
    header = (
        f"{'turn':>5} {'request bytes':>14} {'text bytes':>11} {'history bytes':>14} "
        f"{'est. text tokens':>17} {'est. input tokens':>18}"
    )
    print(header)
    print("-" * len(header))
    for turns in TURNS:
        steps = history(turns)
        request = DecideRequest(
            goal="Open the text editor, write 'hello world' and save it as ~/notes.txt",
            run_id="bench",
            turn=turns,
            steps=steps,
            observation=observation,
            tools=tools,
        )
        messages = build_messages(request)
        body = chat_body("qwen2.5vl", messages, decision_schema(tools), "json_schema")
        request_bytes = len(json.dumps(body).encode())
        text = messages[0]["content"] + messages[1]["content"][0]["text"]
        text_bytes = len(text.encode())
        history_bytes = len(history_text(steps, turns).encode())
        text_tokens = math.ceil(text_bytes / 4)
        total_tokens = text_tokens + image_tokens(width, height)
        print(
            f"{turns:>5} {request_bytes:>14,} {text_bytes:>11,} {history_bytes:>14,} "
            f"{text_tokens:>17,} {total_tokens:>18,}"
        )
    print()
    print("text tokens are estimated at 4 bytes each; the image part is the same every turn.")
    print()
    per_backend(observation, tools)
    print()
    own_windows_cost(observation, tools)


def _text_bytes(value: object) -> int:
    """Bytes of a request body without its images (data URLs): what the text tokens cost."""
    text = json.dumps(value)
    while "data:image/" in text:
        start = text.index("data:image/")
        end = text.index('"', start)
        text = text[:start] + text[end:]
    return len(text.encode())


def per_backend(observation: Observation, tools: tuple[ToolSpec, ...]) -> None:
    """Issue 29: the text each backend sends per turn (turn 1 and turn 20), images aside."""
    from desktop_agent.planner.backends import chat_format
    from desktop_agent.planner.backends.openai_computer import ComputerPlanner

    goal = "Open the text editor, write 'hello world' and save it as ~/notes.txt"
    size = (observation.width, observation.height)
    space = ModelSpace("1280x720 pixels", identity=True, screenshot=size, extent=size)
    columns = ("turn 1 text bytes", "turn 20 text bytes", "est. tokens 20")
    print(f"{'backend':<32} {columns[0]:>18} {columns[1]:>19} {columns[2]:>15}")
    for name in ("chat_json", "ui_tars", "qwen3_vl", "gui_owl", "ui_venus", "mai_ui"):
        sizes = []
        for turn in (1, 20):
            request = DecideRequest(goal, "bench", turn, history(turn), observation, tools)
            url = "data:image/jpeg;base64,AAAA"
            messages = chat_format(name).messages(request, url, space)
            sizes.append(_text_bytes(chat_body("m", messages, decision_schema(tools), "text")))
        print(f"{name:<32} {sizes[0]:>18,} {sizes[1]:>19,} {math.ceil(sizes[1] / 4):>15,}")
    for store in (True, False):
        planner = ComputerPlanner(base_url="http://127.0.0.1:9/v1", model="gpt-5.4", api_key=None,
                                  profile="openai-computer", store=store)  # fmt: skip
        sizes = []
        for turn in range(1, 21):
            request = DecideRequest(goal, "bench", turn, (), observation, tools)
            new = planner._turn_input(request, "data:image/jpeg;base64,AAAA")
            body = planner.request_body(new, observation.width, observation.height)
            if turn in (1, 20):
                sizes.append(_text_bytes(body))
            # what a turn leaves behind: the model's call, answered next turn
            planner._previous_id = f"resp_{turn}"
            call = {
                "type": "computer_call",
                "call_id": f"call_{turn}",
                "actions": [{"type": "wait"}],
            }
            planner._items = [*planner._items, *new, call] if not store else []
            planner._call = _computer_call(f"call_{turn}", turn)
        label = f"openai_computer (store {'on' if store else 'off'})"
        print(f"{label:<32} {sizes[0]:>18,} {sizes[1]:>19,} {math.ceil(sizes[1] / 4):>15,}")
    print("openai_computer sends one screenshot per turn with store on; with store off every")
    print("earlier screenshot is sent again (20 at turn 20): its image tokens grow with the run.")
    anthropic_sizes(goal, observation, tools)


def anthropic_sizes(goal: str, observation: Observation, tools: tuple[ToolSpec, ...]) -> None:
    """anthropic_computer: the whole conversation each turn (the API keeps none), one
    tool_use a turn answered by its tool_result; the last 3 screenshots kept."""
    from desktop_agent.planner.backends.anthropic_computer import (
        AnthropicPlanner,
        _image,
        _kept_images,
        _Use,
    )

    planner = AnthropicPlanner(base_url="http://127.0.0.1:9", model="claude-sonnet-4-6",
                               api_key=None, profile="anthropic-computer")  # fmt: skip
    size = (observation.width, observation.height)
    image = _image("data:image/jpeg;base64,AAAA")
    sizes = []
    for turn in range(1, 21):
        steps = history(turn)
        request = DecideRequest(goal, "bench", turn, steps, observation, tools)
        content = planner._turn_content(request, image, size)
        messages = _kept_images([*planner._messages, {"role": "user", "content": content}])
        if turn in (1, 20):
            sizes.append(_text_bytes(planner.request_body(messages, size)))
        use = {"type": "tool_use", "id": f"toolu_{turn}", "name": "computer",
               "input": {"action": "left_click", "coordinate": [200, 300]}}  # fmt: skip
        planner._messages = [*messages, {"role": "assistant", "content": [use]}]
        planner._turn, planner._uses = turn, [_Use(f"toolu_{turn}", range(1))]
    label = "anthropic_computer"
    print(f"{label:<32} {sizes[0]:>18,} {sizes[1]:>19,} {math.ceil(sizes[1] / 4):>15,}")
    print("anthropic_computer sends the whole conversation each turn, its 3 latest screenshots;")
    print("the system prompt and the tool are cached (cache_control).")


def own_windows_cost(observation: Observation, tools: tuple[ToolSpec, ...]) -> None:
    """What naming the agent's own windows adds to a turn's text, per backend: the acting
    panel and the main window in the screenshot (X11), against none (Windows keeps the
    panel out of captures; Wayland tells no window places)."""
    from desktop_agent.planner.backends import chat_format
    from desktop_agent.planner.backends.anthropic_computer import AnthropicPlanner, _image
    from desktop_agent.planner.backends.openai_computer import ComputerPlanner

    goal = "Open the text editor, write 'hello world' and save it as ~/notes.txt"
    size = (observation.width, observation.height)
    space = ModelSpace("1280x720 pixels", identity=True, screenshot=size, extent=size)
    panel = Element(0, "window", "Desktop Agent — acting", (960, 0, 320, 80))
    main_window = Element(1, "window", "Desktop Agent", (0, 360, 640, 360))
    url = "data:image/jpeg;base64,AAAA"

    def turn_text(name: str, shown: Observation) -> int:
        request = DecideRequest(goal, "bench", 20, history(20), shown, tools)
        if name == "openai_computer":
            planner = ComputerPlanner(base_url="http://127.0.0.1:9/v1", model="gpt-5.4",
                                      api_key=None, profile="openai-computer")  # fmt: skip
            return _text_bytes(planner._turn_input(request, url))
        if name == "anthropic_computer":
            claude = AnthropicPlanner(base_url="http://127.0.0.1:9", model="claude-sonnet-4-6",
                                      api_key=None, profile="anthropic-computer")  # fmt: skip
            return _text_bytes(claude._turn_content(request, _image(url), size))
        messages = chat_format(name).messages(request, url, space)
        return _text_bytes(chat_body("m", messages, decision_schema(tools), "text"))

    print(f"{'own windows named (turn 20)':<32} {'none':>10} {'panel + main':>13} {'added':>7}")
    shown = observation.with_(own_windows=(panel, main_window))
    for name in ("chat_json", "ui_tars", "qwen3_vl", "gui_owl", "ui_venus", "mai_ui",
                 "openai_computer", "anthropic_computer"):  # fmt: skip
        without, with_own = turn_text(name, observation), turn_text(name, shown)
        print(f"{name:<32} {without:>10,} {with_own:>13,} {with_own - without:>+7,}")
    print("the native computer tools: this turn's new message only (the conversation keeps the")
    print("earlier turns' notes).")


def _computer_call(call_id: str, turn: int) -> object:
    from desktop_agent.planner.backends.openai_computer import _Call

    return _Call((call_id,), turn, 1, ())


if __name__ == "__main__":
    main()
