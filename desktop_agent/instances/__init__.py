"""This machine's running instances: their registry and token, the stop mark, stop-all's client.

Every face and the Host use it, and it uses no face: `stop_all.py` is the lean client the
`desktop-agent stop-all` command imports before anything else (it imports no aiohttp, no
logging); `registry.py` is the rest (registering, asking another instance, stopping them all).
Importing this package is cheap.
"""

#: the first word of the approval dialog's own process, which asks the person at this desktop
#: another process's question (host/person.py starts it, __main__.py answers it; no
#: sub-command: the user never types it)
APPROVAL_DIALOG = "--approval-dialog"
