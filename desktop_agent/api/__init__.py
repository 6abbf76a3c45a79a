"""The local loopback HTTP API (DESIGN §6): routes, SSE, the Host header's checks
(the token and the instance registry are desktop_agent/instances/).

Importing this package is cheap; `desktop_agent.api.server` imports aiohttp at
its top, so front ends import it inside the function that starts a server.
"""
