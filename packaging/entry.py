"""The frozen bundle's entry point: the app without arguments, a sub-command with them."""

import sys

from desktop_agent.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
