"""Where a window is on a screenshot, found from the outlines of its parts (Wayland hides it).

A Wayland desktop tells no program where a window is; AT-SPI gives the boxes of a window's
parts relative to the window itself. Most of those boxes have a visible edge on at least one
side (a menu bar's lines, a text area's border, the window's own border against what is
behind it), so the window's place is the offset at which the most of those edges fall on
edges of the screenshot. The search is Pillow's only: edge maps (a grey step of more than
EDGE_STEP between neighbouring pixels, widened by a pixel so a one-pixel rounding still
meets it), each outline side's mean along its length by a one-dimensional box blur, and
the sums over all offsets at once; first on a 1/COARSE image, then around the best offset
at full size. An offset that is not clearly better than every other place (two windows
alike side by side) or that meets too few edges is no answer: boxes are not placed by a
guess.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from dataclasses import replace

from PIL import Image, ImageChops, ImageFilter, ImageMath

from desktop_agent.core.models import Element, ScreenMapping
from desktop_agent.desktop.inventory.base import RawElement, RelativeTo, clean_name

#: a grey step between neighbouring pixels above this is an edge
EDGE_STEP = 12
#: the first search runs on the image reduced by this factor
COARSE = 4
#: around the coarse answer the full-size search looks this far (px) each way
REFINE = 2 * COARSE
#: the best place must meet at least this share of the outline sides' edge...
MIN_SCORE = 0.35
#: ...and the best elsewhere (farther than half the window's size, at least AWAY coarse px)
#: must stay below this share of it
MAX_RIVAL = 0.9
AWAY = 4
#: the outline sides used, longest first (the long ones tell a place apart best)
MAX_SIDES = 48

Rect = tuple[int, int, int, int]
#: ("h" | "v", x, y, length): a row (of horizontal edges) or a column (of vertical ones)
Side = tuple[str, int, int, int]


def find_window(image: Image.Image, outlines: Sequence[Rect]) -> tuple[int, int] | None:
    """The offset (image px) at which the window whose parts have `outlines` (boxes in the
    window's own px, scaled to the image's) lies on `image`; None when it is not found
    clearly enough."""
    sides = _sides(outlines)
    if not sides:
        return None
    grey = image.convert("L")
    small = grey.reduce(COARSE) if min(grey.size) >= 8 * COARSE else grey
    factor = grey.size[0] / small.size[0]
    coarse_sides = _sides(
        [tuple(round(value / factor) for value in rect) for rect in outlines]  # type: ignore[misc]
    )
    x0, y0, x1, y1 = _extent(outlines)
    width, height = small.size
    # every place where at least the middle of the window is on the image
    left, top = -round((x0 + x1) / 2 / factor), -round((y0 + y1) / 2 / factor)
    span = (left, top, left + width, top + height)
    scores = _scores(_edges(small), coarse_sides, span)
    best, _ = _peak(scores)
    if best is None:
        return None
    bx, by = best
    # a rival is another place for the window, not the same one slid along its own edges
    reach = (max(AWAY, round((x1 - x0) / 2 / factor)), max(AWAY, round((y1 - y0) / 2 / factor)))
    rival = _rival(scores, best, reach)
    guess = (round((bx + span[0]) * factor), round((by + span[1]) * factor))
    # the full-size search reads only the window's neighbourhood (its edges cost the most)
    margin = REFINE + 2
    crop = (guess[0] + x0 - margin, guess[1] + y0 - margin)
    region = grey.crop((*crop, guess[0] + x1 + margin, guess[1] + y1 + margin))
    fine_span = (
        guess[0] - REFINE - crop[0],
        guess[1] - REFINE - crop[1],
        guess[0] + REFINE - crop[0],
        guess[1] + REFINE - crop[1],
    )
    fine = _scores(_edges(region), sides, fine_span)
    found, value = _peak(fine)
    if found is None:
        return None
    # the score of a place is the mean edge (0-255) along every side, summed over the sides
    if value < MIN_SCORE * 255 * len(sides):
        return None
    peak = scores.getextrema()[1]
    if isinstance(peak, (int, float)) and peak > 0 and rival > MAX_RIVAL * peak:
        return None
    return found[0] + fine_span[0] + crop[0], found[1] + fine_span[1] + crop[1]


def _extent(outlines: Sequence[Rect]) -> Rect:
    return (
        min(x for x, _, _, _ in outlines),
        min(y for _, y, _, _ in outlines),
        max(x + w for x, _, w, _ in outlines),
        max(y + h for _, y, _, h in outlines),
    )


def _sides(outlines: Sequence[Rect]) -> list[Side]:
    """The four sides of each outline as edge rows and columns (a box's top edge is the step
    between the row above it and its first row), without repeats, longest first."""
    found: set[Side] = set()
    for x, y, width, height in outlines:
        if width >= 4:
            found.add(("h", x, y - 1, width))
            found.add(("h", x, y + height - 1, width))
        if height >= 4:
            found.add(("v", x - 1, y, height))
            found.add(("v", x + width - 1, y, height))
    return sorted(found, key=lambda side: (-side[3], side))[:MAX_SIDES]


def _edges(grey: Image.Image) -> tuple[Image.Image, Image.Image]:
    """(horizontal edges, vertical edges): 255 where a pixel and the one below (right of)
    it differ by more than EDGE_STEP, widened by one pixel across the edge (a rank filter
    costs ten times as much)."""
    width, height = grey.size

    def step(value: int) -> int:
        return 255 if value > EDGE_STEP else 0

    rows = ImageChops.difference(grey, grey.crop((0, 1, width, height + 1))).point(step)
    columns = ImageChops.difference(grey, grey.crop((1, 0, width + 1, height))).point(step)
    rows = ImageChops.lighter(
        ImageChops.lighter(rows, rows.crop((0, 1, width, height + 1))),
        rows.crop((0, -1, width, height - 1)),
    )
    columns = ImageChops.lighter(
        ImageChops.lighter(columns, columns.crop((1, 0, width + 1, height))),
        columns.crop((-1, 0, width - 1, height)),
    )
    return rows, columns


def _scores(edges: tuple[Image.Image, Image.Image], sides: list[Side], span: Rect) -> Image.Image:
    """An "I" image over the offsets of `span` (left, top, right, bottom; inclusive of
    left/top, exclusive of right/bottom... plus one): at each, the sum over `sides` of the
    mean edge along the side placed there."""
    rows, columns = edges
    left, top, right, bottom = span
    maps: dict[str, Image.Image] = {}
    for index, (kind, x, y, length) in enumerate(sides):
        if kind == "h":
            # the means along the row, by a box of the side's length centred on each pixel
            source, centre = rows, (x + length // 2, y)
            region = (
                centre[0] + left - length,
                centre[1] + top,
                centre[0] + right + length + 1,
                centre[1] + bottom + 1,
            )
            radius: tuple[float, float] = ((length - 1) / 2, 0)
            inner = (length, 0)
        else:
            source, centre = columns, (x, y + length // 2)
            region = (
                centre[0] + left,
                centre[1] + top - length,
                centre[0] + right + 1,
                centre[1] + bottom + length + 1,
            )
            radius = (0, (length - 1) / 2)
            inner = (0, length)
        part = source.crop(region).filter(ImageFilter.BoxBlur(radius))
        placed = part.crop(
            (inner[0], inner[1], inner[0] + right - left + 1, inner[1] + bottom - top + 1)
        )
        maps[f"s{index}"] = placed.convert("I")
    names = list(maps)
    total = ImageMath.lambda_eval(
        lambda operands: functools.reduce(operator.add, [operands[name] for name in names]),
        **maps,
    )
    assert isinstance(total, Image.Image)
    return total


def _peak(scores: Image.Image) -> tuple[tuple[int, int] | None, float]:
    """The offset (in `scores`' px) of the best score, the middle of the best ones when
    several are equal (a one-pixel-wide edge widened by a pixel meets three offsets)."""
    _, top = scores.getextrema()
    assert isinstance(top, (int, float))
    if top <= 0:
        return None, 0.0
    best = _at_least(scores, top).getbbox()
    if best is None:
        return None, 0.0
    # the first row of the best ones: several rows equal only where a side slides along
    # an edge, and the middle of them is no better than the first
    row = scores.crop((best[0], best[1], best[2], best[1] + 1))
    found = _at_least(row, top).getbbox()
    assert found is not None
    return (best[0] + (found[0] + found[2] - 1) // 2, best[1]), float(top)


def _at_least(scores: Image.Image, value: float) -> Image.Image:
    """An "L" image, not 0 where `scores` (integers) is at least `value` (the conversion to
    "L" clips what is below 1 to 0; an "I" image's point takes only linear maps)."""
    threshold = int(value) - 1
    return scores.point(lambda score: score - threshold).convert("L")


def _rival(scores: Image.Image, best: tuple[int, int], reach: tuple[int, int]) -> float:
    """The best score farther than `reach` (x, y) from `best`."""
    masked = scores.copy()
    x, y = best
    masked.paste(0, (x - reach[0], y - reach[1], x + reach[0] + 1, y + reach[1] + 1))
    value = masked.getextrema()[1]
    assert isinstance(value, (int, float))
    return float(value)


def place_relative(
    raw: Sequence[RawElement], image: Image.Image, mapping: ScreenMapping
) -> tuple[list[RawElement], dict[RelativeTo, tuple[int, int] | None]]:
    """`raw` with the boxes of each window they are `relative` to moved to the window's
    place on `image` (physical screen px, as every other box); the elements of a window not
    found keep their relative boxes and mark. Also where each window was found (physical
    px; None: not found), for the texts read after."""
    places: dict[RelativeTo, tuple[int, int] | None] = {}
    for item in raw:
        window = item.relative
        if window is None or window in places:
            continue
        outlines = [
            (
                round(x / mapping.scale_x),
                round(y / mapping.scale_y),
                round(width / mapping.scale_x),
                round(height / mapping.scale_y),
            )
            for x, y, width, height in window.outlines
        ]
        found = find_window(image, outlines) if outlines and window.findable else None
        if found is not None and not _labels_drawn(raw, window, image, mapping, found):
            found = None
        places[window] = None if found is None else mapping.to_screen(*found)
    return [moved(item, places) for item in raw], places


#: a named control's box (less a 2 px rim) whose grey levels spread less than this holds no
#: drawn label: a flat area
MIN_LABEL_SPREAD = 8.0
#: at least this share of the named controls must show a label where the window was found
MIN_LABELS_DRAWN = 0.6
#: roles whose name is not drawn inside their box (a text field's name is its label's)
UNDRAWN_NAMES = frozenset({"edit", "window"})


def _labels_drawn(
    raw: Sequence[RawElement],
    window: RelativeTo,
    image: Image.Image,
    mapping: ScreenMapping,
    found: tuple[int, int],
) -> bool:
    """Whether the window's named controls show something drawn (their labels) where it was
    found: a place where the outlines meet other lines (another window's) puts the boxes on
    flat areas. Fewer than two named controls: no evidence either way (True)."""
    from PIL import ImageStat

    grey = image.convert("L")
    width, height = grey.size
    spreads = []
    for item in raw:
        if item.relative != window or not item.name.strip() or item.role in UNDRAWN_NAMES:
            continue
        x, y, w, h = item.rect
        left = round(x / mapping.scale_x) + found[0] + 2
        top = round(y / mapping.scale_y) + found[1] + 2
        right = round((x + w) / mapping.scale_x) + found[0] - 2
        bottom = round((y + h) / mapping.scale_y) + found[1] - 2
        left, top = max(left, 0), max(top, 0)
        right, bottom = min(right, width), min(bottom, height)
        if right - left < 2 or bottom - top < 2:
            continue  # off the image: not evidence
        spreads.append(ImageStat.Stat(grey.crop((left, top, right, bottom))).stddev[0])
    if len(spreads) < 2:
        return True
    drawn = sum(1 for spread in spreads if spread >= MIN_LABEL_SPREAD)
    return drawn >= MIN_LABELS_DRAWN * len(spreads)


def moved(item: RawElement, places: Mapping[RelativeTo, tuple[int, int] | None]) -> RawElement:
    """`item` at its window's place when that is known, else as it is."""
    place = places.get(item.relative) if item.relative is not None else None
    if place is None:
        return item
    x, y, width, height = item.rect
    return replace(item, rect=(x + place[0], y + place[1], width, height), relative=None)


def relative_elements(raw: Sequence[RawElement]) -> tuple[Element, ...]:
    """The controls of a window not found on the image, as core Elements with id 0 and
    their boxes in the window's own px (never a target: no id to name them by)."""
    return tuple(
        Element(
            0,
            item.role,
            clean_name(item.name),
            item.rect,
            enabled=item.enabled,
            focused=item.focused,
            password=item.password,
        )
        for item in raw
        if not (item.own or item.contents or item.pixels)
    )
