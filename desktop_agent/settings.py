"""Settings: the app's options (pydantic) in a TOML file, and the API key in the OS keyring."""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from desktop_agent.core.budget import DEFAULT_PRICES, Budget
from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.call_risk import DEFAULT_SENSITIVE_TARGETS
from desktop_agent.core.errors import ConfigError
from desktop_agent.core.keys import normalize_key
from desktop_agent.core.model_servers import DEFAULT_PORT_NUMBERS
from desktop_agent.core.models import Policy, VisionSetting, parse_monitor
from desktop_agent.instances.loopback import is_loopback_address
from desktop_agent.store.data_dir import APP_NAME, HOME_ENV, ForeignDataDir, refuse_foreign
from desktop_agent.store.data_dir import make_data_dir as make_data_dir
from desktop_agent.store.data_dir import resolve_data_dir as resolve_data_dir

log = logging.getLogger(__name__)

KEYRING_SERVICE = "desktop-agent"
KEYRING_USER = "api-key"
ENV_PREFIX = "DESKTOP_AGENT_"
SETTINGS_FILE = "settings.toml"
_TOOL_NAMES = tuple(spec.name for spec in BUILTIN_TOOLS)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True, slots=True)
class Preset:
    """A model server the settings dialog offers: its label, base URL and a note."""

    label: str
    base_url: str
    note: str
    model: str = ""


PRESETS: dict[str, Preset] = {
    "ollama": Preset(
        "Ollama",
        "http://localhost:11434/v1",
        "Local, the default. `ollama pull qwen2.5vl` first; no API key.",
        "qwen2.5vl",
    ),
    "lmstudio": Preset(
        "LM Studio",
        "http://localhost:1234/v1",
        "Local. Start the server in LM Studio's Developer tab and load a vision model (type vlm).",
    ),
    "vllm": Preset(
        "vLLM",
        "http://localhost:8000/v1",
        "Local or on your own server: `vllm serve Qwen/Qwen2.5-VL-7B-Instruct`.",
        "Qwen/Qwen2.5-VL-7B-Instruct",
    ),
    "llamacpp": Preset(
        "llama.cpp server",
        "http://localhost:8080/v1",
        "Local: `llama-server -m model.gguf --mmproj mmproj.gguf`; needs the vision projector.",
    ),
    "openai": Preset(
        "OpenAI",
        "https://api.openai.com/v1",
        "Cloud; needs an API key. Screenshots leave this computer.",
        "gpt-4.1-mini",
    ),
    "openai-computer": Preset(
        "OpenAI computer use",
        "https://api.openai.com/v1",
        "OpenAI's computer tool on the Responses API (profile openai-computer); needs an API "
        "key. Screenshots leave this computer.",
        "computer-use-preview",
    ),
    "anthropic-computer": Preset(
        "Anthropic computer use",
        "https://api.anthropic.com",
        "Claude's computer use on the Messages API (profile anthropic-computer); needs an "
        "Anthropic API key (the key field, the keyring entry 'anthropic' or "
        "$ANTHROPIC_API_KEY). Screenshots leave this computer.",
        "claude-sonnet-4-6",
    ),
    "openrouter": Preset(
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        "Cloud; needs an API key. Screenshots leave this computer.",
        "qwen/qwen2.5-vl-72b-instruct",
    ),
}
CUSTOM_PROVIDER = "custom"


def provider_for_server(kind: str) -> str:
    """The preset of a model server found on this machine (core.model_servers.FoundServer's
    kind: ollama, lmstudio, llamacpp, vllm), else custom."""
    return (
        kind
        if kind in PRESETS and PRESETS[kind].base_url.startswith("http://localhost")
        else CUSTOM_PROVIDER
    )


