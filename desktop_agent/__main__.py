"""Entry point of `desktop-agent`: the app without arguments, a sub-command with them."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    from desktop_agent.cli import main as cli_main
    from desktop_agent.store.private_files import PRIVATE_UMASK

    # Everything this process makes (history, screenshots, token, log) is its user's alone;
    # the modules that make those files set the modes too, for library users.
    os.umask(PRIVATE_UMASK)

    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
