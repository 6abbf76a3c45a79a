"""What counts as this machine: a loopback address, and the Host header a local listener answers."""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})


def is_loopback_address(host: str) -> bool:
    """Is a URL's host `localhost`, or an IP address of this machine's loopback (127.0.0.0/8,
    ::1)? The host is parsed as an address: a name that merely starts with "127." is somebody
    else's."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_host_header(host: str) -> bool:
    """Is a Host header `127.0.0.1`, `localhost` or `[::1]`, with or without a port? Only the
    names a local client writes: a listener answers no other (a rebound DNS name is refused)."""
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
