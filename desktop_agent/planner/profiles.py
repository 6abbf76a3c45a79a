"""Model profiles: per model family, the request parameters, coordinate space and backend.

The table is data (`PROFILES`, first match wins); `resolve_profile` picks one by the model id
or by name, and `to_screenshot` turns the model's coordinates into screenshot pixels. Sources
for every row are in docs/planner.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator

from desktop_agent.core.errors import ConfigError, PlannerError
from desktop_agent.core.models import Decision

#: pixels: of the image the model was sent; normalized: 0–`scale` on both axes;
#: resized: pixels of the image after the model's own resize rule (Qwen2.5-VL's smart_resize)
CoordinateSpace = Literal["pixels", "normalized", "resized"]
COORDINATE_SPACES: tuple[CoordinateSpace, ...] = ("pixels", "normalized", "resized")
TokenParam = Literal["max_tokens", "max_completion_tokens"]
#: how a coordinate click is refined before the gate (planner/grounding.py): not at all; the
#: model asked again on a crop around its point; a separate grounding model, then the crop
GroundingMode = Literal["off", "zoom", "grounder"]
GROUNDING_MODES: tuple[GroundingMode, ...] = ("off", "zoom", "grounder")
#: how the model answers "where is <target>?" (planner/grounding.py reads every one of them)
PointFormat = Literal["json", "ui_tars", "gta1", "holo", "mai_ui", "qwen"]
AUTO = "auto"


@dataclass(frozen=True, slots=True)
class ResizeRule:
    """Qwen2-VL's smart_resize: both sides a multiple of `factor`, area within the bounds."""

    factor: int = 28
    min_pixels: int = 56 * 56
    max_pixels: int = 16384 * 28 * 28

    def size(self, width: int, height: int) -> tuple[int, int]:
        """(width, height) of a width × height image as the model sees it."""
        factor = self.factor
        h_bar = max(factor, round(height / factor) * factor)
        w_bar = max(factor, round(width / factor) * factor)
        if h_bar * w_bar > self.max_pixels:
            beta = math.sqrt(height * width / self.max_pixels)
            h_bar = max(factor, math.floor(height / beta / factor) * factor)
            w_bar = max(factor, math.floor(width / beta / factor) * factor)
        elif h_bar * w_bar < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (height * width))
            h_bar = math.ceil(height * beta / factor) * factor
            w_bar = math.ceil(width * beta / factor) * factor
        return w_bar, h_bar


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What one model family needs from a request and how to read its answer."""

    name: str
    #: fnmatch patterns on the lower-cased model id, tried on the whole id and on its last
    #: path part ("Qwen/Qwen2.5-VL-7B-Instruct" → "qwen2.5-vl-7b-instruct")
    patterns: tuple[str, ...]
    token_param: TokenParam = "max_tokens"
    #: False: the model accepts only its default temperature (OpenAI reasoning models)
    temperature: bool = True
    reasoning_effort: str | None = None
    coordinates: CoordinateSpace = "pixels"
    #: the top of the normalized range ("normalized" only)
    scale: int = 1000
    #: the model's own resize ("resized" only)
    resize: ResizeRule | None = None
    #: the backend that speaks to it: a module of planner/backends/ (chat_json: our JSON
    #: answer, DESIGN §3; ui_tars: "Thought: … Action: click(start_box=…)"; …)
    backend: str = "chat_json"
    #: the image budget: a bigger screenshot is scaled down to this many pixels before sending
    max_image_pixels: int | None = None
    #: and so that its longer side is at most this many pixels
    max_image_side: int | None = None
    #: "auto" picks this profile only for a base URL on one of these hosts (a model's own
    #: API: `claude-*` elsewhere, e.g. behind OpenRouter, speaks chat completions)
    hosts: tuple[str, ...] = ()
    max_output_tokens: int = 1024
    #: the grounding this family gets when the settings say "auto"
    grounding: GroundingMode = "zoom"
    #: how it is asked for a point and answers (the grounding request, never the turn's)
    point_format: PointFormat = "json"
    #: the zoom crop's width as a fraction of the screenshot's (its height keeps the aspect)
    zoom_fraction: float = 0.25
    note: str = ""

    def serves(self, base_url: str | None) -> bool:
        """Whether "auto" may pick this profile for a server at `base_url` (None: unknown)."""
        if not self.hosts:
            return True
        return base_url is not None and (urlsplit(base_url).hostname or "") in self.hosts

    def matches(self, model: str) -> bool:
        name = model.strip().lower()
        tail = name.rsplit("/", 1)[-1]
        return any(fnmatchcase(name, p) or fnmatchcase(tail, p) for p in self.patterns)

    def model_size(self, width: int, height: int) -> tuple[int, int]:
        """The extent of the model's coordinates for an image of width × height pixels."""
        if self.coordinates == "normalized":
            return self.scale, self.scale
        if self.coordinates == "resized" and self.resize is not None:
            return self.resize.size(width, height)
        return width, height


