"""Text read from a screen region's pixels by tesseract, where accessibility has none (issue 31).

A web view with no accessible text or a notification drawn by its daemon (dunst) is only
pixels to the element inventory, while the model reads it off the screenshot. The observer
reads such regions here so that the injection guard sees what the model sees. A region whose
pixels did not change is not read again (the cache), so an unchanged screen costs a hash. A
read that fails or passes its timeout raises OcrFailed: what the region says is then not known,
which is not the same as a region that holds no text (the guard asks on such a look).
Without the program nothing is read: `doctor` says so (`find_ocr_program`) and the observer
logs it once (`ocr_used_here`: only where the inventory lists pixel-only regions).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import shutil
import subprocess
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: the OCR program (Debian: tesseract-ocr tesseract-ocr-eng; scripts/bootstrap installs it)
OCR_PROGRAM = "tesseract"
#: one read is ended past this: what the region says is then not known
READ_TIMEOUT_S = 4.0
#: regions' texts remembered by their pixels
CACHE_SIZE = 64
#: `doctor` gives `tesseract --version` this long (it answers in about 10 ms)
VERSION_TIMEOUT_S = 2.0


class OcrFailed(RuntimeError):
    """A region's text could not be read: tesseract passed its timeout, could not be started
    or failed. Its message says which in a few fixed words (it reaches the person asked)."""


class PixelReader:
    """Reads the text of images (screen regions) with tesseract, one read at a time.

    `program` is the tesseract to run (found on PATH by default; None: nothing is read);
    `run` replaces subprocess.run (tests). `reads` counts the images actually read.
    """

    def __init__(
        self,
        program: str | None = OCR_PROGRAM,
        *,
        timeout_s: float = READ_TIMEOUT_S,
        run: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run,
    ) -> None:
        self.program = shutil.which(program) if program else None
        self.timeout_s = timeout_s
        self._run = run
        self._cache: OrderedDict[bytes, str] = OrderedDict()
        self.reads = 0

    @property
    def available(self) -> bool:
        return self.program is not None

    def read(self, image: Any) -> str:
        """The text tesseract reads in `image` (a Pillow image); "" when the image holds none
        (nothing but background and lines) or there is no program to read it (`available`
        False: a configuration, not a failed read). A read that fails or passes the timeout
        raises OcrFailed (logged, not remembered: the next read of the image tries again)."""
        known = self.known(image)
        return known if known is not None else self.ocr(image)

    def known(self, image: Any) -> str | None:
        """`image`'s text where no OCR is needed for it — remembered by its pixels, or ""
        for a blank image or no program — else None (`ocr` reads it)."""
        if self.program is None:
            return ""
        key = _key(image)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if looks_blank(image):
            # a piece of an empty page or a frame: no text to read, and a read costs 0.3-1 s
            self._remember(key, "")
            return ""
        return None

    def ocr(self, image: Any) -> str:
        """The text tesseract reads in `image`, remembered by its pixels; OcrFailed as `read`
        says. Only with a program (`available`)."""
        assert self.program is not None
        key = _key(image)
        data = io.BytesIO()
        image.save(data, "PNG", compress_level=1)
        try:
            done = self._run(
                [self.program, "stdin", "stdout", "--psm", "3"],
                input=data.getvalue(),
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
                # one thread: a read must not take both cores from the run it guards
                env={**os.environ, "OMP_THREAD_LIMIT": "1"},
            )
        except subprocess.TimeoutExpired:
            log.warning("OCR of a %dx%d region took over %g s", *image.size, self.timeout_s)
            raise OcrFailed("OCR timed out") from None
        except OSError as error:
            log.warning("OCR could not run: %s", error)
            raise OcrFailed("OCR could not run") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            log.warning("OCR failed: %s", said[-1] if said else f"exit {done.returncode}")
            raise OcrFailed("OCR failed")
        text = done.stdout.decode("utf-8", "replace")
        self.reads += 1
        self._remember(key, text)
        return text

    def _remember(self, key: bytes, text: str) -> None:
        self._cache[key] = text
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)


#: a pixel differs from the background (the commonest value of each of its colours) by more
#: than this in any colour: ink. A grab is lossless, so any pixel off the background was drawn;
#: text faint to a person (2 grey levels) or as bright as its background in grey (red on grey)
#: is still read by tesseract, and by the model
INK_TOLERANCE = 0
#: a row (column) at least this inked is part of a line (a frame, a rule, a border) ...
LINE_SHARE = 0.9
#: ... when it is one of at most this many such rows (columns) side by side: a thicker band
#: (a banner, a title bar) may hold text drawn in it, and is kept as ink
LINE_WIDTH = 3
#: fewer ink pixels than this outside the lines: no word is drawn there
INK_LEFT = 12


def looks_blank(image: Any) -> bool:
    """Whether `image` (a Pillow image) holds nothing but its background and thin straight
    lines (the empty part of a page, a window's frame): no text for OCR to read. Judged on
    pixels, not on how many colours: text drawn without anti-aliasing (two colours) is ink
    like any; and on each colour, not on grey: text of another hue as bright as its background
    is ink too."""
    from PIL import Image, ImageChops, ImageDraw

    ink = None
    for band in image.convert("RGB").split():
        histogram = band.histogram()
        background = max(range(256), key=histogram.__getitem__)
        low, high = background - INK_TOLERANCE, background + INK_TOLERANCE
        off = band.point([0 if low <= value <= high else 255 for value in range(256)])
        ink = off if ink is None else ImageChops.lighter(ink, off)
    assert ink is not None
    width, height = ink.size
    draw = ImageDraw.Draw(ink)
    rows = ink.resize((1, height), Image.Resampling.BOX).tobytes()
    for start, end in _thin_runs(rows, LINE_SHARE * 255):
        draw.rectangle((0, start, width - 1, end - 1), fill=0)
    columns = ink.resize((width, 1), Image.Resampling.BOX).tobytes()
    for start, end in _thin_runs(columns, LINE_SHARE * 255):
        draw.rectangle((start, 0, end - 1, height - 1), fill=0)
    left: int = ink.histogram()[255]
    return left < INK_LEFT


def _thin_runs(shares: bytes, full: float) -> list[tuple[int, int]]:
    """The runs [start, end) of at most LINE_WIDTH consecutive values of `shares` at or over
    `full`."""
    runs: list[tuple[int, int]] = []
    start = None
    for index, share in enumerate([*shares, 0]):
        if share >= full and start is None:
            start = index
        elif share < full and start is not None:
            if index - start <= LINE_WIDTH:
                runs.append((start, index))
            start = None
    return runs


@dataclass(frozen=True, slots=True)
class OcrProgram:
    """The OCR program as `doctor` finds it. `path` None: not on PATH; `version` is the first
    line of its `--version` ("tesseract 5.3.0"), "" when it gave none, and then `error`
    says why in a few words (its OS error, its exit code, "timed out after 2 s")."""

    path: str | None
    version: str = ""
    error: str = ""


def find_ocr_program(
    program: str = OCR_PROGRAM,
    *,
    timeout_s: float = VERSION_TIMEOUT_S,
    run: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run,
) -> OcrProgram:
    """Where `program` is on PATH (as PixelReader finds it) and its version, asked with
    `--version` within `timeout_s`. Tesseract 4 and 5 print the version on stdout, 3.x on
    stderr (pytesseract reads both for that reason): the first line of stdout, else of
    stderr."""
    path = shutil.which(program)
    if path is None:
        return OcrProgram(None)
    try:
        done = run(
            [path, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return OcrProgram(path, error=f"timed out after {timeout_s:g} s")
    except OSError as error:
        return OcrProgram(path, error=error.strerror or str(error))
    said = [
        line.strip()
        for output in (done.stdout, done.stderr)
        for line in output.decode("utf-8", "replace").splitlines()
        if line.strip()
    ]
    if done.returncode != 0 or not said:
        return OcrProgram(path, error=f"exit {done.returncode}" if done.returncode else "no output")
    return OcrProgram(path, version=said[0])


def ocr_used_here() -> bool:
    """Whether the observer reads pixel-only regions on this desktop: on Linux the
    inventory lists them (an X11 session's notifications and windows with nothing readable
    on AT-SPI; a Wayland session's screen where no window of another program is on the bus,
    atspi_wayland.SCREEN); UI Automation (Windows) lists none, so there OCR reads nothing,
    installed or not."""
    return sys.platform != "win32"


def _key(image: Any) -> bytes:
    """The image's size and a digest of its pixels."""
    width, height = image.size
    digest = hashlib.blake2b(image.tobytes(), digest_size=16).digest()
    return f"{width}x{height}:".encode() + digest
