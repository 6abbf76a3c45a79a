"""The Host header a local listener answers (the API's and the MCP's HTTP): loopback names only."""

from __future__ import annotations

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})


def is_loopback_host(host: str) -> bool:
    """Is a Host header `127.0.0.1`, `localhost` or `[::1]`, with or without a port?"""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return False
        name, rest = host[: end + 1], host[end + 1 :]
        if rest and not rest.startswith(":"):
            return False
        port = rest[1:]
    else:
        name, _, port = host.partition(":")
    if port and not (port.isascii() and port.isdigit() and int(port) < 65536):
        return False
    return name in LOOPBACK_NAMES
