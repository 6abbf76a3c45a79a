"""Entry point of `desktop-agent`: the app without arguments, a sub-command with them."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from desktop_agent.cli import main as cli_main

    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
