"""The local loopback HTTP API (DESIGN §6): routes, SSE, the token and the instance registry.

Importing this package is cheap; `desktop_agent.api.server` imports aiohttp at
its top, so front ends import it inside the function that starts a server.
"""
