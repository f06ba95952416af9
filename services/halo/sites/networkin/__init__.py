"""NetworkIn: a LinkedIn-like replica of REAL's NetworkIn clone, signed in as Div Garg (`divgarg`):
feed and post composer (send a post to connections), people and company search with history and
filters, profiles (Connect, Message), company pages (Follow), My Network, events (Attend) and
Messaging; served under /networkin/.

Pages are server-rendered and every change of state is a form an agent can operate. The store and
its rules live in `network.py`, the seed in `people.py`, the oracles in `oracles.py`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from halo.sites.networkin import network
from halo.sites.networkin.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.networkin.people import COMPANIES, COMPANY_BY_ID, EVENT_BY_ID, EVENTS, INDUSTRIES, LOCATIONS, MEMBER_BY_ID, ME
from halo.sites.pages import StorePages, safe_back
from halo.sites.store import SiteSession

TASK_IDS = frozenset(f"networkin-{n}" for n in (1, 5, 6, 10, 11, 13, 19, 25, 26, 27))
SEARCH_KINDS = ("people", "companies")


class NetworkIn(StorePages):
    site_id = "networkin"
    title = "NetworkIn"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    not_found_template = "networkin_not_found.html"
    showcase_pages = [
        ("feed", "/"),
        ("search", "/search/results/people?keywords=software+engineer"),
        ("profile", "/in/oliviamartinez"),
        ("network", "/mynetwork"),
        ("events", "/my-network/events?id=ai-agents-summit"),
        ("messaging", "/messaging/alexchen"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        self.templates.env.globals.update(me=ME, member_by_id=MEMBER_BY_ID, company_by_id=COMPANY_BY_ID,
                                          locations=LOCATIONS, industries=INDUSTRIES)

    # --- REAL contract -------------------------------------------------------------------------

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        return network.initial_state()

    def finish_payload(self, session: SiteSession) -> dict[str, Any]:
        """REAL's payload plus `env_state.initialfinaldiff`: eval_networkin_19.py reads the diff
        there (the key agisdk's leaderboard submission wraps /finish in), the other scripts read
        the top-level one or search the whole JSON, where a second copy changes no verdict."""
        payload = super().finish_payload(session)
        payload["env_state"] = {"initialfinaldiff": payload["initialfinaldiff"]}
        return payload

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.feed),
            Route("/feed/send", self.send_page),
            Route("/search/results/{kind}", self.search),
            Route("/in/{member_id}", self.profile),
            Route("/company/{company_id}", self.company),
            Route("/mynetwork", self.my_network),
            Route("/my-network/events", self.events),
            Route("/messaging", self.messaging),
            Route("/messaging/{member_id}", self.messaging),
            Route("/api/post", self.post, methods=["POST"]),
            Route("/api/share", self.share, methods=["POST"]),
            Route("/api/connect", self.connect, methods=["POST"]),
            Route("/api/follow", self.follow, methods=["POST"]),
            Route("/api/attend", self.attend, methods=["POST"]),
            Route("/api/message", self.message, methods=["POST"]),
        ]

    # --- pages ---------------------------------------------------------------------------------

    async def feed(self, request: Request) -> Response:
        state = self.session(request).state
        return self.show(request, "/", "networkin_feed.html", posts=network.posts_newest_first(state),
                          suggestions=[c for c in COMPANIES[:5]])

    async def send_page(self, request: Request) -> Response:
        state = self.session(request).state
        post = state["ui"]["feed"]["postDynamicData"].get(request.query_params.get("post", ""))
        if post is None:
            return self.not_found(request, "post")
        return self.show(request, "/feed/send", "networkin_send.html", post=post,
                          connections=[MEMBER_BY_ID[m] for m in state["contactList"] if m in MEMBER_BY_ID])

    async def search(self, request: Request) -> Response:
        kind = request.path_params["kind"]
        if kind not in SEARCH_KINDS:
            return self.not_found(request, "search")
        keywords = " ".join(request.query_params.get("keywords", "").split())[:100]
        location = request.query_params.get("location", "")
        location = location if location in LOCATIONS else ""
        industry = request.query_params.get("industry", "")
        industry = industry if industry in INDUSTRIES else ""
        state = self.session(request).state
        network.record_search(state, keywords, kind)
        people = network.search_people(keywords, location, industry) if kind == "people" else []
        companies = network.search_companies(keywords) if kind == "companies" else []
        return self.show(request, f"/search/results/{kind}", "networkin_search.html", kind=kind, keywords=keywords,
                          location=location, industry=industry, people=people, companies=companies)

    async def profile(self, request: Request) -> Response:
        member = MEMBER_BY_ID.get(request.path_params["member_id"])
        if member is None:
            return self.not_found(request, "profile")
        state = self.session(request).state
        return self.show(request, f"/in/{member.id}", "networkin_profile.html", member=member,
                          connected=network.is_connected(state, member.id) or member.id == ME.id,
                          grade=state["connectionGrades"].get(member.id, 3))

    async def company(self, request: Request) -> Response:
        company = COMPANY_BY_ID.get(request.path_params["company_id"])
        if company is None:
            return self.not_found(request, "company")
        employees = [m for m in MEMBER_BY_ID.values() if m.headline.lower().endswith(f" at {company.name.lower()}")]
        return self.show(request, f"/company/{company.id}", "networkin_company.html", company=company, employees=employees)

    async def my_network(self, request: Request) -> Response:
        state = self.session(request).state
        connections = [MEMBER_BY_ID[m] for m in state["contactList"] if m in MEMBER_BY_ID]
        suggested = [m for m in MEMBER_BY_ID.values() if m.id != ME.id and not network.is_connected(state, m.id)][:12]
        return self.show(request, "/mynetwork", "networkin_network.html", connections=connections, suggested=suggested,
                          companies=COMPANIES)

    async def events(self, request: Request) -> Response:
        event_id = request.query_params.get("id", "")
        event = EVENT_BY_ID.get(event_id)
        if event_id and event is None:
            return self.not_found(request, "event")
        return self.show(request, "/my-network/events", "networkin_events.html", events=EVENTS, event=event)

    async def messaging(self, request: Request) -> Response:
        state = self.session(request).state
        member_id = request.path_params.get("member_id", "")
        member = None
        if member_id:
            member = network.open_chat(state, member_id)
            if member is None:
                return self.not_found(request, "conversation")
        rooms = list(state["ui"]["messaging"]["chatroomData"].values())[::-1]
        return self.show(request, f"/messaging/{member.id}" if member else "/messaging", "networkin_messaging.html",
                          rooms=rooms, member=member, room=state["ui"]["messaging"]["chatroomData"].get(member_id))

    # --- actions (forms) -----------------------------------------------------------------------

    async def post(self, request: Request) -> Response:
        form = await request.form()
        post_id = network.create_post(self.session(request).state, str(form.get("text", "")))
        return self.redirect("/", "Your post was shared." if post_id else "Write something to post.")

    async def share(self, request: Request) -> Response:
        form = await request.form()
        post_id = str(form.get("post", ""))
        sent = network.share_post(self.session(request).state, post_id, [str(m) for m in form.getlist("to")])
        if not sent:
            return self.redirect(f"/feed/send?post={post_id}", "Choose at least one connection.")
        return self.redirect("/", f"Post sent to {sent} connection{'s' if sent != 1 else ''}.")

    async def connect(self, request: Request) -> Response:
        form = await request.form()
        member = MEMBER_BY_ID.get(str(form.get("member", "")))
        back = safe_back(form.get("back"))
        if member is not None and network.connect(self.session(request).state, member.id):
            return self.redirect(back, f"You are now connected with {member.name}.")
        return self.redirect(back)

    async def follow(self, request: Request) -> Response:
        form = await request.form()
        company = COMPANY_BY_ID.get(str(form.get("company", "")))
        back = safe_back(form.get("back"))
        on = form.get("on") == "1"
        if company is not None and network.follow(self.session(request).state, company.id, on):
            return self.redirect(back, f"{'You are following' if on else 'You unfollowed'} {company.name}.")
        return self.redirect(back)

    async def attend(self, request: Request) -> Response:
        form = await request.form()
        event = EVENT_BY_ID.get(str(form.get("event", "")))
        if event is None:
            return self.redirect("/my-network/events")
        network.attend(self.session(request).state, event.id)
        return self.redirect(f"/my-network/events?id={event.id}", f"See you at {event.title}.")

    async def message(self, request: Request) -> Response:
        form = await request.form()
        member = MEMBER_BY_ID.get(str(form.get("member", "")))
        if member is None:
            return self.redirect("/messaging")
        network.send_message(self.session(request).state, member.id, str(form.get("text", "")))
        return self.redirect(f"/messaging/{member.id}")


__all__ = ["NetworkIn", "TASK_IDS"]
