"""The exception tree of desktop_agent.

    DesktopAgentError
    ├── ConfigError              a setting or option is invalid (one line, names the value)
    ├── RefusedToStart           a run cannot start; the CLI exits 3, the API answers 4xx
    │   ├── VisionRequired       the model cannot see screenshots (HTTP 422)
    │   ├── ModelUnreachable     the model server does not answer (names the URL)
    │   └── AlreadyRunning       the run id is active already (HTTP 409)
    ├── ModelNotListed           the server answers but does not list the model (the app's
    │                            model line says so; a run is not refused for it)
    ├── RunNotFound              no run with that id
    ├── StoreError               the history store cannot be opened or written
    ├── PlannerError             the model's answer is unusable or the request failed
    │   └── PlannerTransportError  the server could not be reached / kept failing
    ├── ToolError                a tool failed; its message is what the model sees next turn
    │   ├── UnknownTool          no tool of that name
    │   ├── ToolNotAllowed       not on the run's allowed-tools list
    │   ├── InvalidArguments     the arguments do not validate
    │   └── BreakerOpen          the tool's circuit breaker is open
    ├── ObservationError         the screen could not be observed
    └── NobodyToAsk              an approval gate has no person at this desktop to ask: the
                                 question is denied, and the step says so (not "by the user")

A user stop is not an error: the loop ends the run stopped / user_stop through
`StopRequested`, which is deliberately *not* a DesktopAgentError. Nor is a pause that
interrupts an action (`ActionPaused`): its step is skipped, the run goes on after the resume.
"""

from __future__ import annotations

from typing import Any


class DesktopAgentError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(DesktopAgentError):
    """A setting or command-line option is invalid."""


class RefusedToStart(DesktopAgentError):
    """A run cannot start; nothing was done."""


class VisionRequired(RefusedToStart):
    """The model cannot see screenshots."""


class ModelUnreachable(RefusedToStart):
    """The model server does not answer.

    `found`: what a look for model servers on this machine found meanwhile (a
    core.model_servers.Discovery), when one was made; its summary is in the message.
    """

    def __init__(self, message: str, found: Any = None) -> None:
        super().__init__(message)
        self.found = found


class ModelNotListed(DesktopAgentError):
    """The model server answers, lists its models, and the model is not among them."""


class AlreadyRunning(RefusedToStart):
    """A run with this id is active already."""


class RunNotFound(DesktopAgentError):
    """No run with that id."""


class StoreError(DesktopAgentError):
    """The history store cannot be opened or written."""


class PlannerError(DesktopAgentError):
    """The model's answer is unusable, or the request failed.

    `raw` keeps the model's text (when there was one) so it can be stored and
    shown to the model next turn.
    """

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class PlannerTransportError(PlannerError):
    """The model server could not be reached, or kept failing after retries."""


class ToolError(DesktopAgentError):
    """A tool failed; the message is shown to the model next turn."""


class NotTheToolsFault(ToolError):
    """A step that failed, but not because its tool is broken: its circuit breaker, shared by
    every run, does not count it (the run's consecutive failures do)."""


class DesktopChanged(NotTheToolsFault):
    """The desktop changed under a tool while it ran or just before (a window came up under
    a double click's point, the monitor the screen was seen on went away)."""


class NoSuchTarget(NotTheToolsFault):
    """The call names an element or a point the observation it acts on does not have (the
    model's mistake, not the tool's)."""


class UnknownTool(ToolError):
    """No tool of that name is registered."""


class ToolNotAllowed(ToolError):
    """The tool is not on the run's allowed-tools list."""


class InvalidArguments(ToolError):
    """The tool's arguments do not validate."""


class BreakerOpen(ToolError):
    """The tool's circuit breaker is open."""


class ObservationError(DesktopAgentError):
    """The screen could not be captured or its elements listed."""


class NobodyToAsk(DesktopAgentError):
    """An approval gate (ApprovalGate.request) found no person at this desktop to ask a
    question only a person answers: the gate denies it, and the step names this reason."""


class StopRequested(Exception):  # noqa: N818 - a signal, not an error
    """Raised inside the loop when the user stops the run."""


class ActionPaused(Exception):  # noqa: N818 - a signal, not an error
    """The run was paused before an action's first input event, or during it: nothing (more)
    was sent. The message says how far it got; `partial`: some of its input went out."""

    def __init__(self, message: str, *, partial: bool = False) -> None:
        super().__init__(message)
        self.partial = partial


def describe(error: BaseException) -> str:
    """One line for a step's error: a tool's or the planner's own message as it is, any other
    fault prefixed with its type (an empty message: the type alone)."""
    if isinstance(error, ToolError | PlannerError):
        return str(error)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
