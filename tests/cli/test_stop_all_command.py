"""`desktop-agent stop-all` from a fresh process: what it prints, its exit code, its log lines
and what it imports (DESIGN §5, §7: p95 <= 100 ms, benchmarks/cli_stop_latency.py).

The command is answered first by the entry point's lean path (desktop_agent/__main__.py) and,
where that path declines, by the full command (cli/stop_all.py). Each case runs both, the
entry point (`python -m desktop_agent`) and the full command (`desktop_agent.cli.main`), and
expects the same words from them.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import sysconfig
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from desktop_agent import __main__ as entry
from desktop_agent.cli.exits import EXIT_STOPPED
from desktop_agent.instances import stop_all as client
from desktop_agent.instances.registry import register_instance
from tests.unit.api.conftest import Api, Hang, close_api, frames, next_frame, open_api

# the lean path is POSIX's (Windows takes the full command: tests/unit/api/test_instances.py)
pytestmark = pytest.mark.posix

ROOT = Path(__file__).resolve().parents[2]
LOG = "desktop-agent.log"
#: what the command must not import: the CLI's grammar, logging, the slow parts of the
#: standard library, and the app's libraries
HEAVY = (
    "argparse",
    "logging",
    "pathlib",
    "dataclasses",
    "typing",
    "secrets",
    "http",
    "email",
    "asyncio",
    "aiohttp",
    "pydantic",
    "openai",
    "peewee",
    "platformdirs",
    "encodings.idna",  # getaddrinfo's, for a literal address
    "_hashlib",  # OpenSSL
    "hmac",
    "socket",  # socket.py's enums (the command uses _socket)
    "desktop_agent.cli",
    "desktop_agent.core",
)


@dataclass(frozen=True)
class Said:
    code: int
    out: str
    err: str
    imported: frozenset[str]


async def stop_all(data_dir: Path | None, *, via: str, argv: list[str] | None = None) -> Said:
    """Run `stop-all --data-dir <data_dir>` in a fresh process: `via` "entry" is the console
    script's main (desktop_agent.__main__), "full" the command line package's.

    Without `site` (-S), so the editable install's import hook (it imports pathlib and re at
    start) hides nothing of what the command imports, which `-X importtime` lists.
    """
    words = argv if argv is not None else ["stop-all", "--data-dir", str(data_dir)]
    call = (
        "from desktop_agent.__main__ import main"
        if via == "entry"
        else ("from desktop_agent.cli import main")
    )
    code = f"import sys\n{call}\nsys.exit(main({words!r}))\n"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]]),
    }
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-S",
        "-X",
        "importtime",
        "-c",
        code,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await child.communicate()
    imported, said = set(), []
    for line in err.decode().splitlines():
        if line.startswith("import time:"):
            imported.add(line.rpartition("|")[2].strip())
        else:
            said.append(line)
    assert child.returncode is not None
    return Said(child.returncode, out.decode(), "\n".join(said), frozenset(imported))


def heavy(imported: frozenset[str]) -> list[str]:
    return sorted(m for m in imported if any(m == h or m.startswith(h + ".") for h in HEAVY))


def log_of(data_dir: Path) -> str:
    path = data_dir / LOG
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


async def hanging_run(api: Api) -> aiohttp.ClientResponse:
    """A run of `api` whose model request never answers, asked already; its event stream."""
    hang = Hang()
    api.planners.scripts["hang"] = [hang]
    run = await api.create("hang")
    response: aiohttp.ClientResponse = await api.events(run["id"])
    await hang.asked.wait()
    return response


async def ended_by_user_stop(response: aiohttp.ClientResponse) -> None:
    _, finished = await next_frame(frames(response), "run_finished")
    assert finished["run"]["stop_reason"] == "user_stop"
    response.release()


VIA = pytest.mark.parametrize("via", ["entry", "full"])


# ── the lean path: what it does and does not import ──────────────────────────


async def test_the_command_stops_a_run_importing_only_what_it_needs(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    api = await open_api(tmp_path, session, pid=os.getppid())
    try:
        response = await hanging_run(api)

        said = await stop_all(tmp_path, via="entry")

        assert (said.code, said.out, said.err) == (0, "stopped 1 run(s)\n", "")
        assert heavy(said.imported) == []
        assert "threading" not in said.imported  # one instance: no thread to start
        await ended_by_user_stop(response)
    finally:
        await close_api(api)
    assert log_of(tmp_path) == ""


@VIA
async def test_every_instance_is_stopped(
    tmp_path: Path, session: aiohttp.ClientSession, via: str
) -> None:
    first = await open_api(tmp_path, session, pid=os.getppid())
    second = await open_api(tmp_path, session, pid=os.getpid())
    try:
        responses = [await hanging_run(first), await hanging_run(second)]

        said = await stop_all(tmp_path, via=via)

        assert (said.code, said.out, said.err) == (0, "stopped 2 run(s)\n", "")
        for response in responses:
            await ended_by_user_stop(response)
        if via == "entry":
            assert heavy(said.imported) == []
    finally:
        await close_api(second)
        await close_api(first)


@VIA
async def test_no_instance_stops_nothing(tmp_path: Path, via: str) -> None:
    said = await stop_all(tmp_path, via=via)
    assert (said.code, said.out, said.err) == (0, "stopped 0 run(s)\n", "")
    if via == "entry":
        assert heavy(said.imported) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--data-dir", "{dir}", "stop-all"],
        ["stop-all", "--data-dir={dir}"],
        ["--data-dir={dir}", "stop-all"],
    ],
    ids=["before", "equals", "equals-before"],
)
async def test_the_data_dir_may_be_named_before_or_with_an_equals_sign(
    tmp_path: Path, session: aiohttp.ClientSession, argv: list[str]
) -> None:
    api = await open_api(tmp_path, session, pid=os.getppid())
    try:
        response = await hanging_run(api)
        words = [word.replace("{dir}", str(tmp_path)) for word in argv]

        said = await stop_all(None, via="entry", argv=words)

        assert (said.code, said.out, said.err) == (0, "stopped 1 run(s)\n", "")
        assert heavy(said.imported) == []
        await ended_by_user_stop(response)
    finally:
        await close_api(api)


async def test_the_data_dir_of_the_environment_is_used_without_an_option(
    tmp_path: Path, session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(tmp_path))
    api = await open_api(tmp_path, session, pid=os.getppid())
    try:
        response = await hanging_run(api)

        said = await stop_all(None, via="entry", argv=["stop-all"])

        assert (said.code, said.out, said.err) == (0, "stopped 1 run(s)\n", "")
        assert heavy(said.imported) == []
        await ended_by_user_stop(response)
    finally:
        await close_api(api)


@pytest.mark.skipif(sys.platform != "linux", reason="the standard library's answer is Linux's")
async def test_the_default_data_dir_is_found_without_platformdirs(
    tmp_path: Path, session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --data-dir, no DESKTOP_AGENT_HOME: the platform's data dir (here $XDG_DATA_HOME's),
    as platformdirs names it, without importing it (~9 ms of the command under load)."""
    monkeypatch.delenv("DESKTOP_AGENT_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    data_dir = tmp_path / "xdg" / "desktop-agent"
    data_dir.mkdir(parents=True, mode=0o700)
    api = await open_api(data_dir, session, pid=os.getppid())
    try:
        response = await hanging_run(api)

        said = await stop_all(None, via="entry", argv=["stop-all"])

        assert (said.code, said.out, said.err) == (0, "stopped 1 run(s)\n", "")
        assert heavy(said.imported) == []
        await ended_by_user_stop(response)
    finally:
        await close_api(api)


# ── what goes wrong is said as before ────────────────────────────────────────


@VIA
async def test_an_instance_with_another_token_is_not_asked_and_the_log_says_so(
    tmp_path: Path, session: aiohttp.ClientSession, via: str
) -> None:
    api = await open_api(tmp_path, session, pid=os.getppid())
    try:
        response = await hanging_run(api)
        (tmp_path / "api-token").write_text("another-token-entirely-0123456789\n")

        said = await stop_all(tmp_path, via=via)

        assert (said.code, said.out, said.err) == (0, "stopped 0 run(s)\n", "")
        assert api.agent.runner.active_ids != ()
        assert (
            f"WARNING desktop_agent.instances.registry: the listener on port {api.server.port} "
            f"(instance file of pid {os.getppid()}) did not prove it is ours; the token was "
            "not sent to it"
        ) in log_of(tmp_path)
        response.close()
    finally:
        await close_api(api)


@VIA
async def test_an_instance_that_does_not_answer_is_logged(
    tmp_path: Path, via: str, live_pid: int
) -> None:
    register_instance(tmp_path, _closed_port(), pid=live_pid)
    (tmp_path / "api-token").write_text("t" * 32)

    said = await stop_all(tmp_path, via=via)

    assert (said.code, said.out, said.err) == (0, "stopped 0 run(s)\n", "")
    assert f"instance pid {live_pid} on port" in log_of(tmp_path)
    assert "did not answer stop-all: Connection refused" in log_of(tmp_path)


@VIA
async def test_a_stale_instance_file_is_removed_with_a_log_line_and_the_live_one_stopped(
    tmp_path: Path, session: aiohttp.ClientSession, via: str, dead_pid: int
) -> None:
    api = await open_api(tmp_path, session, pid=os.getppid())
    try:
        response = await hanging_run(api)
        stale = register_instance(tmp_path, 9, pid=dead_pid)

        said = await stop_all(tmp_path, via=via)

        assert (said.code, said.out, said.err) == (0, "stopped 1 run(s)\n", "")
        assert not stale.exists()
        assert f"removing the stale instance file {stale} (pid {dead_pid} is gone)" in (
            log_of(tmp_path)
        )
        await ended_by_user_stop(response)
    finally:
        await close_api(api)


@VIA
async def test_an_instance_without_a_token_file_is_logged(tmp_path: Path, via: str) -> None:
    register_instance(tmp_path, 9, pid=os.getppid())

    said = await stop_all(tmp_path, via=via)

    assert (said.code, said.out, said.err) == (0, "stopped 0 run(s)\n", "")
    assert f"1 instance(s) registered but no API token in {tmp_path}" in log_of(tmp_path)


@VIA
async def test_a_missing_data_dir_is_made_private(tmp_path: Path, via: str) -> None:
    data_dir = tmp_path / "new"
    said = await stop_all(data_dir, via=via)
    assert (said.code, said.out, said.err) == (0, "stopped 0 run(s)\n", "")
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700


@VIA
async def test_a_data_dir_others_can_read_is_made_private(tmp_path: Path, via: str) -> None:
    data_dir = tmp_path / "shared"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    said = await stop_all(data_dir, via=via)
    assert (said.code, said.out, said.err) == (0, "stopped 0 run(s)\n", "")
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700


@VIA
async def test_a_data_dir_that_cannot_be_written_is_refused_in_one_line(
    tmp_path: Path, via: str
) -> None:
    data_dir = tmp_path / "file"
    data_dir.write_text("not a folder")
    said = await stop_all(data_dir, via=via)
    assert said.code == 3
    assert said.out == ""
    assert said.err.startswith(f"desktop-agent: data dir {data_dir} cannot be written")
    assert len(said.err.splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["stop-all", "--data-dir"], "argument --data-dir: expected one argument"),
        (["stop-all", "now"], "unrecognized arguments: now"),
        (["stop-all", "stop-all"], "unrecognized arguments: stop-all"),
    ],
)
async def test_a_usage_error_is_one_line_and_exit_3(
    tmp_path: Path, argv: list[str], reason: str
) -> None:
    said = await stop_all(None, via="entry", argv=argv)
    assert (said.code, said.out) == (3, "")
    assert said.err == f"desktop-agent: {reason}"