_QWEN25 = ResizeRule(factor=28, min_pixels=56 * 56, max_pixels=16384 * 28 * 28)
#: Ollama's qwen2.5vl caps the area at 2 MiB pixels (vision.max_pixels default 2<<20)
_QWEN25_OLLAMA = ResizeRule(factor=28, min_pixels=56 * 56, max_pixels=2 << 20)
#: UI-TARS-1.5's parser (codes/ui_tars/action_parser.py): min 100·28², max 16384·28²
_UI_TARS_15 = ResizeRule(factor=28, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)
#: GTA1 (Qwen2.5-VL based) states the image size in its prompt: the processor's smart_resize
_GTA1 = ResizeRule(factor=28, min_pixels=3136, max_pixels=4096 * 2160)
#: UI-Venus-1.5's navigation agent (ui_venus_navi_agent.py; scripts/run_navi.sh's bounds)
_UI_VENUS = ResizeRule(factor=28, min_pixels=3136, max_pixels=12845056)

PROFILES: tuple[ModelProfile, ...] = (
    ModelProfile(
        "openai-reasoning",
        ("gpt-5*", "o1", "o1-*", "o3", "o3-*", "o4-*", "o4"),
        token_param="max_completion_tokens",
        temperature=False,
        reasoning_effort="low",
        # reasoning tokens count against the cap: 1024 leaves nothing for the answer
        max_output_tokens=4096,
        note="OpenAI reasoning models: no temperature, max_completion_tokens",
    ),
    ModelProfile("openai", ("gpt-4o*", "gpt-4.1*", "chatgpt-4o*"), note="OpenAI GPT-4o/4.1"),
    ModelProfile(
        "anthropic-computer",
        ("claude-*",),
        backend="anthropic_computer",
        grounding="off",
        # Anthropic's image size rule: the longer side at most 1568 px, about 1.15 MP in all
        max_image_pixels=1_150_000,
        max_image_side=1568,
        max_output_tokens=4096,
        hosts=("api.anthropic.com",),
        note="Anthropic's computer use on the Messages API: its own actions, image pixels",
    ),
    ModelProfile(
        "openai-computer",
        ("computer-use-preview*",),
        backend="openai_computer",
        grounding="off",
        note="OpenAI's computer tool on the Responses API: its own actions, screenshot pixels",
    ),
    ModelProfile(
        "ui-tars-1.5",
        ("*ui-tars-1.5*", "*ui-tars-1_5*", "*uitars-1.5*"),
        coordinates="resized",
        resize=_UI_TARS_15,
        backend="ui_tars",
        grounding="off",
        point_format="ui_tars",
        note="UI-TARS-1.5: action text, pixels of its smart_resize input",
    ),
    ModelProfile(
        "ui-tars",
        ("*ui-tars*", "*uitars*"),
        coordinates="normalized",
        backend="ui_tars",
        grounding="off",
        point_format="ui_tars",
        note="UI-TARS (1.0, Doubao): action text, 0–1000",
    ),
    # grounders: asked only "where is <target>?" (Settings → Grounding model); as planners
    # they would get our JSON prompt, which they were not trained for
    ModelProfile(
        "gta1",
        ("*gta1*",),
        coordinates="resized",
        resize=_GTA1,
        grounding="off",
        point_format="gta1",
        note="GTA1: (x,y) on the image size its prompt states",
    ),
    ModelProfile(
        "holo1.5",
        ("*holo1.5*", "*holo1_5*", "*holo1-5*"),
        coordinates="resized",
        resize=_QWEN25,
        grounding="off",
        point_format="holo",
        note="Holo1.5: JSON {x, y}, pixels of its smart_resize input",
    ),
    ModelProfile(
        "holo",
        ("*holo2*", "*holo3*", "*holo-2*", "*holo-3*"),
        coordinates="normalized",
        grounding="off",
        point_format="holo",
        note="Holo2/Holo3: JSON {x, y}, 0–1000",
    ),
    ModelProfile(
        "mai-ui",
        ("*mai-ui*", "*mai_ui*"),
        coordinates="normalized",
        # src/mai_naivigation_agent.py and mai_grounding_agent.py: SCALE_FACTOR = 999
        scale=999,
        backend="mai_ui",
        grounding="off",
        point_format="mai_ui",
        note="MAI-UI: its mobile_use calls as a planner, 0–999",
    ),
    # the open agent models before Qwen3-VL, on which they are built (and named after)
    ModelProfile(
        "gui-owl-1.5",
        ("*gui-owl-1.5*", "*gui-owl-1_5*", "*guiowl-1.5*", "*gui-owl1.5*"),
        coordinates="normalized",
        backend="gui_owl",
        grounding="off",
        point_format="qwen",
        note="GUI-Owl-1.5: computer_use calls (several a turn), 0–1000",
    ),
    ModelProfile(
        "ui-venus-1.5",
        ("*ui-venus-1.5*", "*ui-venus-1_5*", "*uivenus-1.5*"),
        coordinates="resized",
        resize=_UI_VENUS,
        backend="ui_venus",
        grounding="off",
        max_output_tokens=2048,
        note="UI-Venus-1.5: <action> calls, pixels of its smart_resize input",
    ),
    ModelProfile(
        "qwen3-vl",
        ("*qwen3-vl*", "*qwen3vl*", "*qwen3_vl*"),
        coordinates="normalized",
        backend="qwen3_vl",
        point_format="qwen",
        note="Qwen3-VL: 0–1000 relative coordinates, its computer_use function call",
    ),
    ModelProfile(
        "qwen2.5-vl-ollama",
        ("qwen2.5vl*",),
        coordinates="resized",
        resize=_QWEN25_OLLAMA,
        point_format="qwen",
        note="Qwen2.5-VL on Ollama: pixels of its smart_resize input (≤ 2 MiB pixels)",
    ),
    ModelProfile(
        "qwen2.5-vl",
        ("*qwen2.5-vl*", "*qwen2_5_vl*", "*qwen2.5vl*", "*qwen25vl*"),
        coordinates="resized",
        resize=_QWEN25,
        point_format="qwen",
        note="Qwen2.5-VL: pixels of its smart_resize input (factor 28)",
    ),
    ModelProfile(
        "llava",
        ("llava*", "*llava*", "bakllava*"),
        max_image_pixels=672 * 672,
        note="LLaVA 1.6: at most 672×672 pixels reach the model",
    ),
    ModelProfile(
        "gemma3",
        ("gemma3*", "*gemma-3*"),
        max_image_pixels=896 * 896,
        note="Gemma 3: images are resized to 896×896",
    ),
    ModelProfile("generic", ("*",), note="anything else: screenshot pixels, our JSON"),
)
PROFILE_NAMES: tuple[str, ...] = tuple(profile.name for profile in PROFILES)


