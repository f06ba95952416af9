"""GoMail: a Gmail-like replica of REAL's GoMail clone (inbox, read/unread, stars, labels, compose,
reply, forward, search, snooze, archive, spam, trash), served under /gomail/.

Pages are server-rendered; every state change is a form post an agent can trigger from the page
(toolbar buttons over checkbox selections, row buttons, menus, the compose window), followed by a
redirect back to the list or conversation it came from. The store and its rules live in
`mailbox.py` (changes), `views.py` (folders, search, pages) and `compose.py` (sending, drafts), the
data in `data.py`, the oracles in `oracles.py`.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.sites.gomail import compose, mailbox, views
from halo.sites.gomail.compose import Draft
from halo.sites.gomail.data import CONTACTS, TODAY, USER
from halo.sites.gomail.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.gomail.views import FOLDERS, MailError, View
from halo.sites.replica import Replica
from halo.sites.store import SiteSession

#: sidebar entries: (folder id, title, path, icon)
NAV_ITEMS = [
    ("inbox", "Inbox", "/", "inbox"),
    ("starred", "Starred", "/starred", "star_border"),
    ("snoozed", "Snoozed", "/snoozed", "snooze"),
    ("sent", "Sent", "/sent", "send"),
    ("drafts", "Drafts", "/drafts", "draft"),
    ("all", "All Mail", "/all", "mail"),
    ("spam", "Spam", "/spam", "report"),
    ("trash", "Trash", "/trash", "delete"),
]
_FACE_COLORS = ("#1a73e8", "#e8710a", "#188038", "#a142f4", "#d93025", "#12b5cb", "#f29900", "#5f6368", "#c5221f", "#007b83")


def _safe_back(value: Any, default: str = "/") -> str:
    """A site-relative path to return to (never another origin)."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return default
    return text


def _with_params(path: str, **params: str) -> str:
    return path + ("&" if "?" in path else "?") + urlencode(params)


def _view_from_path(path: str) -> View:
    """The list a conversation was opened from (for its "Back to …" link and position)."""
    parts = urlsplit(path)
    query = parse_qs(parts.query)
    page = int(query.get("page", ["1"])[0]) if query.get("page", ["1"])[0].isdigit() else 1
    if parts.path == "/search":
        return View(kind="search", query=query.get("q", [""])[0], page=page)
    if parts.path.startswith("/label/"):
        return View(kind="label", label=unquote(parts.path[len("/label/"):]), page=page)
    for folder_id, (_, folder_path) in FOLDERS.items():
        if parts.path == folder_path:
            return View(folder=folder_id, page=page)
    return View()


def _recipient_name(address: str) -> str:
    return "me" if address == USER.address else compose.contact_name(address)


