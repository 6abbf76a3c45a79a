"""The approval dialog's own process (ui/approval_prompt.py): one JSON line in, the app's
ApprovalDialog for it, the answer line out; a bad line is one error line and exit code 3."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.models import ApprovalRequest, Risk
from desktop_agent.ui.approval_prompt import build_dialog, main

pytestmark = [pytest.mark.gui]


def message(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    request = ApprovalRequest(
        "r1-1", "r1", 1, "type_text", {"text": "•••"}, "log in", Risk.INPUT, False, 30,
        caution="typing into a password field", shown_args={"text": "•••"},
    )  # fmt: skip
    return {"request": request.to_json(), "secret": "", "data_dir": str(tmp_path), **changes}


def test_the_dialog_shows_the_question_it_was_sent_and_its_secret_only_on_request(
    qtbot: Any, tmp_path: Path
) -> None:
    dialog = build_dialog(message(tmp_path, secret="hunter2"))
    qtbot.addWidget(dialog)

    assert dialog.request.tool == "type_text" and not dialog.run_button.isVisibleTo(dialog)
    assert dialog.caution_label.text() == "typing into a password field"
    assert "hunter2" not in dialog.args_view.toPlainText()
    dialog.show_secret_box.setChecked(True)
    assert "hunter2" in dialog.args_view.toPlainText()


@pytest.mark.parametrize(
    "line",
    ["not json\n", json.dumps({"request": {"tool": "x"}}) + "\n", json.dumps([1]) + "\n"],
)
def test_a_line_that_is_no_question_is_one_error_line_and_exit_code_3(
    line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()

    assert main(io.StringIO(line), out) == 3

    assert out.getvalue() == ""  # no answer: the server takes it as "nobody was asked"
    err = capsys.readouterr().err
    assert err.startswith("desktop-agent: not an approval question: ") and err.count("\n") == 1