def profile_named(name: str) -> ModelProfile:
    for profile in PROFILES:
        if profile.name == name:
            return profile
    raise ConfigError(
        f"unknown model profile {name!r} (one of: {', '.join((AUTO, *PROFILE_NAMES))})"
    )


def profile_choice(text: str) -> str:
    """`text` as a profile choice: "auto" or a profile's name (any case); ConfigError, one
    line naming the known ones, when it is neither."""
    name = text.strip().lower()
    if name != AUTO and name not in PROFILE_NAMES:
        raise ConfigError(
            f"unknown model profile {text!r} (one of: {', '.join((AUTO, *PROFILE_NAMES))})"
        )
    return name


def profile_value(text: str) -> str:
    """profile_choice for a request body's validator (pydantic reports a ValueError)."""
    try:
        return profile_choice(text)
    except ConfigError as error:
        raise ValueError(str(error)) from None


def _profile_or_none(value: str | None) -> str | None:
    return None if value is None else profile_value(value)


#: a request's model profile field (the API's, MCP's): None, "auto" or a profile's name
ProfileField = Annotated[str | None, AfterValidator(_profile_or_none)]


def resolve_profile(
    model: str, name: str = AUTO, coordinates: str = AUTO, base_url: str | None = None
) -> ModelProfile:
    """The profile `name`, or the first whose pattern matches `model` (and that serves
    `base_url`: a model's own API) when "auto".

    `coordinates` (a calibration's finding) overrides the profile's coordinate space.
    """
    profile = (
        next(p for p in PROFILES if p.matches(model) and p.serves(base_url))
        if name == AUTO
        else profile_named(name)
    )
    if coordinates == AUTO or coordinates == profile.coordinates:
        return profile
    if coordinates not in COORDINATE_SPACES:
        raise ConfigError(
            f"unknown coordinate space {coordinates!r} (one of: auto, "
            f"{', '.join(COORDINATE_SPACES)})"
        )
    resize = profile.resize or (_QWEN25 if coordinates == "resized" else None)
    return replace(profile, coordinates=coordinates, resize=resize)


def sent_size(profile: ModelProfile, width: int, height: int) -> tuple[int, int]:
    """The size of the image the model is sent for a width × height screenshot."""
    budget = profile.max_image_pixels or width * height
    side = profile.max_image_side or max(width, height)
    if width * height <= budget and max(width, height) <= side:
        return width, height
    factor = min(math.sqrt(budget / (width * height)), side / max(width, height))
    # the epsilon keeps 720·0.7 at 504, not 503.99999…
    return max(1, math.floor(width * factor + 1e-6)), max(1, math.floor(height * factor + 1e-6))


