"""The core: the task loop, its guardrails and its ports. Pure asyncio, stdlib and pydantic."""