class GoMail(Replica):
    site_id = "gomail"
    title = "GoMail"
    task_ids = frozenset(ORACLES)
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("inbox", "/"),
        ("email", "/email/8?back=/"),
        ("compose", "/?compose=1"),
        ("search", "/search?q=support"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        self.templates.env.filters.update(
            snippet=views.snippet,
            list_date=views.list_date,
            full_date=views.full_date,
            snooze_label=views.snooze_label,
            contact_name=compose.contact_name,
            recipient_name=_recipient_name,
            face_color=lambda email: _FACE_COLORS[int(hashlib.md5(email["from"].encode()).hexdigest(), 16) % len(_FACE_COLORS)],
        )

    # --- REAL contract ---------------------------------------------------------------------

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        # REAL's GoMail has one mailbox for every task (its eval scripts hard-code the ids), so
        # neither the task nor the seed changes it.
        return mailbox.initial_state()

    def differences(self, session: SiteSession) -> dict[str, Any]:
        return mailbox.differences(session.initial, session.state)

    def routes(self) -> list[BaseRoute]:
        folder_pages = [Route(path, self._folder_page(folder_id)) for folder_id, (_, path) in FOLDERS.items()]
        return [
            *folder_pages,
            Route("/label/{name:path}", self.label_page),
            Route("/search", self.search_page),
            Route("/email/{email_id}", self.email_page),
            Route("/api/bulk", self.bulk_action, methods=["POST"]),
            Route("/api/email/{email_id}/{action}", self.email_action, methods=["POST"]),
            Route("/api/send", self.send, methods=["POST"]),
            Route("/api/compose/close", self.compose_close, methods=["POST"]),
            Route("/api/compose/discard", self.compose_discard, methods=["POST"]),
            Route("/api/labels", self.create_label, methods=["POST"]),
            Route("/api/labels/delete", self.delete_label, methods=["POST"]),
            Route("/api/trash/empty", self.empty_trash, methods=["POST"]),
        ]

    # --- pages -----------------------------------------------------------------------------

    def _page(self, request: Request, template: str, *, here: str, active_nav: str, page_title: str, **extra: Any) -> Response:
        state = self.session(request).state
        ui = state["ui"]
        params = request.query_params
        retry = params.get("retry") == "1"
        if not retry:
            ui["compose"] = dict(mailbox.EMPTY_COMPOSE)  # a fresh form unless a send was just rejected
        compose_form = None
        if params.get("compose"):
            compose_form = dict(ui["compose"])
            draft = state["email"]["emails"].get(params.get("draft", ""))
            if draft is not None and draft["draft"] and not retry:
                compose_form.update(to=", ".join(draft["to"]), cc=", ".join(draft["cc"]), bcc=", ".join(draft["bcc"]),
                               subject=draft["subject"], body=views.plain_text(draft["content"]), draftId=draft["id"])
        snackbar = ui["snackbar"]["message"] if ui["snackbar"]["open"] else ""
        response = self.render(
            request, template,
            page_title=page_title, active_nav=active_nav, back_here=here, compose=compose_form, snackbar=snackbar,
            compose_href=self.url(_with_params(here, compose="1")), nav_items=NAV_ITEMS,
            counts=views.folder_counts(state), contacts=CONTACTS, label_names=views.label_names(state),
            snooze_options=views.snooze_options(), default_snooze_date=(TODAY + timedelta(days=1)).isoformat(),
            in_inbox=lambda email: views.in_folder(email, "inbox"),
            **extra,
        )
        ui["snackbar"]["open"] = False  # shown once, like Gmail's toast; the message stays in the store
        return response

    def _list(self, request: Request, view: View) -> Response:
        state = self.session(request).state
        if view.kind != "search":
            mailbox.clear_search_box(state)
        page = views.page_of(state, view)
        here = view.path(page.page)

        def open_href(email: dict[str, Any]) -> str:
            if email["draft"]:
                return self.url(_with_params(here, compose="1", draft=email["id"]))
            return self.url(f"/email/{email['id']}?" + urlencode({"back": here}))

        active = view.folder if view.kind == "folder" else (f"label:{view.label}" if view.kind == "label" else "")
        return self._page(request, "gomail_list.html", here=here, active_nav=active, page_title=view.title,
                          view=view, page=page, open_href=open_href)

    def _folder_page(self, folder_id: str):
        async def handler(request: Request) -> Response:
            return self._list(request, View(folder=folder_id, page=self._page_number(request)))

        handler.__name__ = f"{folder_id}_page"
        return handler

    @staticmethod
    def _page_number(request: Request) -> int:
        raw = request.query_params.get("page", "1")
        return int(raw) if raw.isdigit() and int(raw) > 0 else 1

    async def label_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in views.label_names(self.session(request).state):
            return self._redirect("/")
        return self._list(request, View(kind="label", label=name, page=self._page_number(request)))

    async def search_page(self, request: Request) -> Response:
        text = request.query_params.get("q", "").strip()
        if not text:
            return self._redirect("/")
        state = self.session(request).state
        view = mailbox.run_search(state, text)
        return self._list(request, View(kind="search", query=view.query, page=self._page_number(request)))

    async def email_page(self, request: Request) -> Response:
        state = self.session(request).state
        email_id = request.path_params["email_id"]
        back = _safe_back(request.query_params.get("back"))
        try:
            email = mailbox.open_email(state, email_id)
        except MailError as exc:
            mailbox.notify(state, str(exc))
            return self._redirect(back)
        if email["draft"]:
            return self._redirect(_with_params(back, compose="1", draft=email_id))
        emails = state["email"]["emails"]
        replies = [e for e in emails.values() if e.get("inReplyTo") == email_id and e["isReply"] and not (e["trash"] or e["draft"])]
        thread = [email, *sorted(replies, key=lambda e: (e["date"], e["time"], int(e["id"])))]
        back_view = _view_from_path(back)
        listed = [e["id"] for e in views.emails_in(state, back_view)]
        position = f"{listed.index(email_id) + 1} of {len(listed)}" if email_id in listed else ""
        here = f"/email/{email_id}?" + urlencode({"back": back})
        reply = None
        mode = "forward" if request.query_params.get("forward") else ("reply" if request.query_params.get("reply") else "")
        if mode:
            saved = state["ui"]["compose"]
            if request.query_params.get("retry") == "1":
                reply = {"mode": mode, "to": saved["to"], "subject": saved["subject"], "body": saved["body"], "error": saved["error"]}
            else:
                prefix = "Fwd: " if mode == "forward" else "Re: "
                subject = email["subject"] if email["subject"].lower().startswith(prefix.lower()) else prefix + email["subject"]
                to = "" if mode == "forward" else (email["from"] if email["from"] != USER.address else ", ".join(email["to"]))
                reply = {"mode": mode, "to": to, "subject": subject, "body": "", "error": ""}
        return self._page(request, "gomail_email.html", here=here, active_nav=back_view.folder if back_view.kind == "folder" else "",
                          page_title=email["subject"] or "(no subject)", email=email, thread=thread, back=back,
                          back_title=back_view.title, position=position, reply=reply)

    # --- actions ---------------------------------------------------------------------------

    def _redirect(self, path: str) -> RedirectResponse:
        return RedirectResponse(self.url(path), status_code=303)

    @staticmethod
    def _view_from_form(form) -> View:
        kind = str(form.get("kind", "folder"))
        page = str(form.get("page", "1"))
        if kind == "search":
            return View(kind="search", query=str(form.get("q", "")), page=int(page) if page.isdigit() else 1)
        if kind == "label":
            return View(kind="label", label=str(form.get("label", "")), page=int(page) if page.isdigit() else 1)
        folder = str(form.get("folder", "inbox"))
        return View(folder=folder if folder in FOLDERS else "inbox", page=int(page) if page.isdigit() else 1)

    async def bulk_action(self, request: Request) -> Response:
        form = await request.form()
        state = self.session(request).state
        view = self._view_from_form(form)
        action = str(form.get("action", ""))
        try:
            if action == "mark_all_read":
                mailbox.mark_all_read(state, view)
            else:
                if form.get("all_matching") == "1":
                    ids = [e["id"] for e in views.emails_in(state, view)]
                else:
                    ids = [str(i) for i in form.getlist("ids")]
                if action.startswith("snooze@"):
                    mailbox.apply_action(state, ids, "snooze", snooze_until=action.removeprefix("snooze@"))
                elif action == "snooze_custom":
                    until = f"{form.get('snooze_date', '')}T{form.get('snooze_time', '') or '08:00'}"
                    mailbox.apply_action(state, ids, "snooze", snooze_until=until)
                elif action.startswith("label@"):
                    mailbox.apply_action(state, ids, "label", label=action.removeprefix("label@"))
                else:
                    mailbox.apply_action(state, ids, action)
        except MailError as exc:
            mailbox.notify(state, str(exc))
        return self._redirect(view.path())

    async def email_action(self, request: Request) -> Response:
        form = await request.form()
        state = self.session(request).state
        email_id, action = request.path_params["email_id"], request.path_params["action"]
        back = _safe_back(form.get("back"))
        here = _safe_back(form.get("here"), back)
        if action not in mailbox.ACTIONS:
            mailbox.notify(state, f"Unknown action {action!r}.")
            return self._redirect(here)
        snooze_until = str(form.get("snooze_until", "") or "")
        if action == "snooze" and not snooze_until:
            snooze_until = f"{form.get('snooze_date', '')}T{form.get('snooze_time', '') or '08:00'}"
        try:
            mailbox.apply_action(state, [email_id], action, snooze_until=snooze_until, label=str(form.get("label", "")))
        except MailError as exc:
            mailbox.notify(state, str(exc))
            return self._redirect(here)
        # Gmail stays on the conversation for stars and labels and goes back to the list otherwise.
        return self._redirect(here if action in ("star", "unstar", "label") else back)

    @staticmethod
    def _draft_from_form(form) -> Draft:
        return Draft(
            to=str(form.get("to", "")), cc=str(form.get("cc", "")), bcc=str(form.get("bcc", "")),
            subject=str(form.get("subject", "")), body=str(form.get("body", "")),
            mode=str(form.get("mode", "new")) if form.get("mode") in ("new", "reply", "forward") else "new",
            in_reply_to=str(form.get("in_reply_to", "")), draft_id=str(form.get("draft_id", "")),
        )

    async def send(self, request: Request) -> Response:
        form = await request.form()
        state = self.session(request).state
        draft = self._draft_from_form(form)
        back = _safe_back(form.get("back"))
        try:
            compose.send(state, draft)
        except MailError as exc:
            compose.remember_rejected(state, draft, str(exc))
            if draft.mode in ("reply", "forward"):
                return self._redirect(_with_params(back, **{draft.mode: "1", "retry": "1"}) + "#reply")
            return self._redirect(_with_params(back, compose="1", retry="1"))
        return self._redirect(back)

    async def compose_close(self, request: Request) -> Response:
        form = await request.form()
        compose.save_draft(self.session(request).state, self._draft_from_form(form))
        return self._redirect(_safe_back(form.get("back")))

    async def compose_discard(self, request: Request) -> Response:
        form = await request.form()
        compose.discard_draft(self.session(request).state, str(form.get("draft_id", "")))
        return self._redirect(_safe_back(form.get("back")))

    async def create_label(self, request: Request) -> Response:
        form = await request.form()
        state = self.session(request).state
        try:
            mailbox.create_label(state, str(form.get("name", "")))
        except MailError as exc:
            mailbox.notify(state, str(exc))
        return self._redirect(_safe_back(form.get("back")))

    async def delete_label(self, request: Request) -> Response:
        form = await request.form()
        state = self.session(request).state
        try:
            mailbox.delete_label(state, str(form.get("name", "")))
        except MailError as exc:
            mailbox.notify(state, str(exc))
        return self._redirect("/")

    async def empty_trash(self, request: Request) -> Response:
        form = await request.form()
        mailbox.empty_trash(self.session(request).state)
        return self._redirect(_safe_back(form.get("back"), "/trash"))


__all__ = ["GoMail"]
