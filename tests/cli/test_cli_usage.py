"""The CLI refuses bad input with one line on stderr and exit 3, and lists history (DESIGN §5)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from desktop_agent.cli import EXIT_REFUSED
from desktop_agent.launch import main
from tests.support.model_server import ModelServer, serve_in_thread

pytestmark = pytest.mark.usefixtures("isolated_home")


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "   "], "the goal is empty"),
        (["run", "x", "--max-steps", "abc"], "not a whole number: 'abc'"),
        (["run", "x", "--max-steps", "0"], "0 is out of range 1..500"),
        (["run", "x", "--max-failures", "999"], "999 is out of range 1..50"),
        (["run", "x", "--allow", "click,teleport"], "unknown tool(s): teleport"),
        (["run", "x", "--approve", "maybe"], "invalid choice: 'maybe'"),
        (["run", "x", "--vision", "perhaps"], "invalid choice: 'perhaps'"),
        (["run", "x", "--base-url", "htp:/nowhere"], "not a valid http(s) URL: 'htp:/nowhere'"),
        (["run", "x", "--model", "  "], "model"),
        (["run"], "the following arguments are required: goal"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["run", "x", "--no-such-option"], "unrecognized arguments: --no-such-option"),
    ],
)
def test_bad_options_exit_3_with_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == EXIT_REFUSED
    line = _one_line_error(capsys)
    assert line.startswith("desktop-agent: ")
    assert expected in line


def test_unwritable_data_dir_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert main(["runs", "--data-dir", str(blocker / "data")]) == EXIT_REFUSED
    line = _one_line_error(capsys)
    assert str(blocker / "data") in line
    assert "cannot be written" in line


def test_bad_settings_file_is_refused_in_one_line_per_value(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "settings.toml").write_text('base_url = "nope"\n')
    assert main(["run", "hello"]) == EXIT_REFUSED
    line = _one_line_error(capsys)
    assert "base_url" in line and "'nope'" in line


def test_runs_on_an_empty_data_dir_prints_an_empty_json_array(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "--json", "--data-dir", str(tmp_path / "d")]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert (tmp_path / "d" / "history.db").exists()


def test_show_of_an_unknown_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "nope", "--data-dir", str(tmp_path)]) == EXIT_REFUSED
    assert "no run 'nope'" in _one_line_error(capsys)


def test_stop_all_with_no_instances_says_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stop-all", "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "stopped 0 run(s)"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_model_server_down_is_refused_naming_the_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code = main(["run", "open the editor", "--base-url", url, "--data-dir", str(tmp_path)])
    assert code == EXIT_REFUSED
    line = _one_line_error(capsys)
    assert url in line
    assert "not reachable" in line
    assert main(["runs", "--json", "--data-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == [], "a refused run is not recorded"


def test_a_model_that_cannot_see_is_refused_naming_it_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blind = ModelServer(ollama={"llama3": ["completion"]}, models=("llama3",))
    with serve_in_thread(blind) as server:
        code = main(
            [
                "run",
                "open the editor",
                "--base-url",
                server.base_url,
                "--model",
                "llama3",
                "--data-dir",
                str(tmp_path),
            ]
        )

    assert code == EXIT_REFUSED
    line = _one_line_error(capsys)
    assert "llama3" in line and "--vision yes" in line
    assert server.requests == [], "checking vision sends no chat completion"


def test_doctor_shows_what_the_model_server_says_without_acting_on_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a server whose capability list carries a clear-screen escape and a bidi override
    server_side = ModelServer(ollama={"sly": ["completion\x1b[2J\u202e"]}, models=("sly",))
    with serve_in_thread(server_side) as server:
        code = main(
            ["doctor", "--base-url", server.base_url, "--model", "sly", "--data-dir", str(tmp_path)]
        )

    out = capsys.readouterr().out
    assert code == 1
    assert "Ollama lists its capabilities: completion\\x1b[2J\\u202e" in out
    assert "\x1b" not in out and "\u202e" not in out


@pytest.mark.parametrize(
    ("argv", "plain", "data_dir"),
    [
        ([], True, None),
        (["--data-dir", "/d"], True, "/d"),
        (["--data-dir=/d"], True, "/d"),
        (["--data-dir", "stop-all"], True, "stop-all"),  # the app, on a folder named stop-all
        (["--data-dir", "/a", "--data-dir", "/b"], False, None),
        (["--data-dir", "-x"], False, None),
        (["--data", "/d"], False, None),  # argparse's abbreviations: the full command line's
        (["-h"], False, None),
        (["--bogus"], False, None),
        (["runs"], False, None),
    ],
)
def test_the_app_with_at_most_a_data_dir_is_opened_without_the_command_lines_package(
    argv: list[str], plain: bool, data_dir: str | None
) -> None:
    from desktop_agent import __main__ as entry

    assert entry._plain_command_line(argv, None) == (plain, data_dir)


def test_a_bad_option_to_the_app_is_still_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from desktop_agent import __main__ as entry

    assert entry.main(["--bogus"]) == EXIT_REFUSED
    assert "unrecognized arguments: --bogus" in _one_line_error(capsys)
