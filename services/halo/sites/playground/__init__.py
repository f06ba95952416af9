"""Playground: HALO's own small test site (not a REAL clone).

It exercises every kind of action an agent has (buttons, text fields, selects, links, scrolling,
drag and drop, a new tab) with a server-side store, so the env service can be tested and
benchmarked before, and independently of, the REAL replicas. Its tasks (suite "halo") are the
easy tasks the embedded policy learns on.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.agent import actions as A
from halo.sites.oracle import Target
from halo.sites.replica import Replica

TASKS_FILE = Path(__file__).parent / "tasks.json"
PLANS = ("free", "plus", "pro")
SECTIONS = ("join", "profile", "board", "more")
#: Sections of the home page that only some tasks' sessions show. The home page is every playground
#: task's start page, so a new task's form appears where its own task asks for it: the other tasks
#: (and the embedded policy's default training suite) see the page exactly as before.
TASK_SECTIONS = {"playground-newsletter": ("newsletter",)}
ITEMS = [f"Item {i:02d}" for i in range(1, 41)]


def load_tasks() -> list[dict[str, Any]]:
    return json.loads(TASKS_FILE.read_text())


class Playground(Replica):
    site_id = "playground"
    title = "HALO Playground"
    task_ids = frozenset(t["id"] for t in load_tasks())
    showcase_pages = [("home", "/"), ("page2", "/page2")]
    oracles = {
        "playground-signup": [A.ClickElement(Target("button", "Sign up"))],
        "playground-name": [A.Fill(Target("textbox", "Name"), "Ada Lovelace"), A.ClickElement(Target("button", "Save"))],
        "playground-plan": [A.SelectOption(Target("combobox", "Plan"), ("pro",)), A.ClickElement(Target("button", "Apply plan"))],
        "playground-finish": [A.ClickElement(Target("link", "Go to page 2")), A.ClickElement(Target("button", "Finish"))],
        "playground-drag": [A.Drag(Target("text", "Card"), Target("text", "Drop here"))],
        "playground-newsletter": [A.Fill(Target("textbox", "Email"), "ada@example.com"), A.ClickElement(Target("button", "Subscribe"))],
    }
    wrong_attempts = {
        "playground-name": {"another name": [A.Fill(Target("textbox", "Name"), "Ada Byron"), A.ClickElement(Target("button", "Save"))]},
        "playground-plan": {"another plan": [A.SelectOption(Target("combobox", "Plan"), ("plus",)), A.ClickElement(Target("button", "Apply plan"))]},
        "playground-finish": {"stops on page 2": [A.ClickElement(Target("link", "Go to page 2"))]},
        "playground-drag": {"drops on the board's heading": [A.Drag(Target("text", "Card"), Target("heading", "Board"))]},
        "playground-newsletter": {"another address": [A.Fill(Target("textbox", "Email"), "ada@example.org"),
                                                      A.ClickElement(Target("button", "Subscribe"))]},
    }

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        order = [*SECTIONS, *TASK_SECTIONS.get(task_id, ())]
        if seed:  # seed 0 is the reference layout; other seeds shuffle the sections (held-out layouts)
            random.Random(seed).shuffle(order)
        return {
            "layout": {"order": order},
            "router": {"location": {"pathname": "/"}},
            "signup": {"clicked": False, "count": 0},
            "profile": {"name": "", "plan": "free"},
            "board": {"dropped": False},
            "finish": {"done": False},
            "newsletter": {"email": "", "partners": False, "subscribed": False},
            "log": [],
        }

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/page2", self.page2),
            Route("/api/signup", self.signup, methods=["POST"]),
            Route("/api/profile", self.profile, methods=["POST"]),
            Route("/api/plan", self.plan, methods=["POST"]),
            Route("/api/drop", self.drop, methods=["POST"]),
            Route("/api/finish", self.finish_task, methods=["POST"]),
            Route("/api/newsletter", self.subscribe, methods=["POST"]),
        ]

    def _page(self, request: Request, path: str, template: str) -> Response:
        self.session(request).state["router"]["location"]["pathname"] = path
        return self.render(request, template, items=ITEMS, plans=PLANS)

    async def home(self, request: Request) -> Response:
        return self._page(request, "/", "playground_home.html")

    async def page2(self, request: Request) -> Response:
        return self._page(request, "/page2", "playground_page2.html")

    def _back(self, path: str = "/") -> Response:
        return RedirectResponse(self.url(path), status_code=303)

    async def signup(self, request: Request) -> Response:
        state = self.session(request).state
        state["signup"]["clicked"] = True
        state["signup"]["count"] += 1
        state["log"].append("signup")
        return self._back()

    async def profile(self, request: Request) -> Response:
        form = await request.form()
        state = self.session(request).state
        state["profile"]["name"] = str(form.get("name", ""))[:200]
        state["log"].append("profile")
        return self._back()

    async def plan(self, request: Request) -> Response:
        form = await request.form()
        plan = str(form.get("plan", ""))
        if plan not in PLANS:
            return JSONResponse({"error": f"unknown plan {plan!r}"}, status_code=400)
        state = self.session(request).state
        state["profile"]["plan"] = plan
        state["log"].append("plan")
        return self._back()

    async def drop(self, request: Request) -> Response:
        state = self.session(request).state
        state["board"]["dropped"] = True
        state["log"].append("drop")
        return JSONResponse({"dropped": True})

    async def finish_task(self, request: Request) -> Response:
        state = self.session(request).state
        state["finish"]["done"] = True
        state["log"].append("finish")
        return self._back("/page2")

    async def subscribe(self, request: Request) -> Response:
        """The newsletter form: the address and the partner-offers box, as submitted."""
        form = await request.form()
        newsletter = self.session(request).state["newsletter"]
        newsletter["email"] = str(form.get("email", "")).strip()[:200]
        newsletter["partners"] = form.get("partners") == "on"   # a checkbox is sent only when ticked
        newsletter["subscribed"] = True
        self.session(request).state["log"].append("newsletter")
        return self._back()