class Settings(BaseModel):
    """Every option of the app. Bad values are a ValidationError; see `validation_messages`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    provider: str = "ollama"
    base_url: str = "http://localhost:11434/v1"
    model: str = "qwen2.5vl"
    api_key_env: str = "OPENAI_API_KEY"
    vision: VisionSetting = "auto"
    read_timeout_s: float = Field(default=120.0, ge=1, le=3600)
    max_steps: int = Field(default=20, ge=1, le=500)
    max_failures: int = Field(default=3, ge=1, le=50)
    approval_timeout_s: float = Field(default=60.0, ge=1, le=3600)
    policies: dict[str, Policy] = Field(default_factory=dict)
    stop_hotkey: str = "ctrl+alt+esc"
    capture_width: int = Field(default=1280, ge=320, le=7680)
    capture_format: Literal["jpeg", "png"] = "jpeg"
    jpeg_quality: int = Field(default=80, ge=10, le=100)
    #: the monitor the model is shown: "auto" (the one of the active window), "all", or N
    monitor: Literal["auto", "all"] | int = "auto"
    set_of_mark: bool = False
    minimize_while_acting: bool = True
    #: the app's language: "system" (the system locale's when translated, else English),
    #: "en" or "zh_CN"; read when the app starts (ui/i18n.py)
    language: Literal["system", "en", "zh_CN"] = "system"
    # ── the gate (core/call_risk.py, loop.py) ──
    #: words whose click / invoke targets ask every time, whatever the grants
    sensitive_targets: list[str] = Field(
        default_factory=lambda: list(DEFAULT_SENSITIVE_TARGETS), max_length=500
    )
    #: text on the screen that looks like orders to an AI makes every input action ask
    #: while it shows (core/injection_guard.py); "off" is warned of in the window and doctor
    injection_guard: Literal["on", "off"] = "on"
    #: per-run limits (0: none); past one the run ends stopped / budget
    max_run_seconds: float = Field(default=1800.0, ge=0, le=7 * 24 * 3600)
    max_run_tokens: int = Field(default=1_000_000, ge=0)
    #: USD per million (input, output) tokens by model-name pattern, for the cost estimate
    prices: dict[str, tuple[float, float]] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    #: the model family's profile (planner/profiles.py): "auto" picks it by the model name
    model_profile: str = "auto"
    #: the model's coordinate space when calibration found it differs from the profile's
    model_coordinates: Literal["auto", "pixels", "normalized", "resized"] = "auto"
    #: how a click by coordinates is refined before the gate (planner/grounding.py): "auto"
    #: is the model profile's default; "zoom" asks the model again on a crop around its
    #: point; "grounder" asks the grounding model below, then zooms with it
    grounding: Literal["auto", "off", "zoom", "grounder"] = "auto"
    #: the grounding model's server ("": the planner's) and name, and its profile
    grounder_base_url: str = ""
    grounder_model: str = ""
    grounder_profile: str = "auto"
    #: the grounder's point is refined on a crop too (one more request to the grounder)
    grounder_zoom: bool = True
    #: OpenAI's computer tool: the conversation kept at OpenAI between turns
    #: (previous_response_id); off, nothing is stored there and every item is sent again
    openai_store: bool = True
    #: the user's own mouse or keyboard input during a run pauses it (user_takeover.py)
    pause_on_user_input: bool = True
    #: `desktop-agent mcp`: the MCP client's user may answer an ordinary input call's question
    #: (elicitation); never one that asks every time (docs/mcp.md, "Whose answer")
    mcp_client_approves: bool = False
    #: the loopback ports where model servers are looked for (planner/discovery.py)
    probe_ports: list[int] = Field(
        default_factory=lambda: list(DEFAULT_PORT_NUMBERS), min_length=1, max_length=64
    )

    @field_validator("monitor", mode="before")
    @classmethod
    def _monitor(cls, value: Any) -> Any:
        # 0 (all, as older settings and the CLI's numbers say it) and "2" read as run --monitor
        return parse_monitor(value)

    @field_validator("probe_ports", mode="before")
    @classmethod
    def _port_list(cls, value: Any) -> Any:
        """A list, or "11434, 5000" (what an environment variable holds)."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("probe_ports")
    @classmethod
    def _ports_in_range(cls, ports: list[int]) -> list[int]:
        bad = [port for port in ports if not 1 <= port <= 65535]
        if bad:
            raise ValueError(f"not a port: {', '.join(map(str, bad))} (1..65535)")
        return list(dict.fromkeys(ports))

    @field_validator("model_profile", "grounder_profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        from desktop_agent.planner.profiles import AUTO, PROFILE_NAMES

        name = value.strip().lower()
        if name != AUTO and name not in PROFILE_NAMES:
            raise ValueError(
                f"unknown model profile {value!r} (one of: {', '.join((AUTO, *PROFILE_NAMES))})"
            )
        return name

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        name = value.strip().lower()
        if name != CUSTOM_PROVIDER and name not in PRESETS:
            known = ", ".join([*PRESETS, CUSTOM_PROVIDER])
            raise ValueError(f"unknown provider {value!r} (one of: {known})")
        return name

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = value.strip()
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            raise ValueError(f"not a valid http(s) URL: {value!r}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not a valid http(s) URL: {value!r}")
        return url.rstrip("/")

    @field_validator("grounder_base_url")
    @classmethod
    def _optional_url(cls, value: str) -> str:
        return cls._http_url(value) if value.strip() else ""

    @field_validator("grounder_model")
    @classmethod
    def _optional_name(cls, value: str) -> str:
        return value.strip()

    @model_validator(mode="after")
    def _grounder_named(self) -> Self:
        if self.grounding == "grounder" and not self.grounder_model:
            raise ValueError(
                'grounding = "grounder" needs grounder_model (the grounding model\'s name)'
            )
        return self

    @field_validator("model")
    @classmethod
    def _model_name(cls, value: str) -> str:
        name = value.strip()
        if not name:
            raise ValueError("must not be empty")
        return name

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not _ENV_NAME.match(value):
            raise ValueError(f"not an environment variable name: {value!r}")
        return value

    @field_validator("policies", mode="before")
    @classmethod
    def _known_tools(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            unknown = [name for name in value if name not in _TOOL_NAMES]
            if unknown:
                names = ", ".join(repr(name) for name in unknown)
                raise ValueError(f"unknown tool {names} (the tools are: {', '.join(_TOOL_NAMES)})")
        return value

    @field_validator("sensitive_targets")
    @classmethod
    def _target_words(cls, words: list[str]) -> list[str]:
        cleaned = [word.strip() for word in words]
        if not all(cleaned):
            raise ValueError("an empty word would match nothing; remove it")
        return list(dict.fromkeys(cleaned))

    @field_validator("prices")
    @classmethod
    def _prices(cls, prices: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for pattern, (prompt, completion) in prices.items():
            if not pattern.strip() or prompt < 0 or completion < 0:
                raise ValueError(f"{pattern!r}: a price is a pattern and two amounts >= 0")
        return prices

    def budget(self) -> Budget:
        """The per-run limits and price table for the loop (RunnerServices.budget).

        The grounding model's tokens are priced by its own name's row; a grounder on this
        machine without one is free (a local server costs nothing), so a priced planner
        with a local grounder still has a cost."""
        prices = dict(self.prices)
        grounder = self.grounder_model
        grounder_host = urlsplit(self.grounder_base_url or self.base_url).hostname or ""
        if (
            self.grounding == "grounder"
            and grounder
            and Budget(prices=prices).price_of(grounder) is None
            and is_loopback_address(grounder_host)
        ):
            prices[glob.escape(grounder)] = (0.0, 0.0)
        return Budget(
            max_seconds=self.max_run_seconds or None,
            max_tokens=self.max_run_tokens or None,
            prices=prices,
        )

    @field_validator("stop_hotkey")
    @classmethod
    def _hotkey(cls, value: str) -> str:
        parts = value.replace(" ", "").split("+")
        if not all(parts):
            raise ValueError(f"not a key combination: {value!r}")
        try:
            return "+".join(normalize_key(part) for part in parts)
        except ValueError as error:
            raise ValueError(f"{error} in {value!r}") from None


# ── messages ─────────────────────────────────────────────────────────────────


def validation_messages(
    error: ValidationError, sources: Mapping[str, str] | None = None
) -> list[str]:
    """One line per bad value, e.g. "base_url: not a valid http(s) URL: 'htp:/x'".

    `sources` names where a field came from (an environment variable) to say so.
    """
    lines: list[str] = []
    for item in error.errors(include_url=False):
        loc = [str(part) for part in item["loc"]]
        where = ".".join(loc) or "settings"
        if loc and sources and loc[0] in sources:
            where = f"{where} (from {sources[loc[0]]})"
        kind = item["type"]
        message = str(item["msg"])
        if kind == "value_error":
            message = message.removeprefix("Value error, ")
        elif kind == "extra_forbidden":
            message = "unknown setting"
        elif kind == "missing":
            message = "missing"
        else:
            value = item.get("input")
            if isinstance(value, str | int | float | bool):
                message = f"{message}, got {value!r}"
            message = message[0].lower() + message[1:]
        lines.append(f"{where}: {message}")
    return lines


def _validate(data: Mapping[str, Any], sources: Mapping[str, str] | None = None) -> Settings:
    try:
        return Settings.model_validate(dict(data))
    except ValidationError as error:
        raise ConfigError("\n".join(validation_messages(error, sources))) from None


# ── where things live ────────────────────────────────────────────────────────


def settings_path(env: Mapping[str, str] = os.environ) -> Path:
    """settings.toml in DESKTOP_AGENT_HOME when set, else in the platform's user config dir."""
    home = env.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / SETTINGS_FILE
    import platformdirs

    return platformdirs.user_config_path(APP_NAME, appauthor=False) / SETTINGS_FILE


# ── load and save ────────────────────────────────────────────────────────────

#: the settings an environment variable may override, DESKTOP_AGENT_<NAME upper>
ENV_OVERRIDES: tuple[str, ...] = tuple(
    name
    for name in Settings.model_fields
    if name not in ("policies", "sensitive_targets", "prices")
)


def env_overrides(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Values set by DESKTOP_AGENT_BASE_URL, DESKTOP_AGENT_MODEL, ... (empty ones ignored)."""
    found = {}
    for name in ENV_OVERRIDES:
        value = env.get(ENV_PREFIX + name.upper())
        if value:
            found[name] = value
    return found


def load_settings(path: str | Path | None = None, env: Mapping[str, str] = os.environ) -> Settings:
    """The settings file (defaults when there is none) with the environment's overrides.

    ConfigError, one line per bad value, when the file or a variable is invalid.
    """
    file = Path(path) if path is not None else settings_path(env)
    data: dict[str, Any] = {}
    try:
        # another user's file, or one in a folder others may write, is theirs to choose
        refuse_foreign(file.parent, "settings folder")
        with file.open("rb") as handle:
            refuse_foreign(file, "settings file")
            data = tomllib.load(handle)
    except ForeignDataDir as error:
        raise ConfigError(str(error)) from None
    except FileNotFoundError:
        pass
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"settings file {file} is not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"settings file {file} cannot be read: {error.strerror}") from None
    if data.pop("api_key", None) is not None:
        log.info("ignored api_key in %s: the API key is read from the keyring or $VAR", file)
    overrides = env_overrides(env)
    sources = {name: ENV_PREFIX + name.upper() for name in overrides}
    return _validate({**data, **overrides}, sources)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    # A JSON string is a valid TOML basic string (the same escapes).
    return json.dumps(str(value), ensure_ascii=False)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def to_toml(settings: Settings) -> str:
    """The settings as TOML text; the API key is never part of it."""
    data = settings.model_dump(mode="json")
    policies = data.pop("policies")
    prices = data.pop("prices")
    lines = [
        "# desktop-agent settings. The API key is not kept here: it lives in the OS keyring,",
        f"# or in the environment variable named by api_key_env ({settings.api_key_env}).",
    ]
    lines.extend(f"{_toml_key(key)} = {_toml_value(value)}" for key, value in data.items())
    lines.append("")
    lines.append("# per tool: allow | ask | deny (tools not listed follow their risk)")
    lines.append("[policies]")
    lines.extend(f"{_toml_key(tool)} = {_toml_value(policy)}" for tool, policy in policies.items())
    lines.append("")
    lines.append("# USD per million [input, output] tokens, by model-name pattern (first match)")
    lines.append("[prices]")
    lines.extend(
        f"{_toml_key(pattern)} = {_toml_value(list(price))}" for pattern, price in prices.items()
    )
    return "\n".join(lines) + "\n"


def save_settings(settings: Settings, path: str | Path | None = None) -> Path:
    """Write the settings atomically (a temp file beside it, then os.replace); the path."""
    file = Path(path) if path is not None else settings_path()
    file.parent.mkdir(parents=True, exist_ok=True)
    text = to_toml(settings)
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        from desktop_agent.store.private_files import replace_file

        replace_file(Path(tmp), file)  # another instance may be reading it (Windows)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return file


# ── the API key ──────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ProviderKey:
    """A provider's own key (a backend's: Anthropic's): its keyring entry of service
    desktop-agent, its environment variable and the provider's own API, where it may go."""

    entry: str
    env: str
    home: str


def api_key_for(
    url: str,
    settings: Settings,
    env: Mapping[str, str] = os.environ,
    own: ProviderKey | None = None,
) -> str | None:
    """The API key that may go to the model server at `url`, or None: the one rule every
    path that talks to a model server follows (runs, API tasks, doctor, calibration, the
    vision checks, the settings dialog's Test connection).

    - Nothing goes over a transport others can read: https, or plain http to this machine
      (a loopback IP address or `localhost`; `127.attacker.example` is a name, not loopback).
    - The keyring's key goes only to the server it was saved for: the base URL in the
      settings file, not one named by `--base-url`, `DESKTOP_AGENT_BASE_URL` or an unsaved
      dialog.
    - The server this process was told to use (`settings.base_url`, however it was set) gets
      the key from $api_key_env (`--api-key-env`): the user named both for it.
    - Any other URL (an API task naming its own server) gets no key.
    - `own`, a provider's own key, is tried first by the same rule (its keyring entry, else
      its variable), its API (`own.home`) counting as a server it was saved for.

    Blocking (the keyring, maybe over D-Bus, and the settings file): call it off the GUI
    thread and off the event loop.
    """
    if not private_transport(url):
        return None
    if own is not None:
        if _same_server(url, own.home) or _same_server(url, saved_base_url(env)):
            key = stored_api_key(settings, own.entry) or env.get(own.env)
        else:
            key = env.get(own.env) if _same_server(url, settings.base_url) else None
        if key:
            return key
    if _same_server(url, saved_base_url(env)):
        return stored_api_key(settings) or env.get(settings.api_key_env) or None
    if _same_server(url, settings.base_url):
        return env.get(settings.api_key_env) or None
    return None


def saved_base_url(env: Mapping[str, str] = os.environ) -> str | None:
    """The base URL in the settings file (the default when it names none), without the
    environment's overrides; None when the file cannot be read."""
    try:
        return load_settings(settings_path(env), env={}).base_url
    except ConfigError:
        return None


def _same_server(url: str, other: str | None) -> bool:
    return other is not None and url.rstrip("/") == other.rstrip("/")


def private_transport(url: str) -> bool:
    """https, or plain http to this machine: a key sent there is not readable on the way."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and is_loopback_address(parts.hostname or "")


def stored_api_key(settings: Settings, entry: str = KEYRING_USER) -> str | None:
    """The key in the OS keyring (service desktop-agent, `entry`); None without one or a
    keyring."""
    from desktop_agent.os_keyring import os_keyring

    keyring = os_keyring()  # imports keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(KEYRING_SERVICE, entry) or None
    except KeyringError as error:
        log.info(
            "no usable keyring (%s); the API key comes from $%s",
            type(error).__name__,
            settings.api_key_env,
        )
        return None


def get_api_key(settings: Settings, env: Mapping[str, str] = os.environ) -> str | None:
    """The key from the OS keyring, else from $api_key_env, else None — the key of the saved
    server; what goes where is `api_key_for`'s."""
    return stored_api_key(settings) or env.get(settings.api_key_env) or None


def set_api_key(key: str | None) -> None:
    """Store the key in the OS keyring (None or empty removes it); ConfigError without one."""
    from desktop_agent.os_keyring import os_keyring

    keyring = os_keyring()  # imports keyring
    from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

    try:
        if key:
            keyring.set_password(KEYRING_SERVICE, KEYRING_USER, key)
        else:
            with contextlib.suppress(PasswordDeleteError):
                keyring.delete_password(KEYRING_SERVICE, KEYRING_USER)
    except NoKeyringError:
        raise ConfigError(
            "no OS keyring is available to keep the API key; set it in the environment "
            "variable named by api_key_env (OPENAI_API_KEY by default) instead"
        ) from None
    except KeyringError as error:
        raise ConfigError(f"the OS keyring refused to store the API key: {error}") from None
