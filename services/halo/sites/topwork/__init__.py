"""TopWork: an Upwork-like replica of REAL's TopWork clone, client side, signed in as Sarah Johnson:
job posts (post-a-job form with size, duration, experience and contract-to-hire, remove, applicants),
talent search with saved talent, freelancer profiles (Save, Message, Invite to job, Hire with an
offer), messages with unread badges, and past hires with Rehire; served under /topwork/.

Pages are server-rendered and every change of state is a form an agent can operate. The store and
its rules live in `board.py`, the seed in `talent.py`, the oracles in `oracles.py`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from halo.sites.pages import StorePages, safe_back
from halo.sites.topwork import board
from halo.sites.topwork.board import FormError
from halo.sites.topwork.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.topwork.talent import (
    CATEGORIES, CLIENT, DURATIONS, FREELANCER_BY_ID, FREELANCERS, HIRE_CHOICES, LEVELS, SIZES, Freelancer,
)

TASK_IDS = frozenset(f"topwork-{n}" for n in (2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 21))
_OFFER_FIELDS = ("contractTitle", "hourlyRate", "startDate", "description")
_JOB_FIELDS = ("title", "description", "category", "skills", "estimateSize", "estimateTime", "estimateLevelExperience",
               "estimateHireOpportunity", "hourlyRateFrom", "hourlyRateTo")


def search_talent(query: str) -> list[Freelancer]:
    words = query.lower().replace(",", " ").split()
    return [f for f in FREELANCERS
            if all(w in f"{f.name} {f.title} {' '.join(f.skills)}".lower().replace("-", " ") or w in f.title.lower() for w in words)]


class TopWork(StorePages):
    site_id = "topwork"
    title = "TopWork"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    not_found_template = "topwork_not_found.html"
    showcase_pages = [
        ("jobs", "/"),
        ("post-job", "/jobs/new"),
        ("talent", "/talent?q=developer"),
        ("profile", "/freelancers/jasonmiller"),
        ("offer", "/freelancers/kevinpark/offer"),
        ("messages", "/messages/alexrodriguez"),
        ("hires", "/hires"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        self.templates.env.globals.update(client=CLIENT, freelancer_by_id=FREELANCER_BY_ID, sizes=SIZES, durations=DURATIONS,
                                          levels=LEVELS, hire_choices=HIRE_CHOICES, categories=CATEGORIES)

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        return board.initial_state()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.jobs_page),
            Route("/jobs/new", self.new_job),
            Route("/jobs/{job_id}", self.job_page),
            Route("/talent", self.talent),
            Route("/saved", self.saved_page),
            Route("/freelancers/{fid}", self.profile),
            Route("/freelancers/{fid}/invite", self.invite_page),
            Route("/freelancers/{fid}/offer", self.offer_page),
            Route("/messages", self.messages),
            Route("/messages/{fid}", self.messages),
            Route("/hires", self.hires),
            Route("/api/jobs", self.create_job, methods=["POST"]),
            Route("/api/jobs/remove", self.remove_job, methods=["POST"]),
            Route("/api/save", self.save, methods=["POST"]),
            Route("/api/message", self.message, methods=["POST"]),
            Route("/api/invite", self.invite, methods=["POST"]),
            Route("/api/offer", self.offer, methods=["POST"]),
        ]

    # --- helpers -------------------------------------------------------------------------------

    def _state(self, request: Request) -> dict[str, Any]:
        return self.session(request).state

    def page_context(self, state: dict[str, Any]) -> dict[str, Any]:
        return {"unread": sum(1 for c in state["messages"]["contactList"] if c["unread"]),
                "saved": set(state["saved"]["savedFreelancerIds"])}

    def _freelancer(self, request: Request) -> Freelancer | None:
        return FREELANCER_BY_ID.get(request.path_params["fid"])

    # --- pages ---------------------------------------------------------------------------------

    async def jobs_page(self, request: Request) -> Response:
        jobs = [j for j in self._state(request)["jobs"]["jobs"] if j["status"] != "closed"]
        return self.show(request, "/", "topwork_jobs.html", jobs=list(reversed(jobs)))

    async def job_page(self, request: Request) -> Response:
        job = next((j for j in self._state(request)["jobs"]["jobs"] if j["id"] == request.path_params["job_id"] and j["status"] != "closed"), None)
        if job is None:
            return self.not_found(request, "job post")
        return self.show(request, f"/jobs/{job['id']}", "topwork_job.html", job=job)

    async def new_job(self, request: Request, form: dict | None = None, errors: dict | None = None) -> Response:
        return self.show(request, "/jobs/new", "topwork_post_job.html", form=form or {}, errors=errors or {})

    async def talent(self, request: Request) -> Response:
        query = " ".join(request.query_params.get("q", "").split())[:100]
        return self.show(request, "/talent", "topwork_talent.html", query=query, found=search_talent(query))

    async def saved_page(self, request: Request) -> Response:
        ids = self._state(request)["saved"]["savedFreelancerIds"]
        return self.show(request, "/saved", "topwork_talent.html", query="", found=[FREELANCER_BY_ID[i] for i in ids],
                          saved_only=True)

    async def profile(self, request: Request) -> Response:
        f = self._freelancer(request)
        if f is None:
            return self.not_found(request, "freelancer")
        return self.show(request, f"/freelancers/{f.id}", "topwork_profile.html", f=f)

    async def invite_page(self, request: Request, form: dict | None = None, errors: dict | None = None) -> Response:
        f = self._freelancer(request)
        if f is None:
            return self.not_found(request, "freelancer")
        jobs = [j for j in self._state(request)["jobs"]["jobs"] if j["status"] == "published"]
        form = {"message": board.invite_text(f), "job": "", **(form or {})}
        return self.show(request, f"/freelancers/{f.id}/invite", "topwork_invite.html", f=f, jobs=jobs, form=form,
                          errors=errors or {})

    async def offer_page(self, request: Request, form: dict | None = None, errors: dict | None = None) -> Response:
        f = self._freelancer(request)
        if f is None:
            return self.not_found(request, "freelancer")
        rehire = next((h for h in self._state(request)["hires"]["pastHires"] if h["freelancerId"] == f.id), None)
        form = {"hourlyRate": str(f.rate), "startDate": "2024-07-22", "contractTitle": "", "description": "", **(form or {})}
        return self.show(request, f"/freelancers/{f.id}/offer", "topwork_offer.html", f=f, form=form, errors=errors or {},
                          rehire=rehire)

    async def messages(self, request: Request) -> Response:
        state = self._state(request)
        fid = request.path_params.get("fid", "")
        f = FREELANCER_BY_ID.get(fid) if fid else None
        if fid and f is None:
            return self.not_found(request, "conversation")
        if f is not None:
            board.open_chat(state, f.id)
        contacts = list(reversed(state["messages"]["contactList"]))
        return self.show(request, f"/messages/{f.id}" if f else "/messages", "topwork_messages.html", f=f,
                          contacts=contacts, chat=board.contact(state, f.id) if f else None)

    async def hires(self, request: Request) -> Response:
        return self.show(request, "/hires", "topwork_hires.html", hires=self._state(request)["hires"]["pastHires"])

    # --- actions (forms) -----------------------------------------------------------------------

    async def create_job(self, request: Request) -> Response:
        form = await request.form()
        values = {k: str(form.get(k, "")) for k in _JOB_FIELDS}
        draft = form.get("mode") == "draft"
        try:
            job = board.post_job(self._state(request), values, draft)
        except FormError as exc:
            return await self.new_job(request, form=values, errors=exc.errors)
        return self.redirect("/", f"{'Draft saved' if draft else 'Your job post is live'}: {job['title']}")

    async def remove_job(self, request: Request) -> Response:
        form = await request.form()
        job = board.remove_job(self._state(request), str(form.get("job", "")))
        return self.redirect("/", f"Removed “{job['title']}”" if job else "")

    async def save(self, request: Request) -> Response:
        form = await request.form()
        f = FREELANCER_BY_ID.get(str(form.get("freelancer", "")))
        back = safe_back(form.get("back"), "/talent")
        if f is None:
            return self.redirect(back)
        on = board.toggle_saved(self._state(request), f.id)
        return self.redirect(back, f"{f.name} {'saved' if on else 'removed from saved talent'}")

    async def message(self, request: Request) -> Response:
        form = await request.form()
        f = FREELANCER_BY_ID.get(str(form.get("freelancer", "")))
        if f is None:
            return self.redirect("/messages")
        board.send_message(self._state(request), f, str(form.get("text", "")))
        return self.redirect(f"/messages/{f.id}")

    async def invite(self, request: Request) -> Response:
        form = await request.form()
        f = FREELANCER_BY_ID.get(str(form.get("freelancer", "")))
        if f is None:
            return self.redirect("/talent")
        values = {"job": str(form.get("job", "")), "message": str(form.get("message", ""))}
        try:
            board.invite(self._state(request), f, values["job"], values["message"])
        except FormError as exc:
            request.path_params["fid"] = f.id
            return await self.invite_page(request, form=values, errors=exc.errors)
        return self.redirect(f"/freelancers/{f.id}", f"Invitation sent to {f.name}")

    async def offer(self, request: Request) -> Response:
        form = await request.form()
        f = FREELANCER_BY_ID.get(str(form.get("freelancer", "")))
        if f is None:
            return self.redirect("/talent")
        values = {k: str(form.get(k, "")) for k in _OFFER_FIELDS}
        try:
            board.send_offer(self._state(request), f, values)
        except FormError as exc:
            request.path_params["fid"] = f.id
            return await self.offer_page(request, form=values, errors=exc.errors)
        return self.redirect(f"/messages/{f.id}", f"Offer sent to {f.name}")


__all__ = ["TopWork", "TASK_IDS"]
