"""ReplayOnShow: the stored run the window replays, at most one, and its RunWorker."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop_agent.ui.run_on_show import RunOnShow
    from desktop_agent.ui.worker import RunWorker


class ReplayOnShow:
    """The replay on show: at most one RunWorker, its events handed to the run on show.

    Attributes:
        worker: the RunWorker of the replay on show, None when none is.
    """

    def __init__(self) -> None:
        self.worker: RunWorker | None = None

    def show(self, worker: RunWorker, shown: RunOnShow) -> None:
        """Put `worker`'s run on `shown`; refused while a live run is on show."""
        if shown.live_running:
            raise RuntimeError("a live run is on show; it must end first")
        self.drop()
        self.worker = worker
        shown.show_replay()
        worker.show_on(shown)

    def drop(self) -> None:
        """Stop following the replay on show, if any."""
        previous, self.worker = self.worker, None
        if previous is not None:
            previous.drop()

    async def close(self) -> None:
        """End the replay on show and wait for its worker."""
        worker = self.worker
        if worker is not None:
            worker.cancel()
            await worker.wait()
