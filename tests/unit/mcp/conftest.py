"""What the MCP tests driven by the SDK's own client share: a client that accepts every
question, a person at this desktop, and faces (an Agent with a fake screen and tools) built
on the gate a test gives."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pytest
from mcp.client.context import ClientRequestContext

from desktop_agent.agent import Agent
from desktop_agent.core.models import ApprovalDecision, ApprovalRequest, Element, Observation
from desktop_agent.host.host import Host
from desktop_agent.mcp.gate import McpApprovalGate
from desktop_agent.mcp.server import McpFace
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, make_observation

EDIT = Element(1, "text", "Body", (0, 40, 600, 400), focused=True)


@dataclass
class AcceptsEverything:
    """A client (or a harness, or a model filling forms) that accepts every elicitation."""

    questions: list[str] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "once"})


@dataclass
class Person:
    """A person at this desktop: answers every question with `answer` (None: nobody there)."""

    answer: ApprovalDecision | None
    asked: list[ApprovalRequest] = field(default_factory=list)

    async def __call__(self, approval: ApprovalRequest) -> ApprovalDecision | None:
        self.asked.append(approval)
        return self.answer


# Never run: mypy reads it (tests/unit/test_fakes_typed.py): each stand-in has the shape of
# what it stands for, the SDK client's elicitation callback and the host's person.
if TYPE_CHECKING:
    from mcp.client.session import ElicitationFnT

    from desktop_agent.host.person import AskHuman

    _client: ElicitationFnT = AcceptsEverything()
    _person: AskHuman = Person(None)

MakeFace = Callable[..., McpFace]


@pytest.fixture
async def make_face(tmp_path: Path) -> AsyncIterator[MakeFace]:
    made: list[McpFace] = []

    def make(
        gate: McpApprovalGate,
        elements: Iterable[Element] = (EDIT,),
        screen: Observation | None = None,
        **settings: Any,
    ) -> McpFace:
        """A face on `gate` whose screen is `screen` (None: one listing `elements`)."""
        agent = Agent.assemble(
            tmp_path,
            Settings(approval_timeout_s=30, **settings),
            SqliteRunRepository.open(tmp_path),
            observer=FakeObserver(screen or make_observation(elements)),
            executor=FakeExecutor(),
            gate=gate,
            check_model=False,
        )
        face = McpFace(Host(agent), gate)
        made.append(face)
        return face

    yield make
    for face in made:
        await face.host.close()