def to_screenshot(
    profile: ModelProfile, x: float, y: float, width: int, height: int
) -> tuple[int, int]:
    """A point in the model's coordinates → screenshot pixels (inside the screenshot).

    `width` × `height` is the screenshot; the image the model saw may be smaller (the budget).
    PlannerError when the point lies outside what the model was shown.
    """
    shown_w, shown_h = sent_size(profile, width, height)
    model_w, model_h = profile.model_size(shown_w, shown_h)
    if not (0 <= x <= model_w and 0 <= y <= model_h):
        space = describe_space(profile, shown_w, shown_h)
        raise PlannerError(f"the point {x:g},{y:g} is outside the image ({space})")
    sx = x * width / model_w
    sy = y * height / model_h
    return min(round(sx), width - 1), min(round(sy), height - 1)


def describe_space(profile: ModelProfile, width: int, height: int) -> str:
    """How the model's coordinates run, for the prompt and for errors."""
    model_w, model_h = profile.model_size(width, height)
    if profile.coordinates == "normalized":
        return f"x and y from 0 to {profile.scale}, 0,0 top-left, {model_w},{model_h} bottom-right"
    return f"{model_w}x{model_h} pixels, 0,0 top-left"


def is_identity(profile: ModelProfile, width: int, height: int) -> bool:
    """True when the model's coordinates are already screenshot pixels."""
    shown = sent_size(profile, width, height)
    return shown == (width, height) and profile.model_size(width, height) == (width, height)


@dataclass(frozen=True, slots=True)
class ModelSpace:
    """How the model's coordinates run over one screenshot: the words its prompt says of
    them, and the way back from screenshot pixels into them (`box`), so an area the prompt
    names lies where the model sees it."""

    #: `describe_space` of the image the model is sent
    text: str
    #: True: the model's coordinates are the screenshot's own pixels
    identity: bool
    #: the screenshot's size, and the extent of the model's coordinates over it
    screenshot: tuple[int, int]
    extent: tuple[int, int]

    def box(self, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        """A (left, top, width, height) box of screenshot pixels in the model's coordinates:
        its corners scaled as `to_screenshot` scales a point, the other way."""
        (width, height), (model_w, model_h) = self.screenshot, self.extent
        left, top, box_w, box_h = box
        x0, y0 = round(left * model_w / width), round(top * model_h / height)
        x1 = round((left + box_w) * model_w / width)
        y1 = round((top + box_h) * model_h / height)
        return x0, y0, max(1, x1 - x0), max(1, y1 - y0)


def model_space(profile: ModelProfile, width: int, height: int) -> ModelSpace:
    """The model's coordinates over a width × height screenshot (sent at `sent_size`)."""
    shown_w, shown_h = sent_size(profile, width, height)
    return ModelSpace(
        text=describe_space(profile, shown_w, shown_h),
        identity=is_identity(profile, width, height),
        screenshot=(width, height),
        extent=profile.model_size(shown_w, shown_h),
    )


#: the arguments that are points, per tool: (x name, y name)
POINT_ARGS: dict[str, tuple[tuple[str, str], ...]] = {
    "click": (("x", "y"),),
    "move_mouse": (("x", "y"),),
    "scroll": (("x", "y"),),
    "drag": (("x", "y"), ("to_x", "to_y")),
    "mouse_down": (("x", "y"),),
    "mouse_up": (("x", "y"),),
}


def decision_to_screenshot(
    decision: Decision, profile: ModelProfile, width: int, height: int
) -> Decision:
    """The decision with its points moved from the model's coordinates to screenshot pixels."""
    if decision.batch:
        # a model's batch: every action's points, as the first's
        later = tuple(decision_to_screenshot(d, profile, width, height) for d in decision.batch)
        decision = replace(decision, batch=later)
    pairs = POINT_ARGS.get(decision.tool or "", ())
    if not pairs or is_identity(profile, width, height):
        return decision
    args = dict(decision.args)
    changed = False
    for x_name, y_name in pairs:
        x, y = args.get(x_name), args.get(y_name)
        if isinstance(x, int | float) and isinstance(y, int | float):
            try:
                args[x_name], args[y_name] = to_screenshot(profile, x, y, width, height)
            except PlannerError as error:
                raise PlannerError(str(error), raw=decision.raw) from None
            changed = True
    via = args.get("via")
    if decision.tool == "drag" and isinstance(via, list) and via:
        # a drag's whole path (a native API's): each point between, mapped as the ends are
        try:
            args["via"] = [list(to_screenshot(profile, x, y, width, height)) for x, y in via]
        except (PlannerError, TypeError, ValueError) as error:
            raise PlannerError(f"the drag's path: {error}", raw=decision.raw) from None
        changed = True
    return replace(decision, args=args) if changed else decision