# ── the lean path's own decisions ────────────────────────────────────────────


@pytest.mark.parametrize(
    ("argv", "data_dir"),
    [
        (["stop-all", "--data-dir", "/d"], "/d"),
        (["--data-dir", "/d", "stop-all"], "/d"),
        (["--data-dir", "stop-all", "stop-all"], "stop-all"),  # a folder named stop-all
        (["--data-dir", "stop-all"], None),  # that folder, and the app: not stop-all
        (["stop-all", "--data-dir", "/a", "--data-dir", "/b"], None),
        (["stop-all", "--data-dir", "-x"], None),
        (["stop-all", "--data"], None),  # argparse's abbreviations: the full command's
        (["stop-all", "-h"], None),
        (["run", "stop-all"], None),
    ],
)
def test_only_a_plain_stop_all_takes_the_lean_path(argv: list[str], data_dir: str | None) -> None:
    assert entry._data_dir_of(argv) == data_dir


def test_ctrl_c_while_it_asks_is_exit_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_instance(tmp_path, 9, pid=os.getppid())
    (tmp_path / "api-token").write_text("t" * 32)

    def interrupted(*args: object, **kwargs: object) -> tuple[int, list[client.Notice]]:
        raise KeyboardInterrupt

    monkeypatch.setattr(client, "stop_everywhere", interrupted)
    assert entry.main(["stop-all", "--data-dir", str(tmp_path)]) == EXIT_STOPPED == 2


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of a live process that serves nothing."""
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) as sleeper:
        try:
            yield sleeper.pid
        finally:
            sleeper.kill()
