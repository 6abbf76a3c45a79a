"""The command line's exit codes (DESIGN §5): light, so that `stop-all` need not load the
printers."""

from __future__ import annotations

EXIT_COMPLETED, EXIT_FAILED, EXIT_STOPPED, EXIT_REFUSED = 0, 1, 2, 3
