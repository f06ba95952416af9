"""GoCalendar: a Google-Calendar-like replica of REAL's GoCalendar clone (day, week, month and
schedule views, search, an event card per event, a full-page editor for events and tasks with
dates, times, all-day, repeat, location, guests, colour and description, deletion with Undo and
the "this / following / all" choice for repeating events), served under /gocalendar/.

Pages are server-rendered; every change is a form post an agent can trigger from the page,
followed by a redirect. The store and its rules live in `events.py`, what the pages show in
`views.py`, times in `clock.py`, repeat rules in `recurrence.py`, the data in `data.py` and the
oracles in `oracles.py`.
"""

from __future__ import annotations

from datetime import date, time, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.sites.gocalendar import events, recurrence, views
from halo.sites.gocalendar.clock import clock, from_iso, hour_label, long_day, parse_clock, time_range
from halo.sites.gocalendar.data import CALENDARS, CONTACTS, EVENT_COLORS, TODAY, TZ_LABEL
from halo.sites.gocalendar.events import CalendarError, EventForm, Occurrence
from halo.sites.gocalendar.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.gocalendar.views import VIEW_KEYS, VIEW_NAMES, VIEWS, view_path
from halo.sites.replica import Replica
from halo.sites.store import SiteSession

_STATUS_TEXT = {"accepted": "Accepted", "declined": "Declined", "tentative": "Maybe", "needsAction": "Awaiting reply"}
#: the editor's time suggestions, every 15 minutes like Google's drop-down
TIME_CHOICES = [clock(time(h, m)) for h in range(24) for m in (0, 15, 30, 45)]


