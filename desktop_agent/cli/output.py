"""What the command line prints: one human line or one JSON line per event, the notes beside
them on stderr, and exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, TextIO

from desktop_agent.cli.exits import EXIT_COMPLETED, EXIT_FAILED, EXIT_STOPPED
from desktop_agent.cli.words import N_, monitor_words, sentence, tr
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


#: the words of the statuses, kinds, stop reasons and answers a human line shows, each said
#: through tr() (their values stay the same in --json)
WORDS = (
    N_("queued"), N_("running"), N_("paused"), N_("completed"), N_("failed"), N_("stopped"),
    N_("interrupted"), N_("done"), N_("error"), N_("max_failures"), N_("breaker"),
    N_("user_stop"), N_("max_steps"), N_("crash"), N_("stuck"), N_("budget"),
    N_("routine_mismatch"), N_("observe"), N_("decide"), N_("ground"), N_("action"), N_("ok"),
    N_("denied"), N_("skipped"), N_("once"), N_("run"), N_("deny"),
)  # fmt: skip


def padded(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded with blanks to `width` terminal columns (a wide character, as Chinese
    ones are, takes two)."""
    columns = len(text)
    if not text.isascii():
        from unicodedata import east_asian_width

        columns += sum(east_asian_width(char) in "WF" for char in text)
    blanks = " " * max(0, width - columns)
    return blanks + text if right else text + blanks


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
        profile = tr(", model profile {profile}", profile=run.model_profile)
        profile = profile if run.model_profile else ""
        profile += tr(", monitor {monitor}", monitor=run.monitor) if run.monitor else ""
        return tr(
            "run {id}: {goal} with {model} (max {steps} steps{more})",
            id=run.id,
            goal=repr(run.goal),
            model=run.model,
            steps=run.max_steps,
            more=profile,
        )
    if isinstance(event, StepFinished):
        step = event.step
        duration = (
            tr("{ms} ms", ms=f"{step.duration_ms:.0f}") if step.duration_ms is not None else "-"
        )
        detail = step.error or step.summary
        said = of_step(step)
        kind, status = padded(tr(step.kind.value), 7), padded(tr(step.status.value), 7)
        start = f"{step.index:>4} {kind} "
        end = f"{status} {padded(duration, 8, right=True)}  "
        if said is not None:
            # an action in plain words (its JSON: --json, or `show --json`)
            words = sentence(said)
            detail = tr("{action}: {detail}", action=words, detail=detail) if detail else words
            return f"{start}{end}{detail}"
        return f"{start}{(step.tool or '-'):<15} {step.short_args(36):<36} {end}{detail}"
    if isinstance(event, RunPaused):
        return "     " + tr("paused")
    if isinstance(event, RunResumed):
        return "     " + tr("resumed")
    if isinstance(event, ApprovalRequested):
        # what will be typed, as the person asked must see it (the stored row hides it)
        shown = json.dumps(event.approval.to_show)
        monitor = event.approval.monitor
        asked = tr(
            "approval asked: {action} ({tool} {arguments})",
            action=sentence(event.approval.sentence),
            tool=quote(event.approval.tool),
            arguments=shown,
        )
        if monitor:
            asked += tr(" on {monitor}", monitor=monitor_words(monitor))
        return "     " + asked
    if isinstance(event, ApprovalResolved):
        decision = tr(event.decision.value)
        if event.by == "timeout":
            return "     " + tr("approval: {decision} (timed out)", decision=decision)
        return "     " + tr("approval: {decision}", decision=decision)
    if isinstance(event, RunFinished):
        return _summary(event.run)
    return ""


def _summary(run: RunView) -> str:
    elapsed = ""
    if run.started_at and run.finished_at:
        seconds = f"{(run.finished_at - run.started_at).total_seconds():.1f}"
        elapsed = tr(" in {seconds} s", seconds=seconds)
    status = tr(run.status.value)
    if run.stop_reason:
        status = tr("{status} / {reason}", status=status, reason=tr(run.stop_reason.value))
    message = tr(": {message}", message=run.message) if run.message else ""
    return tr(
        "run {id} {status} after {turns} turn(s){elapsed}; {usage}{message}",
        id=run.id,
        status=status,
        turns=run.step_count,
        elapsed=elapsed,
        usage=usage_text(run),
        message=message,
    )


def usage_text(run: RunView) -> str:
    """The run's model tokens and cost, e.g. "1,234 + 56 tokens (estimated), $0.0012"."""
    cost = tr("cost unknown") if run.cost is None else f"${run.cost:.4f}"
    prompt, completion = f"{run.prompt_tokens:,}", f"{run.completion_tokens:,}"
    if run.tokens_estimated:
        return tr(
            "{prompt} + {completion} tokens (estimated), {cost}",
            prompt=prompt,
            completion=completion,
            cost=cost,
        )
    return tr(
        "{prompt} + {completion} tokens, {cost}", prompt=prompt, completion=completion, cost=cost
    )


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
        command = (
            f"curl -X POST -H \"Authorization: Bearer $(cat '{token}')\" "
            f"http://127.0.0.1:{self._host.api_port}/api/tasks/{run_id}/resume"
        )
        return tr("resume: {command}", command=command)

    def pause_line(self, event: RunPaused) -> str:
        """The human line of a run_paused event."""
        if event.reason != "user":
            return "     " + tr("paused")
        hint = self.resume_hint(event.run.id)
        return "     " + tr("paused: you took over the mouse or keyboard; {hint}", hint=hint)

    def on_event(self, event: TaskLoopEvent) -> None:
        if isinstance(event, StartRefused):
            advice = f"; {event.advice}" if event.advice else ""
            self._say(f"{event.reason}{advice}")
        elif isinstance(event, TakeoverUnavailable):
            self._say(tr("your own input will not pause the run: {why}", why=event.why))
        elif isinstance(event, RunPaused) and event.reason == "user" and self._as_json:
            hint = self.resume_hint(event.run.id)
            self._say(tr("paused: you took over; {hint}", hint=hint))

    @staticmethod
    def _say(line: str) -> None:
        print(printable(f"desktop-agent: {line}"), file=sys.stderr, flush=True)
