"""The host: what every face (the window, `run`, `serve`, later entry points) shares.

host.py      Host: runs (admitted at the click, owned to their end), the event stream,
             stop-everything, the local API, the stop hotkey, signals, takeover, closing
engine.py    Engine: an asyncio loop on a thread of its own (the app's host lives there)
takeover.py  UserTakeover: the user's own input pauses every run
"""

from desktop_agent.host.host import Host, HostedRun, RunRequest, new_run_id

__all__ = ["Host", "HostedRun", "RunRequest", "new_run_id"]
