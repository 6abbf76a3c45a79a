"""The window's Routines: Save as routine… from the history, the list's Run with its form,
and the routines' grants in Settings (revocable)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from desktop_agent.core.models import Element, RunKind, RunStatus, RunView, StopReason
from desktop_agent.core.routine import REDACTED, Routine, RoutineParam, RoutineStep
from tests.fakes import FakeFocusProbe, FakeObserver, ScriptedPlanner, done, real_observation, tool
from tests.gui.fake_agent import CrossEvent, drive, until
from tests.gui.test_app_wiring import Harness

pytestmark = [pytest.mark.gui]


def no_model(run: Any) -> Any:
    raise AssertionError("a routine asks no model while the screen matches")


def test_a_completed_run_is_saved_as_a_routine_and_run_again_from_the_list(
    harness: Harness, qloop: Any
) -> None:
    agent, window, flow = harness.agent, harness.window, harness.app.routines
    panel = window.routines
    agent.runner.services.focus = FakeFocusProbe("text")  # a plain field: its text is kept
    # an editor in front: a granted step plays only in the window it was taught in
    agent.runner.services.observer = FakeObserver(real_observation([
        Element(1, "window", "notes.txt - Editor", (0, 0, 640, 360), focused=True),
        Element(2, "text", "", (0, 40, 640, 320), focused=True),
    ]))  # fmt: skip
    agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("type_text", text="hello"), done("typed")]
    )

    async def scenario() -> tuple[RunView, RunView]:
        harness.start("type hello")
        await harness.finished()
        taught = window.run
        assert taught is not None and taught.status is RunStatus.COMPLETED
        (save,) = window.history.context_menu(taught).actions()
        assert save.text() == "Save as &routine…" and save.isEnabled()
        save.trigger()
        dialog = await until(lambda: flow.dialog, what="the save dialog")
        assert [box.text() for box, _ in dialog.param_boxes.values()] == ["turn 1: hello"]
        dialog.name_edit.setText("greet")
        dialog.param_boxes[1][1].setText("words")
        dialog.grant_boxes["type_text"].setChecked(True)
        dialog.accept()
        await until(lambda: panel.list.count() == 1, what="the saved routine listed")
        assert panel.list.item(0).text() == "greet — 1 steps"
        agent.planner_factory = no_model
        panel.fields["words"].setText("bye")
        panel.run_button.click()
        await until(lambda: window.run is not None and window.run.id != taught.id
                    and window.run.status.is_terminal, 10)  # fmt: skip
        await until(lambda: "Routine greet: completed" in panel.note.text())
        assert window.run is not None
        return taught, window.run

    _, again = drive(qloop, scenario(), timeout=20)

    assert agent.repo.routines["greet"].grants == ("type_text",)
    assert (again.status, again.kind, again.routine) == (RunStatus.COMPLETED, RunKind.ROUTINE,
                                                         "greet")  # fmt: skip
    typed = [args.model_dump()["text"] for name, args in
             agent.runner.services.executor.calls if name == "type_text"]  # fmt: skip
    assert typed == ["hello", "bye"]


def test_a_failed_run_cannot_be_saved_and_a_secret_parameter_is_asked_first(
    harness: Harness, qloop: Any
) -> None:
    failed = RunView("r", "g", RunStatus.FAILED, None, 1, 5, 3, (), "m", "u",
                     created_at=datetime.now(UTC))  # fmt: skip
    assert not harness.window.history.context_menu(failed).actions()[0].isEnabled()

    routine = Routine("login", "log in", (RoutineStep("type_text", {"text": REDACTED}),),
                      (RoutineParam("password", (1,), None, True),))  # fmt: skip
    panel = harness.window.routines
    requested: list[Any] = []
    panel.run_requested.connect(lambda *args: requested.append(args))

    async def scenario() -> None:
        await harness.agent.repo.save_routine(routine)
        await harness.app.routines.refresh()
        field = panel.fields["password"]
        assert field.echoMode() == field.EchoMode.Password and field.text() == ""
        panel.run_button.click()
        assert requested == [] and "Type password first" in panel.note.text()
        field.setText("s3cret")
        panel.run_button.click()
        assert requested == [("login", {"password": "s3cret"})]
        assert field.text() == ""  # forgotten once the run started
        await harness.finished()

    drive(qloop, scenario())


def test_settings_show_the_routines_grants_and_revoke_them(harness: Harness, qloop: Any) -> None:
    repo, settings = harness.agent.repo, harness.app.settings
    routine = Routine("greet", "g", (RoutineStep("wait", {"seconds": 0}),),
                      grants=("click", "type_text"))  # fmt: skip

    async def scenario() -> None:
        await repo.save_routine(routine)
        settings.on_settings_requested()
        page = settings.dialog.routine_grants
        await until(lambda: page.list.count() and page.list.item(0).text().startswith("greet"))
        assert page.list.item(0).text() == "greet: click, type_text"
        page.list.setCurrentRow(0)
        page.revoke_button.click()
        await until(lambda: repo.routines["greet"].grants == ())
        await until(lambda: page.list.item(0).text() == "No routine has grants.")
        settings.dialog.reject()

    drive(qloop, scenario())


@pytest.mark.parametrize("stop", ["stop", "stop all"])
def test_a_stop_while_the_routine_is_read_from_the_store_ends_its_run_before_it_acts(
    harness: Harness, qloop: Any, stop: str
) -> None:
    agent, window = harness.agent, harness.window
    agent.planner_factory = no_model
    routine = Routine("poke", "click it", (RoutineStep("click", {"x": 5, "y": 5}),),
                      grants=("click",))  # fmt: skip
    reading, release = CrossEvent(), CrossEvent()
    real_get = agent.repo.get_routine

    async def held(name: str) -> Any:  # on the engine: the store answers when the test says
        found = await real_get(name)
        reading.set()
        await release.wait()
        return found

    async def scenario() -> None:
        await harness.client.engine.run(agent.repo.save_routine(routine))
        await harness.app.routines.refresh()
        agent.repo.get_routine = held
        window.routines.run_button.click()
        await reading.wait()
        assert window.live_running and window.panel.stop_button.isEnabled()
        button = window.panel.stop_button if stop == "stop" else window.panel.stop_all_button
        button.click()
        release.set()
        await harness.finished()

    drive(qloop, scenario(), timeout=20)

    run = window.run
    assert run is not None and run.routine == "poke"
    assert (run.status, run.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert run.message == "stopped before it started"
    assert agent.runner.services.executor.calls == []
    assert agent.runner.active_ids == ()
