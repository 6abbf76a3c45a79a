"""`desktop-agent mcp`: the agent as a Model Context Protocol server, behind the run's own gate.

tools.py: the tool list (names, descriptions, input schemas from the planner's tool models);
calls.py: a desktop tool call as a one-step run; gate.py: where an approval is asked;
progress.py: run events as progress notifications; server.py: the MCP handlers;
serve.py: stdio and streamable HTTP. The `mcp` SDK is imported only below this package.
"""