def _safe_back(value: Any, default: str = "/") -> str:
    """A site-relative path to return to (never another origin)."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return default
    return text


def _with_params(path: str, **params: str) -> str:
    """`path` with these query parameters set (replacing any of the same name)."""
    parts = urlsplit(path)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in params]
    query += [(k, v) for k, v in params.items() if v != ""]
    return parts.path + ("?" + urlencode(query) if query else "")


def _without_params(path: str, *names: str) -> str:
    parts = urlsplit(path)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in names]
    return parts.path + ("?" + urlencode(query) if query else "")


def _view_of(path: str) -> str:
    """The view a page path shows ("week" for "/", search and anything else)."""
    bits = urlsplit(path).path.strip("/").split("/")
    return bits[1] if len(bits) >= 2 and bits[0] == "r" and bits[1] in VIEWS else "week"


class GoCalendar(Replica):
    site_id = "gocalendar"
    title = "GoCalendar"
    task_ids = frozenset(ORACLES)
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("week", "/"),
        ("event", "/r/week/2024/7/14?eid=event-29&on=2024-07-17"),
        ("day", "/r/day/2024/7/17"),
        ("month", "/r/month/2024/7/1"),
        ("schedule", "/r/schedule/2024/7/14"),
        ("editor", "/r/eventedit?date=2024-07-17&back=/r/week/2024/7/14"),
        ("editor-existing", "/r/eventedit/event-29?back=/r/week/2024/7/14"),
        ("search", "/r/search?q=project+sync"),
    ]

    # --- REAL contract ---------------------------------------------------------------------

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        # One calendar for every task: the goals' "Wednesday", "Monday morning" and "tonight" all
        # refer to the replica's fixed week (data.py), so neither the task nor the seed changes it.
        return events.initial_state()

    def differences(self, session: SiteSession) -> dict[str, Any]:
        return events.differences(session.initial, session.state)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/r", self.home),
            Route("/r/search", self.search_page),
            Route("/r/eventedit", self.new_item_page),
            Route("/r/eventedit/{item_id}", self.edit_item_page),
            Route("/r/{view}", self.view_page),
            Route("/r/{view}/{year:int}/{month:int}/{day:int}", self.view_page),
            Route("/api/items", self.create_item, methods=["POST"]),
            Route("/api/items/{item_id}", self.update_item, methods=["POST"]),
            Route("/api/events/{event_id}/delete", self.delete_event, methods=["POST"]),
            Route("/api/tasks/{task_id}/toggle", self.toggle_task, methods=["POST"]),
            Route("/api/tasks/{task_id}/delete", self.delete_task, methods=["POST"]),
            Route("/api/undo", self.undo, methods=["POST"]),
        ]

    # --- pages -----------------------------------------------------------------------------

    def _popover(self, state: dict, request: Request, back: str) -> tuple[dict | None, dict | None]:
        """The event card (?eid=…&on=…) and, for ?confirm=delete on a repeating event, the scope dialog."""
        params = request.query_params
        item_id, on = params.get("eid", ""), params.get("on", "")
        if not item_id:
            return None, None
        occ = events.find_occurrence(state, item_id, on)
        if occ is None:
            return None, None
        item = occ.item
        recurring = occ.kind == "event" and bool(item.get("recurrence"))
        on = occ.on.isoformat()
        if params.get("confirm") == "delete" and recurring:
            return None, {"item_id": item_id, "on": on, "cancel_href": _with_params(back, eid=item_id, on=on)}
        calendar_id = views.calendar_id(occ)
        guests = [dict(g, status_text=_STATUS_TEXT.get(g["status"], "")) for g in item.get("guests", [])]
        card = {
            "item_id": item_id, "on": on, "kind": occ.kind, "title": views.title_of(occ), "when": _card_when(occ),
            "recurrence": recurrence.describe(item.get("recurrence") or "", from_iso(item["start"]).date()) if recurring else "",
            "location": item.get("location", ""), "guests": guests, "description": item.get("description", ""),
            "calendar_name": next((name for cid, name, _, _ in CALENDARS if cid == calendar_id), ""),
            "color": views.item_color(state, occ), "editable": calendar_id in ("primary", "tasks"), "recurring": recurring,
            "completed": bool(item.get("completed")),
            "edit_href": _with_params(f"/r/eventedit/{item_id}", back=back),
            "confirm_href": _with_params(back, eid=item_id, on=on, confirm="delete"),
            "meeting_id": item.get("meetingId") if guests else "",
        }
        return card, None

    def _page(self, request: Request, template: str, *, view: str, focus: date, back: str, page_title: str,
              search_query: str = "", **extra: Any) -> Response:
        state = self.session(request).state
        popover, confirm_delete = self._popover(state, request, back)
        snackbar = dict(state["ui"]["snackbar"]) if state["ui"]["snackbar"]["open"] else None
        try:
            mini_anchor = date.fromisoformat(request.query_params.get("mini", "") + "-01")
        except ValueError:
            mini_anchor = focus
        mini = views.mini_month(mini_anchor)
        create_params = {"date": focus.isoformat() if view == "day" or focus != TODAY else TODAY.isoformat(), "back": back}
        shortcuts = {
            "c": "/r/eventedit?" + urlencode(create_params), "t": view_path(view, TODAY),
            "d": view_path("day", focus), "w": view_path("week", focus), "m": view_path("month", focus),
            "a": view_path("schedule", focus), "j": view_path(view, views.step(view, focus, 1)),
            "k": view_path(view, views.step(view, focus, -1)),
        }
        shortcuts["n"], shortcuts["p"] = shortcuts["j"], shortcuts["k"]
        response = self.render(
            request, template,
            page_title=page_title, view=view, view_name=VIEW_NAMES[view], focus=focus, today=TODAY,
            today_label=long_day(TODAY), headline=views.headline(view, focus),
            prev_href=view_path(view, views.step(view, focus, -1)), next_href=view_path(view, views.step(view, focus, 1)),
            prev_label=views.step_label(view, -1), next_label=views.step_label(view, 1), today_href=view_path(view, TODAY),
            view_links=[(VIEW_NAMES[v], view_path(v, focus), VIEW_KEYS[v]) for v in VIEWS],
            mini=mini, mini_prev_href=_with_params(back, mini=mini.previous.strftime("%Y-%m")),
            mini_next_href=_with_params(back, mini=mini.following.strftime("%Y-%m")),
            calendars=[{"id": cid, "name": name, "color": color, "section": section} for cid, name, color, section in CALENDARS],
            snackbar=snackbar, popover=popover, confirm_delete=confirm_delete, back=back, search_query=search_query,
            create_event_href="/r/eventedit?" + urlencode(create_params),
            create_task_href="/r/eventedit?" + urlencode({**create_params, "type": "task"}),
            shortcuts=shortcuts, tz_label=TZ_LABEL, hour_px=views.HOUR_PX, hour_label=hour_label, long_day=long_day,
            day_href=lambda d: view_path("day", d), goto_href=lambda d: view_path(view, d),
            open_href=lambda chip: _with_params(back, eid=chip.item_id, on=chip.on),
            **extra,
        )
        state["ui"]["snackbar"]["open"] = False  # shown once; the message stays in the store
        return response

    async def home(self, request: Request) -> Response:
        return self._view(request, "week", TODAY)

    async def view_page(self, request: Request) -> Response:
        view = request.path_params["view"]
        if view not in VIEWS:
            return self._redirect("/")
        if "year" in request.path_params:
            try:
                focus = date(request.path_params["year"], request.path_params["month"], request.path_params["day"])
            except ValueError:
                return self._redirect(view_path(view, TODAY))
        else:
            focus = TODAY
        return self._view(request, view, focus)

    def _view(self, request: Request, view: str, focus: date) -> Response:
        state = self.session(request).state
        back = view_path(view, focus)
        if view in ("day", "week"):
            first, last = views.range_of(view, focus)
            days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
            title = f"Week of {first.strftime('%B')} {first.day}, {first.year}" if view == "week" else f"{long_day(focus)}, {focus.year}"
            return self._page(request, "gocalendar_grid.html", view=view, focus=focus, back=back, page_title=title,
                              grid=views.time_grid(state, days))
        if view == "month":
            return self._page(request, "gocalendar_month.html", view=view, focus=focus, back=back,
                              page_title=f"{focus.strftime('%B')} {focus.year}", weeks=views.month_weeks(state, focus))
        return self._page(request, "gocalendar_schedule.html", view=view, focus=focus, back=back,
                          page_title=f"Schedule from {long_day(focus)}", days=views.schedule(state, focus))

    async def search_page(self, request: Request) -> Response:
        text = " ".join(request.query_params.get("q", "").split())
        if not text:
            return self._redirect("/")
        state = self.session(request).state
        hits = events.search(state, text, TODAY)
        groups: dict[date, list] = {}
        for chip in views.chips_for(state, hits):
            groups.setdefault(chip.occ.first_day, []).append(chip)
        days = [views.ScheduleDay(day, chips) for day, chips in sorted(groups.items())]
        return self._page(request, "gocalendar_schedule.html", view="schedule", focus=TODAY,
                          back="/r/search?" + urlencode({"q": text}), page_title=f"Search: {text}", search_query=text, days=days)

    def _editor(self, request: Request, form: EventForm, *, mode: str, action: str, back: str,
                item: dict | None = None, status_code: int = 200) -> Response:
        repeat_options = []
        if form.kind == "event":
            try:
                start_day = date.fromisoformat(form.start_date)
            except ValueError:
                start_day = TODAY
            repeat_options = [(c, recurrence.choice_label(c, start_day)) for c in recurrence.REPEAT_CHOICES]
            if form.repeat == "keep" and item is not None:
                repeat_options.append(("keep", recurrence.describe(item["recurrence"], from_iso(item["start"]).date())))
        tab_params = {"date": form.start_date, "back": back}
        title = ("New task" if form.kind == "task" else "New event") if mode == "new" else f"Edit: {form.title or '(No title)'}"
        response = self.render(
            request, "gocalendar_edit.html",
            page_title=title, form=form, mode=mode, action=action, back=back, repeat_options=repeat_options,
            colors=EVENT_COLORS, contacts=CONTACTS, time_choices=TIME_CHOICES, tz_label=TZ_LABEL,
            guests=item.get("guests", []) if item else [],
            recurring_note="Changes apply to every event in this series." if item and item.get("recurrence") else "",
            event_tab_href="/r/eventedit?" + urlencode({**tab_params, "type": "event"}),
            task_tab_href="/r/eventedit?" + urlencode({**tab_params, "type": "task"}),
        )
        response.status_code = status_code
        return response

    async def new_item_page(self, request: Request) -> Response:
        params = request.query_params
        kind = "task" if params.get("type") == "task" else "event"
        try:
            day = date.fromisoformat(params.get("date", ""))
        except ValueError:
            day = TODAY
        at = parse_clock(params.get("time", "")) if params.get("time") else None
        back = _safe_back(params.get("back"))
        form = EventForm.new(kind, day, at)
        form.title = params.get("title", "")[:200]
        return self._editor(request, form, mode="new", action="/api/items", back=back)

    async def edit_item_page(self, request: Request) -> Response:
        state = self.session(request).state
        item_id = request.path_params["item_id"]
        back = _safe_back(request.query_params.get("back"))
        cal = state["calendar"]
        if item_id in cal["myTasks"]:
            task = cal["myTasks"][item_id]
            return self._editor(request, EventForm.from_task(task), mode="edit", action=f"/api/items/{item_id}", back=back, item=task)
        event = cal["events"].get(item_id)
        if event is None or event["calendarId"] != "primary":
            events.notify(state, "This event can't be edited.")
            return self._redirect(back)
        return self._editor(request, EventForm.from_event(event), mode="edit", action=f"/api/items/{item_id}", back=back, item=event)

    # --- actions ---------------------------------------------------------------------------

    def _redirect(self, path: str) -> RedirectResponse:
        return RedirectResponse(self.url(path), status_code=303)

    @staticmethod
    def _form(form) -> EventForm:
        def text(name: str) -> str:
            return str(form.get(name, "") or "")

        return EventForm(
            kind="task" if text("kind") == "task" else "event", title=text("title"), start_date=text("start_date"),
            start_time=text("start_time"), end_date=text("end_date"), end_time=text("end_time"),
            all_day=text("all_day") in ("1", "on", "true"), repeat=text("repeat"), location=text("location"),
            description=text("description"), guests=text("guests"), color=text("color"),
        )

    def _after_save(self, back: str, item: dict) -> RedirectResponse:
        """Back to the view the editor was opened from, moved to the saved item's day."""
        day = from_iso(item["start"]).date()
        return self._redirect(view_path(_view_of(back), day))

    async def create_item(self, request: Request) -> Response:
        raw = await request.form()
        state = self.session(request).state
        form, back = self._form(raw), _safe_back(raw.get("back"))
        try:
            item = events.create(state, form)
        except CalendarError as exc:
            form.errors.append(str(exc))
            return self._editor(request, form, mode="new", action="/api/items", back=back, status_code=422)
        return self._after_save(back, item)

    async def update_item(self, request: Request) -> Response:
        raw = await request.form()
        state = self.session(request).state
        item_id = request.path_params["item_id"]
        form, back = self._form(raw), _safe_back(raw.get("back"))
        cal = state["calendar"]
        existing = cal["myTasks"].get(item_id) or cal["events"].get(item_id)
        if existing is None:
            events.notify(state, "This event no longer exists.")
            return self._redirect(back)
        form.kind = "task" if item_id in cal["myTasks"] else "event"
        try:
            item = events.update(state, item_id, form)
        except CalendarError as exc:
            form.errors.append(str(exc))
            return self._editor(request, form, mode="edit", action=f"/api/items/{item_id}", back=back, item=existing,
                                status_code=422)
        return self._after_save(back, item)

    async def delete_event(self, request: Request) -> Response:
        raw = await request.form()
        state = self.session(request).state
        back = _without_params(_safe_back(raw.get("back")), "eid", "on", "confirm")
        try:
            events.delete_event(state, request.path_params["event_id"], str(raw.get("scope", "all")), str(raw.get("on", "")))
        except CalendarError as exc:
            events.notify(state, str(exc))
        return self._redirect(back)

    async def toggle_task(self, request: Request) -> Response:
        raw = await request.form()
        state = self.session(request).state
        try:
            events.toggle_task(state, request.path_params["task_id"])
        except CalendarError as exc:
            events.notify(state, str(exc))
        return self._redirect(_without_params(_safe_back(raw.get("back")), "eid", "on", "confirm"))

    async def delete_task(self, request: Request) -> Response:
        raw = await request.form()
        state = self.session(request).state
        try:
            events.delete_task(state, request.path_params["task_id"])
        except CalendarError as exc:
            events.notify(state, str(exc))
        return self._redirect(_without_params(_safe_back(raw.get("back")), "eid", "on", "confirm"))

    async def undo(self, request: Request) -> Response:
        raw = await request.form()
        state = self.session(request).state
        try:
            events.undo(state)
        except CalendarError as exc:
            events.notify(state, str(exc))
        return self._redirect(_without_params(_safe_back(raw.get("back")), "eid", "on", "confirm"))


def _card_when(occ: Occurrence) -> str:
    """The card's line: "Wednesday, July 17 ⋅ 7 – 9pm", "Monday, August 5 – Friday, August 9"."""
    if occ.all_day:
        if occ.last_day > occ.first_day:
            return f"{long_day(occ.first_day)} – {long_day(occ.last_day)}"
        return long_day(occ.first_day)
    if occ.kind == "task":
        return f"{long_day(occ.first_day)} ⋅ {clock(occ.start, always_minutes=False)}"
    if occ.last_day > occ.first_day:
        return f"{long_day(occ.first_day)}, {clock(occ.start)} – {long_day(occ.last_day)}, {clock(occ.end)}"
    return f"{long_day(occ.first_day)} ⋅ {time_range(occ.start, occ.end)}"


__all__ = ["GoCalendar"]
