"""What the command line prints: one human line or one JSON line per event, the notes beside
them on stderr, and exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, TextIO

from desktop_agent.cli.exits import EXIT_COMPLETED, EXIT_FAILED, EXIT_STOPPED
from desktop_agent.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StartRefused,
    StepFinished,
    TakeoverUnavailable,
    TaskLoopEvent,
    event_line,
)
from desktop_agent.core.models import RunStatus, RunView
from desktop_agent.core.sentences import of_step
from desktop_agent.core.text import printable, printable_json, quote

if TYPE_CHECKING:
    from desktop_agent.host import Host


EXIT_BY_STATUS = {
    RunStatus.COMPLETED: EXIT_COMPLETED,
    RunStatus.FAILED: EXIT_FAILED,
    RunStatus.STOPPED: EXIT_STOPPED,
    RunStatus.INTERRUPTED: EXIT_FAILED,
}


async def print_events(
    events: AsyncIterator[TaskLoopEvent],
    out: TextIO,
    *,
    as_json: bool,
    pause_line: Callable[[RunPaused], str] | None = None,
) -> RunView | None:
    final: RunView | None = None
    async with aclosing(events) as stream:  # type: ignore[type-var]
        async for event in stream:
            if as_json:
                line = event_line(event)
            elif isinstance(event, RunPaused) and pause_line is not None:
                line = printable(pause_line(event))
            else:
                line = human(event)
            if line:
                out.write(line + "\n")
                out.flush()
            if isinstance(event, RunFinished):
                final = event.run
    return final


def json_line(value: object) -> str:
    """One JSON line; characters that would act on a terminal are \\u escapes (same value)."""
    return printable_json(json.dumps(value, ensure_ascii=False))


def human(event: TaskLoopEvent) -> str:
    """One line for a person: the screen's and the model's text cannot steer the terminal."""
    return printable(_human_line(event))


def _human_line(event: TaskLoopEvent) -> str:
    if isinstance(event, RunStarted):
        run = event.run
        profile = f", model profile {run.model_profile}" if run.model_profile else ""
        profile += f", monitor {run.monitor}" if run.monitor else ""
        return f"run {run.id}: {run.goal!r} with {run.model} (max {run.max_steps} steps{profile})"
    if isinstance(event, StepFinished):
        step = event.step
        duration = f"{step.duration_ms:.0f} ms" if step.duration_ms is not None else "-"
        detail = step.error or step.summary
        said = of_step(step)
        if said is not None:
            # an action in plain words (its JSON: --json, or `show --json`)
            detail = f"{said}: {detail}" if detail else str(said)
            status = step.status.value
            return f"{step.index:>4} {step.kind.value:<7} {status:<7} {duration:>8}  {detail}"
        return (
            f"{step.index:>4} {step.kind.value:<7} {(step.tool or '-'):<15} "
            f"{step.short_args(36):<36} {step.status.value:<7} {duration:>8}  {detail}"
        )
    if isinstance(event, RunPaused):
        return "     paused"
    if isinstance(event, RunResumed):
        return "     resumed"
    if isinstance(event, ApprovalRequested):
        # what will be typed, as the person asked must see it (the stored row hides it)
        shown = json.dumps(event.approval.to_show)
        said = event.approval.sentence
        where = f" on {event.approval.monitor.describe()}" if event.approval.monitor else ""
        return f"     approval asked: {said} ({quote(event.approval.tool)} {shown}){where}"
    if isinstance(event, ApprovalResolved):
        timed_out = " (timed out)" if event.by == "timeout" else ""
        return f"     approval: {event.decision.value}{timed_out}"
    if isinstance(event, RunFinished):
        return _summary(event.run)
    return ""


def _summary(run: RunView) -> str:
    elapsed = ""
    if run.started_at and run.finished_at:
        elapsed = f" in {(run.finished_at - run.started_at).total_seconds():.1f} s"
    reason = f" / {run.stop_reason.value}" if run.stop_reason else ""
    message = f": {run.message}" if run.message else ""
    return (
        f"run {run.id} {run.status.value}{reason} after {run.step_count} turn(s){elapsed}"
        f"; {usage_text(run)}{message}"
    )


def usage_text(run: RunView) -> str:
    """The run's model tokens and cost, e.g. "1,234 + 56 tokens (estimated), $0.0012"."""
    about = " (estimated)" if run.tokens_estimated else ""
    cost = "cost unknown" if run.cost is None else f"${run.cost:.4f}"
    return f"{run.prompt_tokens:,} + {run.completion_tokens:,} tokens{about}, {cost}"


class TakeoverNotes:
    """What a headless face says beside its events: a refused start on stderr (with the way
    forward), and a pause because the user took over the desktop (setting
    `pause_on_user_input`) with how to resume through the local API — on the human line, or
    with --json on stderr (stdout stays events only)."""

    def __init__(self, host: Host, *, as_json: bool) -> None:
        self._host = host
        self._as_json = as_json
        host.subscribe(self.on_event)

    def resume_hint(self, run_id: str) -> str:
        from desktop_agent.instances.registry import TOKEN_FILE

        token = self._host.data_dir / TOKEN_FILE
        return (
            f"resume: curl -X POST -H \"Authorization: Bearer $(cat '{token}')\" "
            f"http://127.0.0.1:{self._host.api_port}/api/tasks/{run_id}/resume"
        )

    def pause_line(self, event: RunPaused) -> str:
        """The human line of a run_paused event."""
        if event.reason != "user":
            return "     paused"
        return f"     paused: you took over the mouse or keyboard; {self.resume_hint(event.run.id)}"

    def on_event(self, event: TaskLoopEvent) -> None:
        if isinstance(event, StartRefused):
            advice = f"; {event.advice}" if event.advice else ""
            self._say(f"{event.reason}{advice}")
        elif isinstance(event, TakeoverUnavailable):
            self._say(f"your own input will not pause the run: {event.why}")
        elif isinstance(event, RunPaused) and event.reason == "user" and self._as_json:
            self._say(f"paused: you took over; {self.resume_hint(event.run.id)}")

    @staticmethod
    def _say(line: str) -> None:
        print(printable(f"desktop-agent: {line}"), file=sys.stderr, flush=True)
