"""What a look for model servers on this machine found: servers, their models, and what to try.

Views only (the probe itself is `planner/discovery.py`): the window, the CLI's `doctor` and
a refused run's line all say the same things from these.

What a person reads here is in English, each text marked `_t("…")` (scripts/translations.py
collects them under the context "ModelServers"); the window and the command line give
`lines` and `advice` their translation, and translate a `Way`'s title and note, with their
fields filled in after the translation (`filled`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

#: the translation context of the texts a person reads here (the .ts files' <context>)
CONTEXT = "ModelServers"

Translate = Callable[[str], str]


def _t(text: str) -> str:
    """`text`, marked for translation (the window and the command line translate it)."""
    return text


def _same(text: str) -> str:
    return text


def filled(translate: Translate, template: str, **fields: object) -> str:
    """`template` translated, its `{fields}` filled in afterwards (a `{…}` in a value stays
    text); a translation that names a field wrongly falls back to the English."""
    try:
        return translate(template).format_map(fields)
    except (KeyError, IndexError, ValueError, AttributeError):
        return template.format_map(fields)


@dataclass(frozen=True, slots=True)
class ServerPort:
    """A port to look at, and who usually listens there."""

    port: int
    names: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return " or ".join(self.names) if self.names else "OpenAI-compatible server"


#: the usual ports of local model servers (docs/planner.md says the list)
DEFAULT_PORTS: tuple[ServerPort, ...] = (
    ServerPort(11434, ("Ollama",)),
    ServerPort(1234, ("LM Studio",)),
    ServerPort(8080, ("llama.cpp server", "LocalAI")),
    ServerPort(8000, ("vLLM",)),
    ServerPort(1337, ("Jan",)),
)
DEFAULT_PORT_NUMBERS: tuple[int, ...] = tuple(entry.port for entry in DEFAULT_PORTS)


@dataclass(frozen=True, slots=True)
class FoundModel:
    """One model a server offers for chat, and what is known of its vision.

    `can_see`: True or False when the server said so (or, for True, a known vision model
    name); None when nobody can tell. `vision_source`: ollama, lmstudio, llamacpp, name or
    unknown. `profile`: the profile (planner/profiles.py) its name picks.
    """

    name: str
    can_see: bool | None
    vision_source: str
    vision_detail: str
    profile: str

    @property
    def vision_word(self) -> str:
        """sees · no vision · vision unknown"""
        if self.can_see is None:
            return _t("vision unknown")
        return _t("sees") if self.can_see else _t("no vision")


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A model server that answered on a loopback port, with its chat models (seeing first)."""

    kind: str  # ollama | lmstudio | llamacpp | vllm | openai
    label: str  # what to call it: "Ollama", "LM Studio", "llama.cpp server or LocalAI", ...
    base_url: str  # the OpenAI-compatible base URL, with /v1
    models: tuple[FoundModel, ...]

    @property
    def address(self) -> str:
        """host:port, e.g. 127.0.0.1:11434"""
        return self.base_url.split("//", 1)[-1].split("/", 1)[0]

    @property
    def seeing(self) -> tuple[FoundModel, ...]:
        return tuple(model for model in self.models if model.can_see)


@dataclass(frozen=True, slots=True)
class Discovery:
    """The servers found (in the order of the ports probed) and the ports that were probed."""

    servers: tuple[FoundServer, ...]
    ports: tuple[int, ...]
    elapsed_s: float = 0.0

    def best(self) -> tuple[FoundServer, FoundModel] | None:
        """The first model that can see, on the first server that has one."""
        for server in self.servers:
            for model in server.seeing:
                return server, model
        return None

    def lines(self, translate: Translate = _same) -> list[str]:
        """One line per server and one per model, for a terminal, in the language
        `translate` speaks."""
        if not self.servers:
            ports = ", ".join(str(port) for port in self.ports)
            template = _t("no model server answers on this machine (ports {ports})")
            return [filled(translate, template, ports=ports)]
        out = []
        for server in self.servers:
            count = (
                filled(translate, _t("{count} chat model(s)"), count=len(server.models))
                if server.models
                else translate(_t("no chat model"))
            )
            out.append(
                filled(
                    translate,
                    _t("{server} at {url}: {count}"),
                    server=server.label,
                    url=server.base_url,
                    count=count,
                )  # fmt: skip
            )
            for model in server.models:
                profile = filled(translate, _t("profile {profile}"), profile=model.profile)
                sight = translate(model.vision_word)
                out.append(f"  {model.name:<36} {sight:<15} {profile}")
        return out

    def advice(self, translate: Translate = _same) -> str:
        """What to pass to use a model found here, or how to get one: one line, in the
        language `translate` speaks."""
        best = self.best()
        if best is not None:
            return filled(translate, _t("use it with: {options}"), options=run_options(*best))
        if self.servers:
            return translate(
                _t(
                    "none of their models is known to see screenshots: load a vision model "
                    "(e.g. `ollama pull qwen2.5vl`), or pass --vision yes if yours can see"
                )
            )
        return translate(
            _t("start one, e.g. `ollama serve` then `ollama pull qwen2.5vl` (see the README)")
        )

    def summary(self) -> str:
        """One line: which servers answer here, and their models that see (a refusal's tail)."""
        if not self.servers:
            return self.lines()[0]
        found = "; ".join(
            f"{server.label} at {server.base_url} ({_seeing_words(server)})"
            for server in self.servers
        )
        return f"found {found}"


