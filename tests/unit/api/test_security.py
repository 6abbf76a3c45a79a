"""Who may talk to the API: loopback only, the token (401) before routing, Host and Origin (403)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from desktop_agent.api.server import ApiServer
from desktop_agent.host import Host
from desktop_agent.instances.loopback import is_loopback_host_header
from desktop_agent.instances.registry import MIN_TOKEN_CHARS, ensure_token, read_token
from desktop_agent.store.private_files import exclusive_lock
from tests.support.locks import wait_for_paths
from tests.unit.api.conftest import Api, close_api, make_agent, open_api

ROOT = Path(__file__).resolve().parents[3]


async def test_no_token_or_a_wrong_token_is_401_before_the_route_is_looked_up(api: Api) -> None:
    wrong = {"Authorization": "Bearer " + "x" * 43}
    basic = {"Authorization": f"Basic {api.token}"}
    bare = {"Authorization": api.token}
    for headers in ({}, wrong, basic, bare):
        for method, path in [
            ("GET", "/api/tasks"),
            ("POST", "/api/tasks"),
            ("POST", "/api/tasks/stop-all"),
            ("GET", "/api/approvals"),
            ("GET", "/api/no-such-route"),  # 401, not 404: nothing is revealed
            ("DELETE", "/api/tasks"),  # 401, not 405
        ]:
            status, body = await api.call(method, path, headers=headers, auth=False)
            assert status == 401, (headers, method, path)
            assert "token" in body["error"]
    assert await api.agent.repo.list_runs() == []


async def test_the_401_names_the_scheme(api: Api) -> None:
    async with api.session.get(f"{api.base}/api/tasks") as response:
        assert response.status == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"


async def test_the_token_scheme_is_case_insensitive(api: Api) -> None:
    status, _ = await api.call(
        "GET", "/api/tasks", headers={"Authorization": f"bearer {api.token}"}, auth=False
    )
    assert status == 200


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "127.0.0.1.evil.example",
        "localhost.evil.example:80",
        "10.0.0.1",
        "127.0.0.2",
        "[::2]",
        "localhost:http",
        "[::1]x",
        "",
    ],
)
async def test_a_host_that_is_not_a_loopback_name_is_403(api: Api, host: str) -> None:
    for auth in (True, False):
        status, body = await api.call("GET", "/api/tasks", headers={"Host": host}, auth=auth)
        assert status == 403, (host, auth)
        assert "loopback" in body["error"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST:1234", "[::1]", "[::1]:9"])
async def test_loopback_hosts_with_any_port_are_served(api: Api, host: str) -> None:
    status, _ = await api.call("GET", "/api/tasks", headers={"Host": host})
    assert status == 200


async def test_a_foreign_origin_is_403_and_the_own_origins_are_served(api: Api) -> None:
    port = api.server.port
    assert port is not None
    for origin in [
        "http://evil.example",
        "null",
        f"http://127.0.0.1:{port + 1}",
        f"https://127.0.0.1:{port}",
        f"http://[::1]:{port}",
        "http://localhost",
    ]:
        status, body = await api.call("POST", "/api/tasks/stop-all", headers={"Origin": origin})
        assert status == 403, origin
        assert "Origin" in body["error"]
    for origin in [f"http://127.0.0.1:{port}", f"http://localhost:{port}"]:
        status, _ = await api.call("POST", "/api/tasks/stop-all", headers={"Origin": origin})
        assert status == 200, origin


def test_is_loopback_host_header_reads_ipv6_brackets_and_ports() -> None:
    assert is_loopback_host_header("[::1]:8080")
    assert not is_loopback_host_header("[::1")
    assert not is_loopback_host_header("localhost:99999")
    assert not is_loopback_host_header("localhost:٣")  # a digit, but not an ASCII one


async def test_the_server_listens_on_127_0_0_1_only(api: Api) -> None:
    assert api.server._runner is not None
    assert [address[0] for address in api.server._runner.addresses] == ["127.0.0.1"]


@pytest.mark.posix
async def test_the_token_file_is_0600_long_and_kept_across_servers(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    first = await open_api(tmp_path, session)
    token = first.token
    await close_api(first)

    path = tmp_path / "api-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(token) >= MIN_TOKEN_CHARS
    second = await open_api(tmp_path, session)
    try:
        assert second.token == token
        status, _ = await second.call("GET", "/api/tasks")
        assert status == 200
    finally:
        await close_api(second)


@pytest.mark.posix
def test_a_token_file_readable_by_others_is_made_0600(tmp_path: Path) -> None:
    token = ensure_token(tmp_path)
    (tmp_path / "api-token").chmod(0o644)

    assert ensure_token(tmp_path) == token
    assert stat.S_IMODE((tmp_path / "api-token").stat().st_mode) == 0o600


@pytest.mark.posix
def test_a_token_file_without_a_usable_token_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "api-token").write_text("short\n")
    assert read_token(tmp_path) is None

    token = ensure_token(tmp_path)

    assert len(token) >= MIN_TOKEN_CHARS
    assert read_token(tmp_path) == token
    assert stat.S_IMODE((tmp_path / "api-token").stat().st_mode) == 0o600


#: a child that takes the token once it has announced reaching the token lock (argv[2])
TOKEN_CHILD = (
    "import sys\n"
    "from pathlib import Path\n"
    "from tests.support.locks import announce_lock_waits_to\n"
    "from desktop_agent.instances.registry import ensure_token\n"
    "announce_lock_waits_to(Path(sys.argv[2]))\n"
    "print(ensure_token(Path(sys.argv[1])))\n"
)


def test_processes_making_the_token_at_once_all_get_the_same_one(tmp_path: Path) -> None:
    # every one of them has looked, found no token and reached the lock before any may
    # make one: the race is met on every run, not 3 in 10
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    markers = [tmp_path / f"waiting-{n}" for n in range(6)]
    with exclusive_lock(data_dir / "api-token.lock"):
        children = [
            subprocess.Popen(
                [sys.executable, "-c", TOKEN_CHILD, str(data_dir), str(marker)],
                stdout=subprocess.PIPE,
                cwd=ROOT,
                text=True,
            )
            for marker in markers
        ]
        try:
            wait_for_paths(markers)
            assert read_token(data_dir) is None
        except BaseException:
            for child in children:
                child.kill()
            raise
    tokens = {child.communicate(timeout=30)[0].strip() for child in children}

    assert all(child.returncode == 0 for child in children)
    assert tokens == {read_token(data_dir)}
    # no temporary left; the lock file stays (the OS releases the lock, not the file)
    assert sorted(p.name for p in data_dir.iterdir()) == ["api-token", "api-token.lock"]


def test_a_process_waiting_to_make_the_token_takes_the_one_made_while_it_waited(
    tmp_path: Path,
) -> None:
    # The race CI met: a process found no token, another then made one, and the first
    # overwrote it — the two processes held different tokens.
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    lock = data_dir / "api-token.lock"
    marker = tmp_path / "waiting"
    with exclusive_lock(lock):
        child = subprocess.Popen(
            [sys.executable, "-c", TOKEN_CHILD, str(data_dir), str(marker)],
            stdout=subprocess.PIPE,
            cwd=ROOT,
            text=True,
        )
        try:
            wait_for_paths([marker])  # it found no token and waits for the lock
            (data_dir / "api-token").write_text("made-by-another-process-meanwhile-0123456789\n")
        except BaseException:
            child.kill()
            raise
    output, _ = child.communicate(timeout=30)

    assert child.returncode == 0
    assert output.strip() == "made-by-another-process-meanwhile-0123456789"


async def test_the_instance_file_is_written_on_start_and_removed_on_close(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path)
    server = ApiServer(Host(agent), face="serve")
    try:
        port = await server.start()
        path = tmp_path / "instances" / f"{os.getpid()}.json"
        entry = json.loads(path.read_text())
        assert set(entry) == {"pid", "port", "started_at", "process_started", "face"}
        assert (entry["pid"], entry["port"], entry["face"]) == (os.getpid(), port, "serve")
        await server.close()
        assert not path.exists()
    finally:
        await server.close()
        await agent.close()


async def test_a_port_in_use_is_a_one_line_config_error(api: Api, tmp_path: Path) -> None:
    from desktop_agent.core.errors import ConfigError

    other = ApiServer(Host(api.agent), pid=os.getppid())
    assert api.server.port is not None
    with pytest.raises(
        ConfigError, match=rf"^cannot serve the API on 127\.0\.0\.1:{api.server.port}: "
    ):
        await other.start(api.server.port)
    assert not (tmp_path / "instances" / f"{os.getppid()}.json").exists()
