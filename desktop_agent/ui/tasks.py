"""Spawned: the coroutines a view started on the loop, kept until done and ended together."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)


class Spawned:
    """Tasks a view started: each referenced until done (the loop keeps only a weak one),
    what one raises logged and handed to `failed` (the view says it), all cancelled and
    awaited by `close`. Qt-free; asyncio is imported at the first spawn, after the first
    paint."""

    def __init__(self, failed: Callable[[BaseException], None]) -> None:
        self._failed = failed
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `coro` on the running loop."""
        import asyncio

        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("window task failed", exc_info=error)
            self._failed(error)

    async def close(self) -> None:
        """Cancel every task and wait for them to end."""
        import asyncio

        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
