"""The backends' registry: what a backend is (`Backend`, `ChatFormat`) and each found by name.

A backend says what a turn sends (tools, prompt, image size), what it parses (validated
Decisions, points in the model's coordinates) and what it reports (usage, safety checks).
Two kinds exist:

- a chat format (`ChatFormat`): a prompt and an answer grammar spoken over OpenAI-compatible
  chat completions; `OpenAIPlanner` (planner/client.py) carries it (transport, retries,
  limits, grounding);
- a native API: the backend builds its own Planner (`Backend.planner`).

The backend named `x` is the module `desktop_agent.planner.backends.x`, whose `BACKEND` is it:
adding a format is that module and a profile row (planner/profiles.py), nothing else. The
registry lives beside client.py, not in backends/: client.py reads a chat format here and
two backends subclass client.py's planner, so neither leans on the other's package.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from desktop_agent.core.errors import ConfigError

if TYPE_CHECKING:
    from desktop_agent.core.models import Decision
    from desktop_agent.core.ports import DecideRequest, Planner
    from desktop_agent.core.tools import ToolSpec
    from desktop_agent.planner.profiles import ModelSpace


class ChatFormat(Protocol):
    """A prompt and an answer grammar over chat completions."""

    #: True: the answer is our JSON, asked for with a response_format (stepped down when a
    #: server refuses it); False: the format's own text, no response_format
    structured: bool

    def messages(
        self, request: DecideRequest, image_url: str, space: ModelSpace
    ) -> list[dict[str, Any]]:
        """The chat messages of one turn; `space` says how the model's coordinates run
        (its words, whether they are the screenshot's own pixels, and the map into them)."""
        ...

    def parse(self, text: str, tools: Sequence[ToolSpec]) -> Decision:
        """The answer → a validated Decision in the model's coordinates; PlannerError why not."""
        ...


@dataclass(frozen=True, slots=True)
class Backend:
    """One backend: its name, what `doctor` prints of it, and how its planner is made."""

    name: str
    #: the protocol and tool version the model gets, for `doctor` and the docs
    protocol: str
    #: the chat format a chat-completions planner speaks; None for a native API
    chat: ChatFormat | None = None
    #: module:attribute of the Planner class of a native API (built with the planner's
    #: options); "" for a chat format (OpenAIPlanner)
    planner_class: str = ""
    #: the provider's own key: (keyring entry of service desktop-agent, environment
    #: variable, the provider's API where it goes) — tried before the general key
    own_key: tuple[str, str, str] | None = None
    #: module:function of `doctor`'s cheap request that checks the provider's key
    #: (async (base_url, api_key) → "" or why not); "" for none
    key_check: str = ""
    #: the tool version a model gets, when it depends on the model (`doctor` prints it)
    tool_of: Callable[[str], str] | None = None
    #: the settings of its own API its planner takes (e.g. OpenAI's `store`), by name
    native_options: tuple[str, ...] = ()

    def protocol_for(self, model: str) -> str:
        """What `doctor` prints: the protocol, and the tool version `model` gets."""
        if self.tool_of is None:
            return self.protocol
        return f"{self.protocol}; {model} gets {self.tool_of(model)}"

    async def key_problem(self, base_url: str, api_key: str | None) -> str | None:
        """Why the provider refuses `api_key` ("" when it takes it); None: not checked."""
        if not self.key_check:
            return None
        module, _, name = self.key_check.partition(":")
        problem: str = await getattr(importlib.import_module(module), name)(base_url, api_key)
        return problem

    def planner(self, native: Mapping[str, Any] | None = None, **options: Any) -> Planner:
        """The run's Planner for this backend: `options` as OpenAIPlanner takes them, and of
        `native` (every backend's own settings) those this one names."""
        where = self.planner_class or "desktop_agent.planner.client:OpenAIPlanner"
        module, _, name = where.partition(":")
        cls = getattr(importlib.import_module(module), name)
        own = {key: value for key, value in (native or {}).items() if key in self.native_options}
        planner: Planner = cls(**options, **own)
        return planner


#: the package whose modules are the backends (imported by name: the package re-exports this
#: module's names, and a backend subclasses client.py's planner, which reads this module)
BACKENDS = "desktop_agent.planner.backends"


def backend_names() -> tuple[str, ...]:
    """Every backend module of planner/backends/, sorted."""
    path = importlib.import_module(BACKENDS).__path__
    return tuple(sorted(info.name for info in pkgutil.iter_modules(path)))


def backend_named(name: str) -> Backend:
    """The backend `name`; ConfigError naming the known ones when there is none."""
    if name not in backend_names():
        raise ConfigError(f"unknown backend {name!r} (one of: {', '.join(backend_names())})")
    backend = importlib.import_module(f"{BACKENDS}.{name}").BACKEND
    if not isinstance(backend, Backend):
        raise ConfigError(f"the backend module {name!r} holds no BACKEND")
    return backend


def chat_format(name: str) -> ChatFormat:
    """The chat format of backend `name`; ConfigError when it is a native API."""
    backend = backend_named(name)
    if backend.chat is None:
        raise ConfigError(f"the backend {name!r} is not spoken over chat completions")
    return backend.chat


def make_planner(
    *,
    model: str,
    profile: str = "auto",
    native: Mapping[str, Any] | None = None,
    **options: Any,
) -> Planner:
    """The Planner for `model` under `profile` ("auto": by the model's name), made by the
    profile's backend (`native`: the backends' own settings, each takes those it names)."""
    from desktop_agent.planner.profiles import resolve_profile

    backend = backend_named(
        resolve_profile(model, profile, base_url=options.get("base_url")).backend
    )
    return backend.planner(native, model=model, profile=profile, **options)