def _seeing_words(server: FoundServer) -> str:
    names = [model.name for model in server.seeing]
    if not names:
        return "no model that sees" if server.models else "no chat model"
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{shown} {'sees' if len(names) == 1 else 'see'}"


def run_options(server: FoundServer, model: FoundModel) -> str:
    """`--base-url URL --model NAME`, quoted for a POSIX shell."""
    return f"--base-url {shlex.quote(server.base_url)} --model {shlex.quote(model.name)}"


@dataclass(frozen=True, slots=True)
class Way:
    """One way to get a model server: what it is, and the commands to type (copyable). The
    title and the note are English, marked for translation: a face translates them."""

    title: str
    note: str
    commands: tuple[str, ...]


def ways_to_get_one(platform: str) -> tuple[Way, ...]:
    """Two or three ways to a model that sees, for `platform` (sys.platform's value)."""
    if platform.startswith("linux"):
        install: tuple[str, ...] = ("curl -fsSL https://ollama.com/install.sh | sh",)
        ollama = _t(
            "The first command installs Ollama and starts its server; then pull a vision "
            "model (about 6 GB; a GPU helps). Without a GPU, the 3B one (about 3 GB) is the "
            "one to try."
        )
    else:
        install = ()
        ollama = _t(
            "Install it from https://ollama.com/download (it starts its server); then pull a "
            "vision model (about 6 GB; a GPU helps). Without a GPU, the 3B one (about 3 GB) "
            "is the one to try."
        )
    set_key = "setx OPENAI_API_KEY sk-…" if platform == "win32" else "export OPENAI_API_KEY=sk-…"
    return (
        Way(
            _t("Ollama — on this computer, free"),
            ollama,
            (*install, "ollama pull qwen2.5vl", "ollama pull qwen2.5vl:3b"),
        ),
        Way(
            _t("LM Studio — on this computer, with a window"),
            _t(
                "Install it from https://lmstudio.ai, download a vision model (e.g. "
                "Qwen2.5-VL-7B), load it, and start the server (Developer tab, or:)"
            ),
            ("lms server start",),
        ),
        Way(
            _t("A hosted OpenAI-compatible service — needs an API key"),
            _t(
                "Screenshots leave this computer. Set the key, then choose the service in "
                "Settings (or pass it to desktop-agent run):"
            ),
            (
                set_key,
                "--base-url https://api.openai.com/v1 --model gpt-4.1-mini",
            ),
        ),
    )


#: the text editors tried for the first task, in order (the first one installed is named)
EDITORS: dict[str, tuple[str, ...]] = {
    "linux": (
        "gnome-text-editor",
        "gedit",
        "kate",
        "kwrite",
        "mousepad",
        "xed",
        "pluma",
        "l3afpad",
        "leafpad",
        "featherpad",
    ),
    "win32": ("notepad",),
    "darwin": ("TextEdit",),
}
FIRST_TASK_TEXT = "Hello from Desktop Agent"


def first_task_goal(platform: str, which: Callable[[str], str | None]) -> str:
    """A first task on a harmless app of this system: type a line into the text editor,
    and save nothing. `which` finds a program (shutil.which)."""
    key = "linux" if platform.startswith("linux") else platform
    editors = EDITORS.get(key, ())
    if key == "linux":
        editors = tuple(name for name in editors if which(name))
    editor = f"the text editor ({editors[0]})" if editors else "a text editor"
    return (
        f"Open {editor}, type “{FIRST_TASK_TEXT}” into a new document, "
        "and leave it open without saving."
    )
