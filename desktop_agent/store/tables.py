"""The tables of the history store and the conversion of their rows to and from core views."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import peewee

from desktop_agent.core.models import (
    Effect,
    ElementRef,
    MonitorArea,
    RunKind,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    SuspiciousText,
)
from desktop_agent.store.process import ProcessIdentity

RUN_COLUMNS = (
    "id",
    "goal",
    "status",
    "stop_reason",
    "step_count",
    "max_steps",
    "max_failures",
    "allowed_tools",
    "model",
    "base_url",
    "created_at",
    "started_at",
    "finished_at",
    "message",
    "owner_pid",
    "owner_started",
    "prompt_tokens",
    "completion_tokens",
    "tokens_estimated",
    "cost",
    "kind",
    "routine",
    "model_profile",
    "monitor",
)

STEP_COLUMNS = (
    "run_id",
    "seq",
    "turn",
    "kind",
    "status",
    "tool",
    "args",
    "summary",
    "error",
    "screenshot",
    "thumbnail",
    "started_at",
    "finished_at",
    "duration_ms",
    "reason",
    "raw_output",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "target_x",
    "target_y",
    "effect",
    "element",
    "suspicious_text",
    "monitor",
)


@dataclass(frozen=True, slots=True)
class Tables:
    """peewee tables bound to one database (not module globals: a process may open two stores)."""

    runs: peewee.Table
    steps: peewee.Table
    grants: peewee.Table
    routines: peewee.Table

    @classmethod
    def bound_to(cls, db: peewee.Database) -> Tables:
        return cls(
            runs=peewee.Table("runs").bind(db),
            steps=peewee.Table("steps").bind(db),
            grants=peewee.Table("grants").bind(db),
            routines=peewee.Table("routines").bind(db),
        )


def upsert_sql(table: str, columns: tuple[str, ...], key: tuple[str, ...]) -> str:
    """INSERT … ON CONFLICT (key) DO UPDATE of every other column, with `?` per column.

    Built once: peewee's query builder takes ~0.3 ms per statement of this width,
    more than SQLite takes to commit it, and the loop writes a row several times a turn.
    """
    names = ", ".join(f'"{name}"' for name in columns)
    marks = ", ".join("?" for _ in columns)
    updates = ", ".join(f'"{name}" = excluded."{name}"' for name in columns if name not in key)
    conflict = ", ".join(f'"{name}"' for name in key)
    return (
        f'INSERT INTO "{table}" ({names}) VALUES ({marks}) '
        f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}"
    )


UPSERT_RUN = upsert_sql("runs", RUN_COLUMNS, ("id",))
UPSERT_STEP = upsert_sql("steps", STEP_COLUMNS, ("run_id", "seq"))


def columns_of(table: peewee.Table, row: dict[str, Any]) -> dict[peewee.Column, Any]:
    """A row keyed by the table's columns, as peewee's insert wants it."""
    return {getattr(table.c, name): value for name, value in row.items()}


def time_to_db(value: datetime | None) -> str | None:
    """UTC ISO-8601 with microseconds: the text sorts as the times do. Naive means UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def time_from_db(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def run_to_row(run: RunView, owner: ProcessIdentity | None) -> dict[str, Any]:
    """The row of a run view; `owner` is stored while the run is active, else cleared."""
    active = owner is not None and run.status.is_active
    return {
        "id": run.id,
        "goal": run.goal,
        "status": run.status.value,
        "stop_reason": run.stop_reason.value if run.stop_reason else None,
        "step_count": run.step_count,
        "max_steps": run.max_steps,
        "max_failures": run.max_failures,
        "allowed_tools": _json(list(run.allowed_tools)),
        "model": run.model,
        "base_url": run.base_url,
        "created_at": time_to_db(run.created_at),
        "started_at": time_to_db(run.started_at),
        "finished_at": time_to_db(run.finished_at),
        "message": run.message,
        "owner_pid": owner.pid if active and owner else None,
        "owner_started": owner.started if active and owner else None,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "tokens_estimated": int(run.tokens_estimated),
        "cost": run.cost,
        "kind": run.kind.value,
        "routine": run.routine,
        "model_profile": run.model_profile,
        "monitor": run.monitor,
    }


def run_from_row(row: dict[str, Any]) -> RunView:
    created_at = time_from_db(row["created_at"])
    assert created_at is not None
    return RunView(
        id=row["id"],
        goal=row["goal"],
        status=RunStatus(row["status"]),
        stop_reason=StopReason(row["stop_reason"]) if row["stop_reason"] else None,
        step_count=row["step_count"],
        max_steps=row["max_steps"],
        max_failures=row["max_failures"],
        allowed_tools=tuple(json.loads(row["allowed_tools"])),
        model=row["model"],
        base_url=row["base_url"],
        created_at=created_at,
        started_at=time_from_db(row["started_at"]),
        finished_at=time_from_db(row["finished_at"]),
        message=row["message"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        tokens_estimated=bool(row["tokens_estimated"]),
        cost=row["cost"],
        kind=RunKind(row["kind"]),
        routine=row["routine"],
        model_profile=row["model_profile"],
        monitor=row["monitor"],
    )


def step_to_row(step: StepView) -> dict[str, Any]:
    target = step.target
    return {
        "run_id": step.run_id,
        "seq": step.seq,
        "turn": step.index,
        "kind": step.kind.value,
        "status": step.status.value,
        "tool": step.tool,
        "args": _json(step.args),
        "summary": step.summary,
        "error": step.error,
        "screenshot": step.screenshot,
        "thumbnail": step.thumbnail,
        "started_at": time_to_db(step.started_at),
        "finished_at": time_to_db(step.finished_at),
        "duration_ms": step.duration_ms,
        "reason": step.reason,
        "raw_output": step.raw_output,
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
        "latency_ms": step.latency_ms,
        "target_x": target[0] if target else None,
        "target_y": target[1] if target else None,
        "effect": step.effect.value if step.effect else None,
        "element": _json(step.element.to_json()) if step.element else None,
        "suspicious_text": (
            _json([note.to_json() for note in step.suspicious_text])
            if step.suspicious_text
            else None
        ),
        "monitor": _json(step.monitor.to_json()) if step.monitor else None,
    }


def step_from_row(row: dict[str, Any]) -> StepView:
    started_at = time_from_db(row["started_at"])
    assert started_at is not None
    has_target = row["target_x"] is not None and row["target_y"] is not None
    return StepView(
        run_id=row["run_id"],
        seq=row["seq"],
        index=row["turn"],
        kind=StepKind(row["kind"]),
        status=StepStatus(row["status"]),
        started_at=started_at,
        tool=row["tool"],
        args=json.loads(row["args"]),
        summary=row["summary"],
        error=row["error"],
        screenshot=row["screenshot"],
        thumbnail=row["thumbnail"],
        finished_at=time_from_db(row["finished_at"]),
        duration_ms=row["duration_ms"],
        reason=row["reason"],
        raw_output=row["raw_output"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        latency_ms=row["latency_ms"],
        target=(row["target_x"], row["target_y"]) if has_target else None,
        effect=Effect(row["effect"]) if row["effect"] else None,
        element=ElementRef.from_json(json.loads(row["element"])) if row["element"] else None,
        suspicious_text=tuple(
            SuspiciousText.from_json(note) for note in json.loads(row["suspicious_text"] or "[]")
        ),
        monitor=MonitorArea.from_json(json.loads(row["monitor"])) if row["monitor"] else None,
    )
