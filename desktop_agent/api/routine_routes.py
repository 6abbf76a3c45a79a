"""The API's routines: GET /api/routines, POST /api/routines/{name}/run (docs/routines.md).

The POST's answer is the run's SSE stream (the same frames as GET /api/tasks/{id}/events):
the connection owns the run it starts, so a secret parameter lives only as long as the
request, and a client that goes away ends the run stopped / user_stop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from desktop_agent.api.schemas import BadRequest, parse_body
from desktop_agent.core.routine import (
    NAME_PATTERN,
    RoutineError,
    RoutineNotFound,
    routine_to_file,
)
from desktop_agent.host.starts import RoutineRequest, admit

if TYPE_CHECKING:
    from desktop_agent.api.routes import Routes

MAX_PARAMS = 50
MAX_VALUE_CHARS = 2000  # type_text's limit


class RunRoutine(BaseModel):
    """POST /api/routines/{name}/run."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    params: dict[
        Annotated[str, Field(max_length=40)], Annotated[str, Field(max_length=MAX_VALUE_CHARS)]
    ] = Field(default_factory=dict, max_length=MAX_PARAMS)
    #: hand over to the settings' model on a mismatch (false: routine_mismatch)
    handover: bool = True


def install(app: web.Application, routes: Routes) -> None:
    async def list_routines(request: web.Request) -> web.StreamResponse:
        listed = await routes.agent.repo.list_routines()
        return web.json_response(
            [
                {
                    **routine_to_file(r),
                    "grants": list(r.grants),
                    "schedule": r.schedule.to_json() if r.schedule else None,
                }
                for r in listed
            ]
        )

    async def run_routine(request: web.Request) -> web.StreamResponse:
        from desktop_agent.api.routes import NotFound

        routes._refuse_if_controls_only()
        name = request.match_info["name"]
        body = parse_body(await request.read(), RunRoutine)
        if not NAME_PATTERN.fullmatch(name):
            raise NotFound(f"no routine named {name[:64]!r}")
        # admitted now (a stop-all from here on reaches it); the routine is looked up inside
        handle = admit(routes.agent, RoutineRequest(name, body.params, handover=body.handover))
        try:
            return await routes._stream(request, handle.events, handle.run_id)
        except RoutineNotFound:
            raise NotFound(f"no routine named {name[:64]!r}") from None
        except RoutineError as error:
            raise BadRequest(str(error)) from None

    app.router.add_route("GET", "/api/routines", list_routines)
    app.router.add_route("POST", "/api/routines/{name}/run", run_routine)
